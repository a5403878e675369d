package e2b

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// EnvdVersion is the version of E2B's in-sandbox daemon this adapter
// reports. The SDK gates behaviours on it; everything it gates up to this
// version is implemented (recursive watch 0.1.4, stdin control 0.3.0,
// default user 0.4.0, stdin close 0.5.2, octet-stream upload 0.5.7, file
// metadata 0.6.2, entries in watch events 0.6.3, the network-mount watch
// flag 0.6.4, which needs nothing here).
const EnvdVersion = "0.6.4"

// EnvdPort is the port the SDK names in E2b-Sandbox-Port for envd.
const EnvdPort = "49983"

// clientID fills E2B's deprecated clientID field.
const clientID = "paddock"

// Header names.
const (
	hdrSandboxID   = "E2b-Sandbox-Id"
	hdrSandboxPort = "E2b-Sandbox-Port"
	hdrAccessToken = "X-Access-Token"
	hdrAPIKey      = "X-API-KEY"
	hdrNextToken   = "X-Next-Token"
	hdrKeepalive   = "Keepalive-Ping-Interval"
	hdrTimeoutMs   = "Connect-Timeout-Ms"
)

// Templates finds Paddock templates by name (sandbox.Templates).
type Templates = sandbox.Templates

// TokenMinter mints sandbox-scoped tokens (auth.Service).
type TokenMinter interface {
	MintToken(p auth.Principal, sandboxID string, scopes []auth.Scope, ttl time.Duration) (auth.Token, error)
}

// Auditor records API requests (api.Auditor; audit.Recorder): Begin runs
// after authentication and before the handler, and a failure refuses the
// request.
type Auditor interface {
	Begin(r *http.Request, p auth.Principal, route string) (end func(status int), err error)
}

// Options configure the adapter.
type Options struct {
	Log       *slog.Logger
	Manager   *sandbox.Manager
	Auth      auth.Authenticator
	Tokens    TokenMinter
	Templates Templates // nil: every templateID is the default template
	Auditor   Auditor   // nil: requests are not recorded (manager events still are)
	// TokenTTL is the life of an envdAccessToken (0: auth.MaxTokenTTL).
	// A client that needs a fresh one calls connect.
	TokenTTL time.Duration
}

// Server is the E2B-compatible API.
type Server struct {
	o       Options
	log     *slog.Logger
	m       *sandbox.Manager
	control *http.ServeMux
	envd    *http.ServeMux
	meta    *metaStore
	watch   *watchers
	kills   *killTimers
	once    sync.Once
}

// New builds the adapter.
func New(o Options) (*Server, error) {
	if o.Manager == nil || o.Auth == nil || o.Tokens == nil {
		return nil, errors.New("e2b: a manager, an authenticator and a token minter are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.TokenTTL <= 0 || o.TokenTTL > auth.MaxTokenTTL {
		o.TokenTTL = auth.MaxTokenTTL
	}
	s := &Server{o: o, log: o.Log, m: o.Manager, meta: newMetaStore(), kills: newKillTimers()}
	s.meta.exists = func(id, tenant string) bool {
		_, err := s.m.Get(context.Background(), sandbox.Scope{Tenant: tenant}, id)
		return errs.CodeOf(err) != errs.CodeNotFound
	}
	s.watch = newWatchers(s)
	s.control = s.controlRoutes()
	s.envd = s.envdRoutes()
	return s, nil
}

// Close stops the adapter's timers and polling watchers.
func (s *Server) Close() {
	s.once.Do(func() {
		s.kills.stopAll()
		s.watch.closeAll()
	})
}

// Handler serves both APIs: a request carrying E2b-Sandbox-Id is for envd,
// any other for the control plane.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(hdrSandboxID) != "" {
			s.envd.ServeHTTP(w, r)
			return
		}
		s.control.ServeHTTP(w, r)
	})
}

// MountPatterns are the paths the adapter is served at (beside Paddock's
// own /v1, /healthz, /mcp... — none of them overlaps).
var MountPatterns = []string{
	"/sandboxes", "/sandboxes/", "/v2/sandboxes", "/v2/sandboxes/",
	"/health", "/files", "/process.Process/", "/filesystem.Filesystem/",
}

// Mounts is the adapter for api.Options.Mounts.
func (s *Server) Mounts() map[string]http.Handler {
	h := s.Handler()
	m := make(map[string]http.Handler, len(MountPatterns))
	for _, p := range MountPatterns {
		m[p] = h
	}
	return m
}

// scopeOf is who a principal is for the manager.
func scopeOf(p auth.Principal) sandbox.Scope {
	return sandbox.Scope{Tenant: p.Tenant, Actor: p.KeyID, Sandbox: p.Sandbox}
}

// audited records r for p (when an Auditor is set) and returns the writer
// to use and the function that records the result; a nil writer means the
// request was refused (the answer is written).
func (s *Server) audited(w http.ResponseWriter, r *http.Request, p auth.Principal, route string, fail func(http.ResponseWriter, error)) (http.ResponseWriter, func()) {
	if s.o.Auditor == nil {
		return w, func() {}
	}
	end, err := s.o.Auditor.Begin(r, p, route)
	if err != nil {
		s.log.Error("audit log unavailable; refusing E2B request", "route", route, "err", err)
		fail(w, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act"))
		return nil, nil
	}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	return sw, func() { end(sw.status) }
}

// authenticate checks a credential; the error is safe to show.
func (s *Server) authenticate(ctx context.Context, cred string) (auth.Principal, error) {
	p, err := s.o.Auth.Authenticate(ctx, cred)
	if err != nil {
		if errs.CodeOf(err) == errs.CodeUnauthenticated {
			return p, errs.New(errs.CodeUnauthenticated, "invalid or revoked credential")
		}
		s.log.Error("e2b: authentication failed", "err", err)
		return p, errs.Wrap(errs.CodeUnavailable, err, "cannot check the credential right now")
	}
	return p, nil
}

// mintToken issues the envdAccessToken of a sandbox: a sandbox-scoped
// token holding the caller's read, write and exec scopes.
func (s *Server) mintToken(p auth.Principal, id string) (string, error) {
	var scopes []auth.Scope
	for _, sc := range []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec} {
		if p.Can(sc) {
			scopes = append(scopes, sc)
		}
	}
	if len(scopes) == 0 {
		return "", errs.New(errs.CodeForbidden, "this key holds none of the read, write and exec scopes")
	}
	tok, err := s.o.Tokens.MintToken(p, id, scopes, s.o.TokenTTL)
	if err != nil {
		return "", err
	}
	return tok.Token, nil
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// routeProbe tells "wrong method" from "no such path" for a mux whose
// catch-all would otherwise answer 404 for both.
type routeProbe struct {
	mux  *http.ServeMux
	seen map[string]bool
}

func newRouteProbe() *routeProbe {
	return &routeProbe{mux: http.NewServeMux(), seen: map[string]bool{}}
}

func (p *routeProbe) add(pattern string) {
	_, path, _ := strings.Cut(pattern, " ")
	if !p.seen[path] {
		p.seen[path] = true
		p.mux.HandleFunc(path, func(http.ResponseWriter, *http.Request) {})
	}
}

func (p *routeProbe) known(r *http.Request) bool {
	_, pattern := p.mux.Handler(r)
	return pattern != ""
}
