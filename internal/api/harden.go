package api

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
)

// HTTP hardening: the middleware (Host and Origin checks, body limits, a
// guard against stalled request bodies), the http.Server settings
// (header timeout, idle timeout, header size) and a listener that caps
// connections, overall and per client IP.

// Defaults of the hardening; docs/auth.md lists them.
const (
	DefaultMaxBodyBytes      = 1 << 30
	DefaultBodyIdleTimeout   = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConns          = 4096
	DefaultMaxConnsPerIP     = 256
)

// HardenOptions configure Harden.
type HardenOptions struct {
	// AllowedHosts are the names the server answers to besides localhost,
	// loopback addresses and ListenAddr's host: exact names or "*.suffix";
	// "*" turns the Host check off (a proxy in front checks it).
	AllowedHosts []string
	// ListenAddr is the server's listen address. When its host is an
	// unspecified address (0.0.0.0, ::), any IP-literal Host is accepted:
	// DNS rebinding needs a name.
	ListenAddr string
	// AllowedOrigins are cross-site origins (scheme://host[:port]) allowed
	// to call the API from a browser; they get CORS answers. None by default.
	AllowedOrigins []string
	// MaxBodyBytes caps every request body (413 beyond it). 0: default;
	// JSON bodies are further capped at MaxJSONBody by decode.
	MaxBodyBytes int64
	// BodyIdleTimeout cuts off a request body that sends nothing for this
	// long. 0: default; negative: off.
	BodyIdleTimeout time.Duration
	// Streaming reports further requests whose body may legitimately
	// pause; the idle guard skips them, as it always skips WebSocket
	// upgrades and process stdin streams.
	Streaming func(*http.Request) bool
	Log       *slog.Logger
}

// Harden returns the hardening middleware; put it first (outermost) in
// Options.Middleware so that refused requests reach nothing else.
func Harden(o HardenOptions) func(http.Handler) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyIdleTimeout == 0 {
		o.BodyIdleTimeout = DefaultBodyIdleTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	hc := newHostCheck(o.AllowedHosts, o.ListenAddr)
	origins, _ := gate.NewOrigins(o.AllowedOrigins) // serve checked them; a bad entry allows nothing
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// DNS rebinding: a page on evil.example whose name is re-pointed
			// at this server would call it with Host: evil.example.
			if !hc.allowed(r.Host) {
				o.Log.Warn("refused request for an unknown host", "host", clipPath(r.Host), "remote", r.RemoteAddr)
				writeError(w, r, errs.New(errs.CodeForbidden, "host %q is not a name of this server (see paddock serve --allowed-host)", clipPath(r.Host)))
				return
			}
			// Cross-site requests and cross-site WebSocket hijacking: a
			// browser page elsewhere must not drive this API (or /mcp).
			if origin := r.Header.Get("Origin"); origin != "" {
				norm, allowed := origins.Allowed(origin)
				switch {
				case allowed:
					if cors(w, r, norm) {
						return
					}
				case gate.SameOrigin(origin, r.Host):
				default:
					o.Log.Warn("refused cross-site request", "origin", clipPath(origin), "remote", r.RemoteAddr)
					writeError(w, r, errs.New(errs.CodeForbidden, "cross-site request from origin %q refused (see paddock serve --allowed-origin)", clipPath(origin)))
					return
				}
			} else if gate.CrossSiteSubresource(r) {
				// A page's subresource request (img, script) that carries no
				// Origin; following a link here stays possible.
				writeError(w, r, errs.New(errs.CodeForbidden, "cross-site request refused"))
				return
			}
			// Oversized bodies are refused before a byte is read — except on
			// the routes that stream a body into a sandbox and bound it
			// themselves (the files API's upload cap, the disk quota).
			own := ownsBodyLimit(r)
			if !own && r.ContentLength > o.MaxBodyBytes {
				w.Header().Set("Connection", "close")
				writeError(w, r, errs.New(errs.CodeTooLarge, "request body over %d bytes", o.MaxBodyBytes))
				return
			}
			var guard *idleBody
			if r.Body != nil && r.Body != http.NoBody {
				if !own {
					r.Body = http.MaxBytesReader(w, r.Body, o.MaxBodyBytes)
				}
				if o.BodyIdleTimeout > 0 && !isWebSocket(r) && !isStdinStream(r) && (o.Streaming == nil || !o.Streaming(r)) {
					guard = &idleBody{ReadCloser: r.Body, rc: http.NewResponseController(w), idle: o.BodyIdleTimeout}
					r.Body = guard
				}
			}
			next.ServeHTTP(w, r)
			if guard != nil {
				guard.finish()
			}
		})
	}
}

// idleBody is the slowloris guard for request bodies (ReadHeaderTimeout
// covers the headers): before each read the connection's read deadline is
// pushed idle into the future, so a body that trickles on keeps going and
// one that stops is cut off. At EOF the deadline is lifted, because the
// server's background read (which notices a client hanging up) must not
// time out while a long handler runs.
type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration

	mu   sync.Mutex
	done bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if !b.done {
		_ = b.rc.SetReadDeadline(time.Now().Add(b.idle))
	}
	b.mu.Unlock()
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.mu.Lock()
		if !b.done {
			b.done = true
			_ = b.rc.SetReadDeadline(time.Time{})
		}
		b.mu.Unlock()
	}
	// Any other error leaves the deadline as it is: a lapsed deadline must
	// stay lapsed so that the server, discarding the rest of the body after
	// the handler, does not wait on the stalled client again.
	return n, err
}

// finish bounds the server's discard of an unread remainder by the same
// idle time.
func (b *idleBody) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Now().Add(b.idle))
	}
}

// isStdinStream reports a process's stdin stream (POST
// /v1/sandboxes/{id}/processes/{pid}/stdin): its body follows a human or
// an agent and may pause for as long as they do.
func isStdinStream(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/sandboxes/") &&
		strings.Contains(r.URL.Path, "/processes/") && strings.HasSuffix(r.URL.Path, "/stdin")
}

// ownsBodyLimit reports the routes whose handlers bound their bodies
// themselves, with limits above the general one: file writes and archive
// uploads (FileLimits.MaxUploadBytes and the sandbox's disk) and process
// stdin streams (bounded by what the process reads).
func ownsBodyLimit(r *http.Request) bool {
	p := r.URL.Path
	if r.Method == http.MethodPost && (p == "/v1/templates/import" || p == "/v1/templates/build") {
		return true // bounded by the template service (--max-upload) and the layer store
	}
	if !strings.HasPrefix(p, "/v1/sandboxes/") {
		return false
	}
	switch {
	case r.Method == http.MethodPut && strings.HasSuffix(p, "/files"):
		return true
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/files/archive"):
		return true
	}
	return isStdinStream(r)
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// cors answers for an allowed cross-site origin: the CORS headers, and the
// whole answer of a preflight (reported true). No credentials mode: keys
// travel in the Authorization header, never in cookies.
func cors(w http.ResponseWriter, r *http.Request, origin string) bool {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	h.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After, Location")
	return false
}

// splitHost is gate.SplitHost.
func splitHost(h string) (string, string) { return gate.SplitHost(h) }

type hostCheck struct {
	any      bool // "*": the check is off
	anyIP    bool // listening on an unspecified address
	names    map[string]bool
	suffixes []string // from "*.example.com": ".example.com"
}

func newHostCheck(allowed []string, listen string) *hostCheck {
	hc := &hostCheck{names: map[string]bool{"localhost": true}}
	for _, a := range allowed {
		a = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(a)), ".")
		switch {
		case a == "*":
			hc.any = true
		case strings.HasPrefix(a, "*."):
			hc.suffixes = append(hc.suffixes, a[1:])
		case a != "":
			h, _ := splitHost(a)
			hc.names[h] = true
		}
	}
	if listen != "" {
		h, _ := splitHost(listen)
		if ip := net.ParseIP(h); h == "" || (ip != nil && ip.IsUnspecified()) {
			hc.anyIP = true
		} else if h != "" {
			hc.names[h] = true
		}
	}
	return hc
}

func (hc *hostCheck) allowed(reqHost string) bool {
	if hc.any {
		return true
	}
	h, _ := splitHost(reqHost)
	if h == "" {
		return false
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || hc.anyIP || hc.names[ip.String()] || hc.names[h]
	}
	if hc.names[h] {
		return true
	}
	for _, s := range hc.suffixes {
		if strings.HasSuffix(h, s) && len(h) > len(s) {
			return true
		}
	}
	return false
}

// setRetryAfter sends Retry-After for errors that know when a retry can
// succeed (rate quotas: tenant.RateLimitError).
func setRetryAfter(w http.ResponseWriter, err error) {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(ra.RetryAfter().Seconds())), 10))
	}
}

// HTTPLimits are the server- and connection-level limits.
type HTTPLimits struct {
	ReadHeaderTimeout time.Duration // slowloris on headers; 0: default
	IdleTimeout       time.Duration // keep-alive connections; 0: default
	MaxHeaderBytes    int           // beyond it Go answers 431; 0: default
	MaxConns          int           // concurrent connections; 0: default, <0: none
	MaxConnsPerIP     int           // concurrent connections per client IP; 0: default, <0: none
}

func (l HTTPLimits) withDefaults() HTTPLimits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxConnsPerIP == 0 {
		l.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	return l
}

// NewHTTPServer returns the http.Server for h with l's timeouts and
// sizes. There is no whole-request ReadTimeout or WriteTimeout: uploads,
// exec streams and terminals may last long; the header timeout and the
// body idle guard bound what a client can hold without sending.
func NewHTTPServer(h http.Handler, l HTTPLimits, log *slog.Logger) *http.Server {
	l = l.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout, // slowloris: headers sent a byte at a time
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes, // oversized headers: 431
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// LimitListener caps ln's concurrent connections: beyond l.MaxConns Accept
// waits for one to close (the kernel's backlog queues the rest); beyond
// l.MaxConnsPerIP from one address the new connection is closed at once
// (answered 429 first if plain is set, i.e. no TLS), so that one client
// cannot take every slot. Behind a proxy every client has the proxy's
// address: raise or disable the per-IP cap there.
func LimitListener(ln net.Listener, l HTTPLimits, plain bool, log *slog.Logger) net.Listener {
	l = l.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ll := &limitListener{Listener: ln, perIP: l.MaxConnsPerIP, plain: plain, log: log,
		byIP: map[string]int{}, closed: make(chan struct{})}
	if l.MaxConns > 0 {
		ll.sem = make(chan struct{}, l.MaxConns)
	}
	return ll
}

type limitListener struct {
	net.Listener
	sem    chan struct{}
	perIP  int
	plain  bool
	log    *slog.Logger
	once   sync.Once
	closed chan struct{}

	mu   sync.Mutex
	byIP map[string]int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		if l.sem != nil {
			select {
			case l.sem <- struct{}{}:
			case <-l.closed:
				return nil, net.ErrClosed
			}
		}
		c, err := l.Listener.Accept()
		if err != nil {
			l.releaseSlot()
			return nil, err
		}
		ip := remoteIP(c.RemoteAddr())
		if !l.addIP(ip) {
			l.releaseSlot()
			l.log.Warn("refused connection: too many from one address", "remote", ip, "limit", l.perIP)
			go refuseConn(c, l.plain)
			continue
		}
		return &limitConn{Conn: c, l: l, ip: ip}, nil
	}
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

func (l *limitListener) releaseSlot() {
	if l.sem != nil {
		<-l.sem
	}
}

func (l *limitListener) addIP(ip string) bool {
	if l.perIP < 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byIP[ip] >= l.perIP {
		return false
	}
	l.byIP[ip]++
	return true
}

func (l *limitListener) dropIP(ip string) {
	if l.perIP < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byIP[ip]--; l.byIP[ip] <= 0 {
		delete(l.byIP, ip)
	}
}

func remoteIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

// refuseConn answers a refused plain-HTTP connection and closes it,
// spending at most a second on a client that does not read.
func refuseConn(c net.Conn, plain bool) {
	defer c.Close()
	if !plain {
		return
	}
	body := `{"error":{"code":"rate_limited","message":"too many connections from this address"}}` + "\n"
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s", len(body), body); err != nil {
		return
	}
	// Half-close and drain what the client already sent, so that closing
	// does not reset the connection before it reads the answer.
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}
}

type limitConn struct {
	net.Conn
	l    *limitListener
	ip   string
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.dropIP(c.ip)
		c.l.releaseSlot()
	})
	return err
}

// CloseWrite lets the server half-close as it does on a bare TCP
// connection.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
