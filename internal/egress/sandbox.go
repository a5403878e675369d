package egress

import (
	"context"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

type hooks struct {
	sink    atomic.Pointer[Sink]
	metrics atomic.Pointer[Recorder]
	icpt    atomic.Pointer[Interceptor]
}

// sandbox is the proxy's state of one attached sandbox.
type sandbox struct {
	id      string
	addrs   []netip.Addr // guarded by Server.mu
	pol     atomic.Pointer[policy.Policy]
	answers answerCache
	events  limiter
	tenant  atomic.Pointer[tenantOf] // what the per-tenant limits count by
	asking  atomic.Bool              // a TenantOf lookup is running

	mu    sync.Mutex
	conns map[*tracked]struct{}
}

func newSandbox(id string) *sandbox {
	return &sandbox{id: id, conns: map[*tracked]struct{}{}, answers: answerCache{max: maxAnswers},
		events: limiter{rate: 20, burst: 200}}
}

func (sb *sandbox) policy() *policy.Policy { return sb.pol.Load() }

// tenantOf is a sandbox's tenant, as last learnt.
type tenantOf struct {
	key string
	at  time.Time
}

// tenantTTL is how long a tenant learnt is used before TenantOf is asked
// again (a warm-pool sandbox changes tenant when it is claimed).
const tenantTTL = 5 * time.Second

func (sb *sandbox) setTenant(t string) {
	k, at := "tenant:"+t, time.Now()
	if t == "" {
		k, at = "sandbox:"+sb.id, time.Time{} // not known: a tenant of its own, until TenantOf tells
	}
	sb.tenant.Store(&tenantOf{key: k, at: at})
}

// tenantKey is the key the per-tenant limits count sb by, asking lookup
// (if any) again once what is known is older than tenantTTL. One caller
// asks; the others use what is known meanwhile.
func (sb *sandbox) tenantKey(lookup func(ctx context.Context, id string) (string, error)) string {
	cur := sb.tenant.Load()
	if lookup != nil && (cur == nil || time.Since(cur.at) > tenantTTL) && sb.asking.CompareAndSwap(false, true) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		t, err := lookup(ctx, sb.id)
		cancel()
		sb.asking.Store(false)
		if err == nil && t != "" {
			sb.setTenant(t)
		} else if cur != nil {
			sb.tenant.Store(&tenantOf{key: cur.key, at: time.Now()}) // keep it; ask again later
		}
		cur = sb.tenant.Load()
	}
	if cur != nil {
		return cur.key
	}
	return "sandbox:" + sb.id
}

// tracked is one live proxied connection: what it is judged by, and what
// to close to end it.
type tracked struct {
	mu      sync.Mutex
	name    string         // the allowed name ("" if allowed as an address)
	dst     netip.AddrPort // where it goes (invalid until decided)
	closers []io.Closer
	dead    bool
}

// set records what the connection is judged by.
func (t *tracked) set(name string, dst netip.AddrPort) {
	t.mu.Lock()
	t.name, t.dst = name, dst
	t.mu.Unlock()
}

// add registers c to be closed with the connection; false (c closed) if
// it is already dead.
func (t *tracked) add(c io.Closer) bool {
	t.mu.Lock()
	if t.dead {
		t.mu.Unlock()
		_ = c.Close()
		return false
	}
	t.closers = append(t.closers, c)
	t.mu.Unlock()
	return true
}

// kill closes everything the connection holds.
func (t *tracked) kill() {
	t.mu.Lock()
	t.dead = true
	cs := t.closers
	t.closers = nil
	t.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}

// allowedBy reports whether p still allows the connection (undecided
// ones are judged when they are decided).
func (t *tracked) allowedBy(p *policy.Policy) bool {
	t.mu.Lock()
	name, dst := t.name, t.dst
	t.mu.Unlock()
	if !dst.IsValid() {
		return true
	}
	_, ok := p.Reach(name, int(dst.Port()), dst.Addr())
	return ok
}

// track registers a connection; false when the sandbox is gone (the
// limits are the Server's slots).
func (sb *sandbox) track(t *tracked) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.conns == nil {
		return false
	}
	sb.conns[t] = struct{}{}
	return true
}

func (sb *sandbox) untrack(t *tracked) {
	sb.mu.Lock()
	if sb.conns != nil {
		delete(sb.conns, t)
	}
	sb.mu.Unlock()
}

// recheck closes the connections p no longer allows.
func (sb *sandbox) recheck(p *policy.Policy) {
	sb.mu.Lock()
	conns := make([]*tracked, 0, len(sb.conns))
	for t := range sb.conns {
		conns = append(conns, t)
	}
	sb.mu.Unlock()
	for _, t := range conns {
		if !t.allowedBy(p) {
			t.kill()
		}
	}
}

// closeAll closes every connection and refuses new ones.
func (sb *sandbox) closeAll() {
	sb.mu.Lock()
	conns := sb.conns
	sb.conns = nil
	sb.mu.Unlock()
	for t := range conns {
		t.kill()
	}
}

// answerCache remembers which addresses the resolver gave this sandbox for
// which allowed names, so that a transparent connection to an address can
// be tied back to the name it was allowed as. Bounded; entries expire.
type answerCache struct {
	mu     sync.Mutex
	max    int
	byAddr map[netip.Addr]map[string]time.Time
	n      int
}

const (
	maxAnswers   = 4096
	answerMinTTL = 5 * time.Minute // clients cache longer than TTLs say
	answerMaxTTL = time.Hour
)

func (c *answerCache) add(name string, a netip.Addr, ttl time.Duration, now time.Time) {
	if ttl < answerMinTTL {
		ttl = answerMinTTL
	}
	if ttl > answerMaxTTL {
		ttl = answerMaxTTL
	}
	a = a.Unmap()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byAddr == nil {
		c.byAddr = map[netip.Addr]map[string]time.Time{}
	}
	if _, ok := c.byAddr[a][name]; !ok {
		if c.n >= c.max {
			c.evict(now)
		}
		c.n++
	}
	names := c.byAddr[a]
	if names == nil {
		names = map[string]time.Time{}
		c.byAddr[a] = names
	}
	names[name] = now.Add(ttl)
}

// evict drops expired entries, or (none expired) an arbitrary tenth.
func (c *answerCache) evict(now time.Time) {
	drop := func(pred func(time.Time) bool) {
		for a, names := range c.byAddr {
			for n, exp := range names {
				if pred(exp) {
					delete(names, n)
					c.n--
				}
			}
			if len(names) == 0 {
				delete(c.byAddr, a)
			}
		}
	}
	drop(func(exp time.Time) bool { return now.After(exp) })
	if c.n < c.max {
		return
	}
	budget := c.max / 10
	drop(func(time.Time) bool { budget--; return budget >= 0 })
}

// names returns the unexpired names that resolved to a.
func (c *answerCache) names(a netip.Addr, now time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for n, exp := range c.byAddr[a.Unmap()] {
		if now.Before(exp) {
			out = append(out, n)
		}
	}
	return out
}

func (c *answerCache) has(name string, a netip.Addr, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	exp, ok := c.byAddr[a.Unmap()][name]
	return ok && now.Before(exp)
}

// limiter is a token bucket for reported decisions.
type limiter struct {
	mu         sync.Mutex
	rate       float64 // tokens per second
	burst      float64
	tokens     float64
	last       time.Time
	suppressed int64
}

// take reports whether an event may be reported now, and how many were
// suppressed before it.
func (l *limiter) take(now time.Time) (bool, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last.IsZero() {
		l.tokens = l.burst
	} else {
		l.tokens += now.Sub(l.last).Seconds() * l.rate
		if l.tokens > l.burst {
			l.tokens = l.burst
		}
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	s := l.suppressed
	l.suppressed = 0
	return true, s
}
