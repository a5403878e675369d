package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/sync/singleflight"
)

// resolver answers names on behalf of sandboxes: static entries first,
// then the upstream resolvers, with a bounded cache. It is only ever asked
// about names a policy allows (callers check first): a disallowed name is
// never sent upstream, so DNS cannot carry data out.
type resolver struct {
	upstreams []netip.AddrPort
	static    map[string][]netip.Addr
	dial      func(ctx context.Context, network, address string) (net.Conn, error)
	inflight  chan struct{}
	sf        singleflight.Group

	mu    sync.Mutex
	cache map[cacheKey]cached
}

type cacheKey struct {
	name  string
	qtype uint16
}

type cached struct {
	msg *dns.Msg
	exp time.Time
}

const (
	maxCached    = 8192
	cacheMaxTTL  = 5 * time.Minute
	cacheNegTTL  = 30 * time.Second
	upstreamWait = 2 * time.Second
)

var errNoUpstream = errors.New("no upstream resolver is configured")

func newResolver(up []netip.AddrPort, static map[string][]netip.Addr, dial func(context.Context, string, string) (net.Conn, error), inflight int) *resolver {
	return &resolver{upstreams: up, static: static, dial: dial, inflight: make(chan struct{}, inflight),
		cache: map[cacheKey]cached{}}
}

// lookup returns the answer for name (normalised, no trailing dot) and
// qtype. The message is shared: callers must not modify it.
func (r *resolver) lookup(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	if addrs, ok := r.static[name]; ok {
		return staticAnswer(name, qtype, addrs), nil
	}
	k := cacheKey{name, qtype}
	now := time.Now()
	r.mu.Lock()
	c, ok := r.cache[k]
	r.mu.Unlock()
	if ok && now.Before(c.exp) {
		return c.msg, nil
	}
	v, err, _ := r.sf.Do(name+"/"+strconv.Itoa(int(qtype)), func() (any, error) {
		// One caller's cancellation must not fail the others waiting.
		m, err := r.exchange(context.WithoutCancel(ctx), name, qtype)
		if err != nil {
			return nil, err
		}
		r.put(k, m, time.Now())
		return m, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*dns.Msg), nil
}

func (r *resolver) put(k cacheKey, m *dns.Msg, now time.Time) {
	ttl := cacheMaxTTL
	if m.Rcode != dns.RcodeSuccess || len(m.Answer) == 0 {
		ttl = cacheNegTTL
	}
	for _, rr := range m.Answer {
		if t := time.Duration(rr.Header().Ttl) * time.Second; t < ttl {
			ttl = t
		}
	}
	if ttl <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cache) >= maxCached {
		for ck, c := range r.cache {
			if now.After(c.exp) {
				delete(r.cache, ck)
			}
		}
		for ck := range r.cache {
			if len(r.cache) < maxCached*9/10 {
				break
			}
			delete(r.cache, ck)
		}
	}
	r.cache[k] = cached{msg: m, exp: now.Add(ttl)}
}

// exchange asks the upstreams in turn (UDP, then TCP if truncated).
func (r *resolver) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	if len(r.upstreams) == 0 {
		return nil, errNoUpstream
	}
	select {
	case r.inflight <- struct{}{}:
		defer func() { <-r.inflight }()
	default:
		return nil, errors.New("too many DNS queries in flight")
	}
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	q.RecursionDesired = true
	q.SetEdns0(1232, false)
	var last error
	for _, up := range r.upstreams {
		m, err := r.ask(ctx, "udp", up, q)
		if err == nil && m.Truncated {
			m, err = r.ask(ctx, "tcp", up, q)
		}
		if err == nil {
			if m.Rcode != dns.RcodeSuccess && m.Rcode != dns.RcodeNameError {
				last = fmt.Errorf("upstream %s answered %s", up, dns.RcodeToString[m.Rcode])
				continue
			}
			return m, nil
		}
		last = err
	}
	return nil, last
}

func (r *resolver) ask(ctx context.Context, network string, up netip.AddrPort, q *dns.Msg) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, upstreamWait)
	defer cancel()
	c, err := r.dial(ctx, network, up.String())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	cl := &dns.Client{Net: network, UDPSize: 1232}
	m, _, err := cl.ExchangeWithConnContext(ctx, q.Copy(), &dns.Conn{Conn: c})
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %w", up, err)
	}
	if len(m.Question) != 1 || !equalFold(m.Question[0].Name, q.Question[0].Name) || m.Question[0].Qtype != q.Question[0].Qtype {
		return nil, fmt.Errorf("upstream %s answered another question", up)
	}
	return m, nil
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func staticAnswer(name string, qtype uint16, addrs []netip.Addr) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.Response, m.Authoritative, m.RecursionAvailable = true, true, true
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: dns.Fqdn(name), Rrtype: t, Class: dns.ClassINET, Ttl: 60}
	}
	for _, a := range addrs {
		switch {
		case a.Is4() && qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA), A: a.AsSlice()})
		case a.Is6() && qtype == dns.TypeAAAA:
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr(dns.TypeAAAA), AAAA: a.AsSlice()})
		}
	}
	return m
}

// addrsOf resolves name to the addresses the proxy may connect to: IPv4
// first, each address checked by ok. refused holds the reason of the first
// address that was not ok (an answer in a forbidden range: DNS rebinding).
func (r *resolver) addrsOf(ctx context.Context, name string, ok func(netip.Addr) (string, bool)) (addrs []netip.Addr, refused string, err error) {
	var errs []error
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		m, err := r.lookup(ctx, name, qt)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, rr := range m.Answer {
			a, isAddr := rrAddr(rr)
			if !isAddr {
				continue
			}
			if reason, good := ok(a); !good {
				if refused == "" {
					refused = a.String() + " is " + reason
				}
				continue
			}
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 && refused == "" && len(errs) == 2 {
		return nil, "", errors.Join(errs...)
	}
	return addrs, refused, nil
}

func rrAddr(rr dns.RR) (netip.Addr, bool) {
	switch v := rr.(type) {
	case *dns.A:
		a, ok := netip.AddrFromSlice(v.A)
		return a.Unmap(), ok
	case *dns.AAAA:
		a, ok := netip.AddrFromSlice(v.AAAA)
		return a, ok
	}
	return netip.Addr{}, false
}
