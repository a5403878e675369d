// Package gate is the one frame every HTTP surface (REST, E2B, MCP, the
// WebSockets, exposed ports) puts in front of its handlers:
//
//	authenticate → the key's rate (429) → audit begin (fail closed: 503,
//	the handler never runs) → status writer → vet → the route's right →
//	scope in the context
//
// A surface supplies only what differs: how it finds the credential
// (Surface.Credential) and how it writes an error (Surface.Fail). Every
// route declares the right it needs when it is wrapped (Wrap); the gate
// refuses a caller lacking it before the handler reads a byte of the
// request, as the services the handler calls would (they check again:
// package rights). Handlers find the caller with Scope.
//
// Also here: the one status writer (StatusWriter) and the origin helpers
// every surface's browser checks use (origin.go).
package gate

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
)

// Auditor records requests (audit.Recorder). Begin is called after
// authentication and before the handler; if it fails the request is
// refused (503) and the handler never runs. The returned func is called
// with the final status.
type Auditor interface {
	Begin(r *http.Request, p auth.Principal, route string) (end func(status int), err error)
}

// Surface is what differs between surfaces.
type Surface struct {
	// Name is the surface in log lines ("REST", "E2B", "MCP").
	Name string
	// Credential returns the request's credential. Its error — none was
	// given, or one of the wrong shape — is answered as it is, before
	// anything is recorded (nobody is known yet).
	Credential func(r *http.Request) (string, error)
	// Invalid is the answer for a credential the authenticator refuses
	// (nil: its own error).
	Invalid error
	// Unavailable, if set, is the answer when the authenticator fails for
	// another reason (its key store cannot be read); the cause is logged.
	// Nil: the authenticator's own error.
	Unavailable error
	// Vet, if set, checks the caller against the request once the request
	// is on the record: an E2B access token must be for the sandbox the
	// request names, a port link's token for that port. Its error is the
	// answer.
	Vet func(r *http.Request, p auth.Principal) error
	// Fail writes err in the surface's error shape.
	Fail func(w http.ResponseWriter, r *http.Request, err error)
	// Limit, if set, bounds each key's rate of audited requests (429 with
	// Retry-After beyond it); one limiter is shared by every surface.
	Limit Limiter
}

// Limiter is a token bucket per key (audit.KeyLimiter). Take says whether
// key may make a request now, and if not, when to retry and whether this
// is the first refusal since its last allowed request.
type Limiter interface {
	Take(key string, now time.Time) (ok bool, retryAfter time.Duration, first bool)
	Rate() float64
}

// Gate authenticates and records a surface's requests.
type Gate struct {
	authn   auth.Authenticator
	auditor Auditor
	log     *slog.Logger
	s       Surface
}

// New returns the gate of one surface. auditor may be nil (requests are
// then not recorded; the services' own events still are).
func New(authn auth.Authenticator, auditor Auditor, log *slog.Logger, s Surface) *Gate {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if s.Name == "" {
		s.Name = "API"
	}
	return &Gate{authn: authn, auditor: auditor, log: log, s: s}
}

// ErrAudit is the answer when a request's intent cannot be recorded.
func ErrAudit(cause error) error {
	return errs.Wrap(errs.CodeUnavailable, cause, "the audit log cannot be written; refusing to act")
}

// Authenticate finds and checks r's credential.
func (g *Gate) Authenticate(r *http.Request) (auth.Principal, error) {
	cred, err := g.s.Credential(r)
	if err != nil {
		return auth.Principal{}, err
	}
	p, err := g.authn.Authenticate(r.Context(), cred)
	if err == nil {
		return p, nil
	}
	if errs.CodeOf(err) == errs.CodeUnauthenticated {
		if g.s.Invalid != nil {
			return p, g.s.Invalid
		}
		return p, err
	}
	if g.s.Unavailable != nil {
		g.log.Error(g.s.Name+": authentication failed", "err", err)
		return p, g.s.Unavailable
	}
	return p, err
}

// Wrap puts h behind the gate. route is the name the request is recorded
// (and its metrics labelled) under, e.g. "POST /v1/sandboxes"; need is
// the right the route declares (0: any authenticated caller — the
// handler's services decide).
func (g *Gate) Wrap(route string, need rights.Right, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := g.Authenticate(r)
		if err != nil {
			g.s.Fail(w, r, err)
			return
		}
		g.Serve(w, r, p, route, need, h)
	})
}

// Serve is Wrap for a caller the surface authenticated itself (a port
// link's token found in a cookie, say): audit begin, status writer, vet,
// the route's right, scope in the context, h.
func (g *Gate) Serve(w http.ResponseWriter, r *http.Request, p auth.Principal, route string, need rights.Right, h http.Handler) {
	sc := auth.ScopeOf(p)
	r = r.WithContext(WithBaseURL(withCaller(r.Context(), p, sc), requestBase(r)))
	if g.s.Limit != nil && !g.allow(w, r, p, route) {
		return
	}
	// Recorded before the right is checked, so that a refused call by an
	// authenticated caller is on the record too.
	if g.auditor != nil {
		end, err := g.auditor.Begin(r, p, route)
		if err != nil {
			g.log.Error("audit log unavailable; refusing "+g.s.Name+" request", "route", route, "err", err)
			g.s.Fail(w, r, ErrAudit(err))
			return
		}
		sw := NewStatusWriter(w)
		defer func() { end(sw.Status()) }()
		w = sw
	}
	if g.s.Vet != nil {
		if err := g.s.Vet(r, p); err != nil {
			g.s.Fail(w, r, err)
			return
		}
	}
	if need != 0 {
		if err := sc.Need(need); err != nil {
			g.s.Fail(w, r, err)
			return
		}
	}
	h.ServeHTTP(w, r)
}

// allow takes a token from the caller's key, or answers 429 with
// Retry-After. Disk exhaustion through the audit log: every request adds
// records, so without a rate per key a read-only key grew the log ~5 MB/s.
// Tokens share the bucket of the key that minted them (minting more
// does not buy more rate). Only the first refusal of a run is recorded.
func (g *Gate) allow(w http.ResponseWriter, r *http.Request, p auth.Principal, route string) bool {
	ok, retry, first := g.s.Limit.Take(p.KeyID, time.Now())
	if ok {
		return true
	}
	secs := int(math.Ceil(retry.Seconds()))
	if secs < 1 {
		secs = 1
	}
	if first && g.auditor != nil {
		if end, err := g.auditor.Begin(r, p, route); err == nil {
			defer end(http.StatusTooManyRequests)
		}
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	g.s.Fail(w, r, errs.New(errs.CodeRateLimited, "this key is over its rate of %g requests a second; retry after %d s", g.s.Limit.Rate(), secs))
	return false
}

type baseKey struct{}

func withCaller(ctx context.Context, p auth.Principal, sc rights.Scope) context.Context {
	return rights.WithScope(auth.WithPrincipal(ctx, p), sc)
}

// Scope is the caller of a request the gate let through
// (rights.FromContext: the zero Scope, which may do nothing, for any
// other context).
func Scope(ctx context.Context) rights.Scope { return rights.FromContext(ctx) }

// WithScope returns ctx carrying p as the authenticated principal and
// sc as the caller (for a surface that serves callers without HTTP
// requests, e.g. MCP's tool calls).
func WithScope(ctx context.Context, p auth.Principal, sc rights.Scope) context.Context {
	return withCaller(ctx, p, sc)
}

// Principal is the authenticated principal of a request the gate let
// through.
func Principal(ctx context.Context) (auth.Principal, bool) { return auth.FromContext(ctx) }

// BaseURL is the scheme://host a request the gate let through reached
// this server at ("" without one: no HTTP request), for the links a
// service builds (port URLs).
func BaseURL(ctx context.Context) string {
	u, _ := ctx.Value(baseKey{}).(string)
	return u
}

// WithBaseURL returns ctx carrying u as BaseURL.
func WithBaseURL(ctx context.Context, u string) context.Context {
	return context.WithValue(ctx, baseKey{}, u)
}

// requestBase is r's scheme://host (behind a TLS-terminating proxy the
// scheme is http unless the proxy connects with TLS).
func requestBase(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// Is reports whether err is target itself (not merely of its code): a
// surface's Fail uses it to tell its own credential errors apart.
func Is(err, target error) bool {
	for err != nil {
		if err == target {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}
