package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

// Decision is one connection or DNS decision about a sandbox's traffic.
type Decision struct {
	Time    time.Time
	Sandbox string
	Kind    string // "connect" or "dns"
	Mode    string // the sandbox's network mode
	Via     string // "transparent", "explicit" or "dns"
	Name    string // destination name (SNI, Host, CONNECT target, DNS question) if known
	Addr    string // destination address, if known
	Port    int
	Allowed bool
	Reason  string // the allowlist entry that allowed it, or why it was refused
	// BytesUp and BytesDown are what went each way (allowed connections,
	// reported when they close).
	BytesUp, BytesDown int64
	Duration           time.Duration
	// Suppressed counts decisions of this sandbox not reported since the
	// previous one (a sandbox flooding the proxy is rate-limited here;
	// metrics still count everything).
	Suppressed int64
}

// Sink receives decisions (the composition root forwards them to the
// sandbox manager's Observer, hence the audit log). It is called on the
// connection's goroutine after the client has its answer, and must not
// block for long.
type Sink interface {
	Decision(ctx context.Context, d Decision)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, d Decision)

// Decision implements Sink.
func (f SinkFunc) Decision(ctx context.Context, d Decision) { f(ctx, d) }

// Recorder counts decisions (metrics.EgressRecorder has this method).
type Recorder interface {
	EgressDecision(allowed bool, mode string)
}

// ConnInfo describes an allowed connection the proxy is about to relay.
type ConnInfo struct {
	Sandbox string
	Name    string         // the name the destination was allowed (or resolved) as
	Addr    netip.AddrPort // where the proxy connects
	Via     string         // "transparent" or "explicit"
}

// Interceptor is the extension point for seeing inside allowed HTTP(S)
// connections (secret injection). The proxy calls Intercept once per
// allowed connection to a named destination, before any byte of it is
// forwarded; a nil Plan (the default, and what a nil Interceptor means)
// relays the connection untouched and TLS is never terminated.
type Interceptor interface {
	Intercept(ctx context.Context, c ConnInfo) (*Plan, error)
}

// Plan is how to handle one intercepted connection. The client must then
// speak HTTP/1.1, in TLS or not; anything else is refused.
type Plan struct {
	// ServerTLS terminates the client's TLS (a certificate for the name,
	// from a CA the sandbox trusts). Required for TLS clients. NextProtos
	// is forced to http/1.1.
	ServerTLS *tls.Config
	// UpstreamTLS re-originates TLS to the destination when the client
	// spoke TLS; ServerName defaults to ConnInfo.Name and NextProtos is
	// forced to http/1.1. Nil uses the system roots.
	UpstreamTLS *tls.Config
	// Request, if set, may change each request (its headers) before it
	// goes upstream; an error refuses the request and closes the
	// connection. The request's Host is already checked against the
	// allowed name and cannot be changed.
	Request func(*http.Request) error
}

// Options configure a Server.
type Options struct {
	Log *slog.Logger
	// Dial opens outbound connections from the host side: TCP to
	// destinations and UDP/TCP to upstream resolvers. Default: net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Upstreams answer allowed names; none: only Static names resolve.
	Upstreams []netip.AddrPort
	// Static names (--dns-host): answered without asking upstream. Their
	// addresses are still subject to the Guard.
	Static map[string][]netip.Addr
	// Guard refuses forbidden destination addresses. Required.
	Guard *policy.Guard
	// Sink, Metrics and Interceptor may be nil (and set later with the
	// Set methods).
	Sink        Sink
	Metrics     Recorder
	Interceptor Interceptor
	// Explicit, if set, reports whether a connection whose original
	// destination is dst addressed the proxy itself (when sandboxes reach
	// it at an address that is dnat'ed to where it listens). Without it,
	// only the listening address is.
	Explicit func(dst netip.AddrPort) bool
	// TenantOf, if set, tells the tenant of a sandbox (the store's
	// record); asked again every few seconds, as a warm-pool sandbox
	// changes tenant when it is claimed. Without it the tenant given to
	// Set is used.
	TenantOf func(ctx context.Context, sandbox string) (string, error)
	// Limits; zero values take defaults. Every pool is bounded in all, per
	// tenant and per sandbox, the tenant's share below the whole (a
	// sandbox registered without a tenant counts as a tenant of its own).
	MaxConns                 int           // proxied connections in all (8192)
	MaxConnsPerTenant        int           // per tenant (2048)
	MaxConnsPerSandbox       int           // per sandbox (1024)
	MaxDNSInFlight           int           // upstream queries in flight in all (1024)
	MaxDNSInFlightPerTenant  int           // DNS queries being answered, per tenant (128)
	MaxDNSInFlightPerSandbox int           // per sandbox (64)
	DialTimeout              time.Duration // one outbound connect (10 s)
	FirstByteTimeout         time.Duration // a new connection that must name its destination sends nothing (5 s)
	HeaderTimeout            time.Duration // first request / ClientHello when it names the destination (10 s)
	IdleTimeout              time.Duration // an explicit-proxy connection between requests (2 min)
}

// Server is the egress proxy and DNS resolver of every attached sandbox.
// A connection or query belongs to the sandbox whose address it comes
// from; nothing it sends can claim another identity.
type Server struct {
	o     Options
	log   *slog.Logger
	guard *policy.Guard
	res   *resolver
	conns *slots // proxied connections
	dnsQ  *slots // DNS queries being answered
	hooks hooks

	mu       sync.RWMutex
	bySource map[netip.Addr]*sandbox
	byID     map[string]*sandbox
	closed   bool

	lnMu      sync.Mutex
	listeners []net.Listener
	dnsSrv    []*dns.Server
	wg        sync.WaitGroup
}

// New returns a server; give it listeners with Serve.
func New(o Options) (*Server, error) {
	if o.Guard == nil {
		return nil, errors.New("egress: a Guard is required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{}).DialContext
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 8192
	}
	if o.MaxConnsPerTenant <= 0 {
		o.MaxConnsPerTenant = min(2048, o.MaxConns)
	}
	if o.MaxConnsPerSandbox <= 0 {
		o.MaxConnsPerSandbox = min(1024, o.MaxConnsPerTenant)
	}
	if o.MaxDNSInFlight <= 0 {
		o.MaxDNSInFlight = 1024
	}
	if o.MaxDNSInFlightPerTenant <= 0 {
		o.MaxDNSInFlightPerTenant = min(128, o.MaxDNSInFlight)
	}
	if o.MaxDNSInFlightPerSandbox <= 0 {
		o.MaxDNSInFlightPerSandbox = min(64, o.MaxDNSInFlightPerTenant)
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.FirstByteTimeout <= 0 {
		o.FirstByteTimeout = 5 * time.Second
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.FirstByteTimeout > o.HeaderTimeout {
		o.FirstByteTimeout = o.HeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	static := map[string][]netip.Addr{}
	for name, addrs := range o.Static {
		n, ok := policy.NormalizeName(name)
		if !ok {
			return nil, fmt.Errorf("egress: static name %q is not a valid host name", name)
		}
		for _, a := range addrs {
			static[n] = append(static[n], a.Unmap())
		}
	}
	s := &Server{o: o, log: o.Log, guard: o.Guard,
		conns:    newSlots("connections", o.MaxConns, o.MaxConnsPerTenant, o.MaxConnsPerSandbox),
		dnsQ:     newSlots("DNS queries in flight", o.MaxDNSInFlight, o.MaxDNSInFlightPerTenant, o.MaxDNSInFlightPerSandbox),
		bySource: map[netip.Addr]*sandbox{}, byID: map[string]*sandbox{}}
	s.res = newResolver(o.Upstreams, static, o.Dial, o.MaxDNSInFlight)
	s.hooks.sink.Store(&o.Sink)
	s.hooks.metrics.Store(&o.Metrics)
	s.hooks.icpt.Store(&o.Interceptor)
	return s, nil
}

// SetSink replaces the decision sink (nil: none).
func (s *Server) SetSink(k Sink) { s.hooks.sink.Store(&k) }

// SetMetrics replaces the decision counter (nil: none).
func (s *Server) SetMetrics(r Recorder) { s.hooks.metrics.Store(&r) }

// SetInterceptor replaces the interceptor (nil: none).
func (s *Server) SetInterceptor(i Interceptor) { s.hooks.icpt.Store(&i) }

// Set registers sandbox id of tenant, whose traffic comes from addrs,
// with policy p, or replaces the tenant and policy of a registered one:
// new connections follow it at once, and open connections it no longer
// allows are closed. The tenant is what the per-tenant limits count by
// ("": the sandbox is a tenant of its own).
func (s *Server) Set(id, tenant string, addrs []netip.Addr, p *policy.Policy) {
	s.mu.Lock()
	sb := s.byID[id]
	if sb == nil {
		sb = newSandbox(id)
		s.byID[id] = sb
	}
	sb.setTenant(tenant)
	for _, a := range sb.addrs {
		if s.bySource[a] == sb {
			delete(s.bySource, a)
		}
	}
	sb.addrs = nil
	for _, a := range addrs {
		a = a.Unmap()
		sb.addrs = append(sb.addrs, a)
		s.bySource[a] = sb
	}
	s.mu.Unlock()
	sb.pol.Store(p)
	sb.recheck(p)
}

// Remove forgets sandbox id and closes its connections.
func (s *Server) Remove(id string) {
	s.mu.Lock()
	sb := s.byID[id]
	if sb != nil {
		delete(s.byID, id)
		for _, a := range sb.addrs {
			if s.bySource[a] == sb {
				delete(s.bySource, a)
			}
		}
	}
	s.mu.Unlock()
	if sb != nil {
		sb.closeAll()
	}
}

// Use reports the proxied connections and the DNS queries being answered,
// in all and by tenant (metrics, tests).
func (s *Server) Use() (conns, dns SlotUse) { return s.conns.use(), s.dnsQ.use() }

// Policy returns the registered policy of sandbox id.
func (s *Server) Policy(id string) (*policy.Policy, bool) {
	s.mu.RLock()
	sb := s.byID[id]
	s.mu.RUnlock()
	if sb == nil {
		return nil, false
	}
	return sb.pol.Load(), true
}

func (s *Server) source(a netip.Addr) *sandbox {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bySource[a.Unmap().WithZone("")]
}

// Serve starts serving the proxy on each of proxy (sockets that receive
// the sandboxes' redirected and explicit TCP connections) and DNS on
// dnsUDP and dnsTCP. It returns at once; Close stops everything.
func (s *Server) Serve(proxy []net.Listener, dnsUDP []net.PacketConn, dnsTCP []net.Listener) error {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return errors.New("egress: server closed")
	}
	for _, ln := range proxy {
		s.listeners = append(s.listeners, ln)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.acceptLoop(ln)
		}()
	}
	h := dns.HandlerFunc(s.serveDNS)
	for _, pc := range dnsUDP {
		srv := &dns.Server{PacketConn: pc, Handler: h, UDPSize: 1232, ReadTimeout: 5 * time.Second}
		s.startDNS(srv)
	}
	for _, ln := range dnsTCP {
		srv := &dns.Server{Listener: ln, Handler: h, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
			MaxTCPQueries: 64, IdleTimeout: func() time.Duration { return 10 * time.Second }}
		s.startDNS(srv)
	}
	return nil
}

func (s *Server) startDNS(srv *dns.Server) {
	s.dnsSrv = append(s.dnsSrv, srv)
	// Wait until the server runs: a Shutdown that comes before it has
	// started is refused ("server not started"), and the server would
	// then serve on, holding Close's wait forever.
	started, ended := make(chan struct{}), make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	s.wg.Add(1)
	defer func() {
		select {
		case <-started:
		case <-ended:
		}
	}()
	go func() {
		defer s.wg.Done()
		defer close(ended)
		if err := srv.ActivateAndServe(); err != nil {
			s.mu.RLock()
			closed := s.closed
			s.mu.RUnlock()
			if !closed {
				s.log.Error("egress: DNS server stopped", "err", err)
			}
		}
	}()
}

// Close stops serving and closes every proxied connection.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	sbs := make([]*sandbox, 0, len(s.byID))
	for _, sb := range s.byID {
		sbs = append(sbs, sb)
	}
	s.mu.Unlock()
	s.lnMu.Lock()
	for _, ln := range s.listeners {
		_ = ln.Close()
	}
	for _, srv := range s.dnsSrv {
		_ = srv.Shutdown()
	}
	s.lnMu.Unlock()
	for _, sb := range sbs {
		sb.closeAll()
	}
	s.wg.Wait()
	return nil
}

// report emits a decision: always counted; logged and reported to the
// sink unless the sandbox is over its reporting rate (a sandbox looping
// over refused connections must not flood the log or the audit trail).
func (s *Server) report(ctx context.Context, sb *sandbox, d Decision) {
	ctx = context.WithoutCancel(ctx) // a decision is recorded even when its connection is gone
	if m := *s.hooks.metrics.Load(); m != nil {
		m.EgressDecision(d.Allowed, d.Mode)
	}
	ok, suppressed := sb.events.take(time.Now())
	if !ok {
		return
	}
	d.Suppressed = suppressed
	if d.Time.IsZero() {
		d.Time = time.Now()
	}
	level := slog.LevelInfo
	if d.Allowed {
		level = slog.LevelDebug
	}
	s.log.Log(ctx, level, "egress decision", "sandbox", d.Sandbox, "kind", d.Kind, "via", d.Via, "name", d.Name,
		"addr", d.Addr, "port", d.Port, "allowed", d.Allowed, "reason", d.Reason, "suppressed", d.Suppressed)
	if k := *s.hooks.sink.Load(); k != nil {
		k.Decision(ctx, d)
	}
}
