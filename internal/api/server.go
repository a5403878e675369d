// Package api serves Paddock's REST API: thin handlers over the sandbox
// manager, with authentication, request ids, logging and the error shape
// of DESIGN ({"error":{"code","message"}}).
package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/template"
)

// Templates lists templates.
type Templates interface {
	List() ([]template.Info, error)
}

// Options configure the API server.
type Options struct {
	Log       *slog.Logger
	Manager   *sandbox.Manager
	Auth      auth.Authenticator
	Templates Templates
	Version   string
	// Mounts are further handlers served on the same port (MCP, E2B...),
	// by pattern, e.g. "/mcp".
	Mounts map[string]http.Handler
	// Auditor, if set, records every authenticated request (fail closed).
	Auditor Auditor
	// Middleware wraps the whole handler, outermost first (metrics,
	// hardening).
	Middleware []func(http.Handler) http.Handler
	// Secrets, if set, serves /v1/secrets (secrets.go); PortsDomain, if
	// set, serves sandbox ports at {port}-{id}.{domain} (ports.go).
	Secrets     SecretStore
	PortsDomain string
}

// Auditor records API actions. Begin is called after authentication and
// before the handler; if it fails the request is refused (503) and the
// handler never runs. The returned func is called with the final status.
type Auditor interface {
	Begin(r *http.Request, p auth.Principal, route string) (end func(status int), err error)
}

// Server is the REST API.
type Server struct {
	o      Options
	log    *slog.Logger
	m      *sandbox.Manager
	mux    *http.ServeMux
	routes []route
	ports  *portProxy // ports.go
}

// route is one served endpoint; the OpenAPI test compares these with the
// published document.
type route struct {
	Method, Pattern string
	Public          bool
}

// New builds the server and its routes.
func New(o Options) *Server {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, log: o.Log, m: o.Manager, mux: http.NewServeMux()}
	s.public("GET /healthz", s.healthz)
	s.public("GET /openapi.json", s.openapi)
	s.sandboxRoutes()
	s.execRoutes()
	s.fileRoutes()
	s.processRoutes()
	s.keyRoutes()
	s.auditRoutes()
	s.networkRoutes()
	s.secretRoutes()
	s.portRoutes()
	s.browserRoutes()
	for pattern, h := range o.Mounts {
		s.mux.Handle(pattern, h)
	}
	// The catch-all shadows the mux's own 405; a second mux holding the
	// same patterns tells a wrong method from an unknown path.
	probe := http.NewServeMux()
	for _, rt := range s.routes {
		probe.HandleFunc(rt.Method+" "+rt.Pattern, func(http.ResponseWriter, *http.Request) {})
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := probe.Handler(r); pattern == "" && s.pathKnown(r) {
			writeError(w, r, errs.New(errs.CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, clipPath(r.URL.Path)))
			return
		}
		writeError(w, r, errs.NotFound("no such endpoint: %s %s", r.Method, clipPath(r.URL.Path)))
	})
	return s
}

// Routes lists the served endpoints as "METHOD /pattern".
func (s *Server) Routes() []string {
	out := make([]string, 0, len(s.routes))
	for _, r := range s.routes {
		out = append(out, r.Method+" "+r.Pattern)
	}
	return out
}

// pathKnown reports whether some route matches r's path with any method.
func (s *Server) pathKnown(r *http.Request) bool {
	for _, rt := range s.routes {
		m := http.NewServeMux()
		m.HandleFunc(rt.Pattern, func(http.ResponseWriter, *http.Request) {})
		if _, p := m.Handler(r); p != "" {
			return true
		}
	}
	return false
}

// Handler is the whole API with its middleware.
func (s *Server) Handler() http.Handler {
	var h http.Handler = s.recoverer(s.requestID(s.portHosts(s.mux))) // ports.go: {port}-{id}.{domain}
	for i := len(s.o.Middleware) - 1; i >= 0; i-- {
		h = s.o.Middleware[i](h)
	}
	return h
}

func (s *Server) public(pattern string, h http.HandlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	s.routes = append(s.routes, route{Method: method, Pattern: path, Public: true})
	s.mux.HandleFunc(pattern, h)
}

// authed registers a handler that needs a principal holding scope.
func (s *Server) authed(pattern string, scope auth.Scope, h func(http.ResponseWriter, *http.Request, auth.Principal)) {
	method, path, _ := strings.Cut(pattern, " ")
	s.routes = append(s.routes, route{Method: method, Pattern: path})
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paddock"`)
			writeError(w, r, err)
			return
		}
		r = r.WithContext(auth.WithPrincipal(r.Context(), p))
		// Audited before the scope check, so that a refused call by an
		// authenticated key is on the record too.
		if s.o.Auditor != nil {
			end, err := s.o.Auditor.Begin(r, p, pattern)
			if err != nil {
				s.log.Error("audit log unavailable; refusing request", "route", pattern, "err", err)
				writeError(w, r, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act"))
				return
			}
			sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
			defer func() { end(sw.status) }()
			w = sw
		}
		if !p.Can(scope) {
			writeError(w, r, errs.New(errs.CodeForbidden, "this key lacks the %q scope", scope))
			return
		}
		h(w, r, p)
	})
}

func (s *Server) authenticate(r *http.Request) (auth.Principal, error) {
	h := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || token == "" {
		return auth.Principal{}, errs.New(errs.CodeUnauthenticated, "missing bearer token (Authorization: Bearer KEY)")
	}
	p, err := s.o.Auth.Authenticate(r.Context(), strings.TrimSpace(token))
	if err != nil {
		if errs.CodeOf(err) == errs.CodeUnauthenticated {
			return p, errs.New(errs.CodeUnauthenticated, "invalid or revoked API key")
		}
		return p, err
	}
	return p, nil
}

func scopeOf(p auth.Principal) sandbox.Scope {
	return sandbox.Scope{Tenant: p.Tenant, Actor: p.KeyID, Sandbox: p.Sandbox}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "version": s.o.Version})
}

type ctxKey struct{}

// RequestID returns the id of the request ctx belongs to.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), ctxKey{}, id)
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: 200}
		next.ServeHTTP(sw, r.WithContext(ctx))
		s.log.LogAttrs(ctx, slog.LevelDebug, "request", slog.String("id", id), slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", sw.status), slog.Duration("took", time.Since(start)))
	})
}

// recoverer turns a panic into a 500 without a stack trace in the answer
// (the trace goes to the log).
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				writeError(w, r, errs.ErrInternal)
			}
		}()
		next.ServeHTTP(w, r)
	})
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

// StatusOf maps an error code to its HTTP status.
func StatusOf(code errs.Code) int { return errs.HTTPStatus(code) }

// ErrorBody is the JSON shape of every error answer.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := errs.CodeOf(err)
	setRetryAfter(w, err) // harden.go
	var body ErrorBody
	body.Error.Code = string(code)
	body.Error.Message = errs.Public(err)
	writeJSON(w, StatusOf(code), body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

func clipPath(p string) string {
	if len(p) > 128 {
		p = p[:128] + "…"
	}
	return strings.ToValidUTF8(p, "?")
}
