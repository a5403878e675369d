package console

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
)

// Prefix is where the console is served; Mount it as Prefix+"/" (and
// Prefix, which redirects).
const Prefix = "/ui"

// Auditor records console requests that the REST API does not see (sign-in,
// sign-out): Begin runs before the action and its failure refuses it (the
// same contract as the API's auditor, which satisfies this).
type Auditor interface {
	Begin(r *http.Request, p auth.Principal, route string) (end func(status int), err error)
}

// Options configure the console.
type Options struct {
	// Auth checks keys at sign-in and again on every push of a feed.
	Auth auth.Authenticator
	// Auditor, if set, records sign-ins and sign-outs (fail closed).
	Auditor Auditor
	// Sandboxes, if set, is watched for changes that the sandbox feeds
	// push (feed.go); without it feeds refresh every FallbackRefresh.
	Sandboxes Lister
	// Verifier, if set, checks the audit chain for POST /ui/audit/verify.
	Verifier Verifier
	// Upstream is the handler the page's API calls go to. Default: the
	// handler of the http.Server serving the request (the whole server,
	// middleware and all), so that a call through the console is a REST
	// call like any other.
	Upstream http.Handler
	// AllowInsecure allows session cookies over plain HTTP on a non-loopback
	// connection (paddock serve --insecure-listen: a proxy in front
	// terminates TLS). Without it the console refuses to sign in there: the
	// cookie would cross the network in clear.
	AllowInsecure bool
	// Session bounds; zero takes the Default* values.
	SessionTTL, IdleTimeout time.Duration
	MaxSessions, MaxPerKey  int
	Log                     *slog.Logger
}

// Console is the /ui handler.
type Console struct {
	o     Options
	log   *slog.Logger
	st    *store
	feeds *hub
	mux   *http.ServeMux
	// servers the feeds registered a shutdown hook with
	servers sync.Map
}

// New builds the console. Close it when the server stops.
func New(o Options) *Console {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxPerKey <= 0 {
		o.MaxPerKey = DefaultMaxPerKey
	}
	c := &Console{o: o, log: o.Log, st: newStore(o.SessionTTL, o.IdleTimeout, o.MaxSessions, o.MaxPerKey), mux: http.NewServeMux()}
	c.feeds = newHub(o.Sandboxes, o.Log)
	c.mux.HandleFunc("GET "+Prefix, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusMovedPermanently)
	})
	c.mux.HandleFunc("GET "+Prefix+"/{$}", c.index)
	c.mux.HandleFunc("GET "+Prefix+"/assets/{name}", c.asset)
	c.mux.HandleFunc("GET "+Prefix+"/session", c.sessionInfo)
	c.mux.HandleFunc("POST "+Prefix+"/session", c.signIn)
	c.mux.HandleFunc("DELETE "+Prefix+"/session", c.withSession(c.signOut))
	c.mux.HandleFunc("GET "+Prefix+"/feed", c.withSession(c.feed))
	c.mux.HandleFunc("POST "+Prefix+"/audit/verify", c.withSession(c.verify))
	c.mux.HandleFunc(Prefix+"/api/", c.withSession(c.forward))
	c.mux.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errs.NotFound("no such console page: %s %s", r.Method, clip(r.URL.Path, 128)))
	})
	return c
}

// Handler serves Prefix and everything under it.
func (c *Console) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		c.mux.ServeHTTP(w, r)
	})
}

// Close ends every session and stops the feeds.
func (c *Console) Close() {
	c.st.closeAll()
	c.feeds.close()
}

// Sessions is the number of live sessions (for tests and metrics).
func (c *Console) Sessions() int { return c.st.count() }

// The console's own pages allow nothing but their own files: no inline
// script or style (XSS through anything a sandbox controls stays inert),
// no framing (clickjacking), no plugins, no base or form redirection.
// Images may be blob: URLs (previews and the browser's live view, made
// from fetched bytes) and data: URLs (xterm's glyph cache).
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-src 'none'; " +
	"frame-ancestors 'none'; worker-src 'none'; manifest-src 'none'"

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), usb=(), payment=()")
}

// Error answers, in the API's shape.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

var statusOf = map[errs.Code]int{
	errs.CodeInvalid: http.StatusBadRequest, errs.CodeNotFound: http.StatusNotFound,
	errs.CodeUnauthenticated: http.StatusUnauthorized, errs.CodeForbidden: http.StatusForbidden,
	errs.CodeLimit: http.StatusTooManyRequests, errs.CodeRateLimited: http.StatusTooManyRequests,
	errs.CodeTooLarge: http.StatusRequestEntityTooLarge, errs.CodeUnavailable: http.StatusServiceUnavailable,
	errs.CodeUnsupported: http.StatusNotImplemented, errs.CodeConflict: http.StatusConflict,
	errs.CodeMethodNotAllowed: http.StatusMethodNotAllowed,
}

func writeError(w http.ResponseWriter, err error) {
	code := errs.CodeOf(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	var b errorBody
	b.Error.Code, b.Error.Message = string(code), errs.Public(err)
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// sameOrigin reports whether a request comes from a page of this server:
// its Origin names the request's own host (the scheme is the connection's
// business; the Host check of the API's hardening already ran). Without
// an Origin only a same-origin fetch metadata header will do. This is the
// cross-site request forgery (CSRF) and cross-site WebSocket hijacking
// (CSWSH) guard beside the token, and the one that protects sign-in.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// plainRemote reports a plain-HTTP request that arrived on a non-loopback
// address: a session cookie there would cross the network in clear.
func plainRemote(r *http.Request) bool {
	if r.TLS != nil {
		return false
	}
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return true
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// secure reports whether the browser reached the console over HTTPS: TLS
// here, or (only when a proxy is declared with AllowInsecure) a proxy's
// X-Forwarded-Proto.
func (c *Console) secure(r *http.Request) bool {
	return r.TLS != nil || (c.o.AllowInsecure && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"))
}

func (c *Console) refuseInsecure(w http.ResponseWriter, r *http.Request) bool {
	if !c.o.AllowInsecure && plainRemote(r) {
		writeError(w, errs.New(errs.CodeForbidden, "the console signs in only over TLS on this address (or on loopback): serve with --tls-cert/--tls-key, or --insecure-listen behind a TLS proxy"))
		return true
	}
	return false
}

type ctxKey struct{}

func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(ctxKey{}).(*session)
	return s
}
