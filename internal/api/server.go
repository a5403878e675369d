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

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/wire"
)

// Options configure the API server.
type Options struct {
	Log     *slog.Logger
	Manager *sandbox.Manager
	Auth    auth.Authenticator
	// Keys manages keys, tenants and tokens (nil: Auth, if it is an
	// *auth.Service; else these routes answer unsupported).
	Keys *auth.Service
	// Templates serves /v1/templates (templates.go); nil: only the list,
	// by the manager.
	Templates TemplateService
	Version   string
	// Mounts are further handlers served on the same port (MCP, E2B...),
	// by pattern, e.g. "/mcp".
	Mounts map[string]http.Handler
	// Auditor, if set, records every authenticated request (fail closed).
	// If it also has Reader() *audit.Reader (audit.Recorder does), that
	// serves the audit and metrics routes.
	Auditor Auditor
	// RateLimit, if set, bounds each key's rate of requests (gate.Limiter;
	// shared with the other surfaces).
	RateLimit gate.Limiter
	// Middleware wraps the whole handler, outermost first (metrics,
	// hardening).
	Middleware []func(http.Handler) http.Handler
	// Browser, if set, serves the sandboxes' browsers (browser.go).
	Browser *browser.Service
	// Secrets, if set, serves /v1/secrets (secrets.go); PortsDomain, if
	// set, serves sandbox ports at {port}-{id}.{domain} (ports.go).
	Secrets     SecretStore
	PortsDomain string
	// Port routing hooks of other surfaces (portpolicy.go): HostPorts
	// serves some ports of a port host with a mount's handler instead of
	// the sandbox (E2B's envd at 49983-{id}.{domain}); PortPolicy is a
	// sandbox's choice of public ports and Host header; PortTokenHeaders
	// are further request headers a port token may come in.
	HostPorts        map[int]HostPortHandler
	PortPolicy       func(id string, port int) PortPolicy
	PortTokenHeaders []string
}

// Auditor records API actions (gate.Auditor: the one interface of every
// surface).
type Auditor = gate.Auditor

// Server is the REST API.
type Server struct {
	o       Options
	log     *slog.Logger
	m       *sandbox.Manager
	keys    *auth.Service
	audit   *audit.Reader
	secrets SecretStore
	gate    *gate.Gate
	mux     *http.ServeMux // registered only through route (and the mounts)
	routes  []Route
	mounts  []string
	ports   *portProxy // ports.go
	links   *PortLinks // portlinks.go
}

// Route is one served endpoint and the right it declares (the right the
// gate and the services it calls check); the OpenAPI test compares the
// routes with the published document, and the every-route test walks
// them.
type Route struct {
	Method, Pattern string
	Public          bool         // no credential at all
	Need            rights.Right // 0 on an authenticated route: any caller (its services decide)
	WebSocket       bool         // the interactive WebSockets (authedWS)
	Port            bool         // the exposed-port proxy (ports.go)
}

// handler is an authenticated route's handler: sc is the caller.
type handler func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope)

// restSurface is how REST finds a credential and answers an error.
var (
	errBadAPIKey = errs.New(errs.CodeUnauthenticated, "invalid or revoked API key")
	restSurface  = gate.Surface{Name: "REST", Credential: gate.RequiredBearer, Invalid: errBadAPIKey, Fail: failAuthed}
)

// failAuthed answers an error of an authenticated route; a refused
// credential is told how to authenticate.
func failAuthed(w http.ResponseWriter, r *http.Request, err error) {
	if errs.CodeOf(err) == errs.CodeUnauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer realm="paddock"`)
	}
	writeError(w, r, err)
}

// New builds the server and its routes.
func New(o Options) *Server {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, log: o.Log, m: o.Manager, mux: http.NewServeMux(), keys: o.Keys, secrets: o.Secrets}
	if s.secrets == nil {
		s.secrets = (*secret.Store)(nil) // refuses as a store would, then answers unsupported
	}
	if s.keys == nil {
		s.keys, _ = o.Auth.(*auth.Service)
	}
	if rs, ok := o.Auditor.(interface{ Reader() *audit.Reader }); ok {
		s.audit = rs.Reader()
	}
	surface := restSurface
	surface.Limit = o.RateLimit
	s.gate = gate.New(o.Auth, o.Auditor, o.Log, surface)
	s.links = NewPortLinks(o.Manager, s.keys, o.PortsDomain)
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
	s.pauseRoutes()     // pause.go
	s.hibernateRoutes() // hibernate.go
	s.snapshotRoutes()  // snapshots.go
	s.volumeRoutes()    // volumes.go
	s.codeRoutes()      // code.go
	s.templateRoutes()  // templates.go
	for pattern, h := range o.Mounts {
		s.mounts = append(s.mounts, pattern)
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

// RouteTable lists the served endpoints with the rights they declare.
func (s *Server) RouteTable() []Route { return append([]Route(nil), s.routes...) }

// MountPatterns lists the patterns of the other surfaces' handlers
// (Options.Mounts), which declare their routes' rights themselves.
func (s *Server) MountPatterns() []string { return append([]string(nil), s.mounts...) }

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

// route is the one way a route is served: it goes into the table (what
// the OpenAPI and every-route tests read) as it goes into the mux, so
// that no route is served without the right it declares.
func (s *Server) route(rt Route, h http.Handler) {
	s.routes = append(s.routes, rt)
	s.mux.Handle(rt.Method+" "+rt.Pattern, h)
}

func (s *Server) public(pattern string, h http.HandlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	s.route(Route{Method: method, Pattern: path, Public: true}, h)
}

// authed registers a route behind the gate (authentication, the audit
// record, the right it declares: need) with handler h.
func (s *Server) authed(pattern string, need rights.Right, h handler) {
	method, path, _ := strings.Cut(pattern, " ")
	s.route(Route{Method: method, Pattern: path, Need: need}, s.gated(pattern, need, h))
}

func (s *Server) gated(pattern string, need rights.Right, h handler) http.Handler {
	return s.gate.Wrap(pattern, need, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, gate.Scope(r.Context()))
	}))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	h := map[string]any{"ok": true, "version": s.o.Version}
	if s.m != nil {
		h["runtimes"] = s.m.Runtimes() // which isolation tiers a caller may ask for
	}
	writeJSON(w, http.StatusOK, h)
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
		sw := gate.NewStatusWriter(w)
		next.ServeHTTP(sw, r.WithContext(ctx))
		s.log.LogAttrs(ctx, slog.LevelDebug, "request", slog.String("id", id), slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", sw.Status()), slog.Duration("took", time.Since(start)))
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

// StatusOf maps an error code to its HTTP status.
func StatusOf(code errs.Code) int { return errs.HTTPStatus(code) }

// ErrorBody is the JSON shape of every error answer.
type ErrorBody = wire.ErrorBody

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := errs.CodeOf(err)
	setRetryAfter(w, err) // harden.go
	var body ErrorBody
	body.Error.Code = string(code)
	body.Error.Message = errs.Public(err)
	writeJSON(w, StatusOf(code), body)
}

// reply answers a handler's call: 200 with v as JSON, or err.
func reply(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// replyNoContent answers 204 No Content, or err.
func replyNoContent(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// replyList answers a list wrapped in its envelope (none is [], never
// null), or err.
func replyList[T, E any](w http.ResponseWriter, r *http.Request, list []T, err error, wrap func([]T) E) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	if list == nil {
		list = []T{}
	}
	writeJSON(w, http.StatusOK, wrap(list))
}

// decoded reads the request's JSON body into a T; on a bad body it writes
// the error answer and reports false.
func decoded[T any](w http.ResponseWriter, r *http.Request) (T, bool) {
	var v T
	if err := decode(r, &v); err != nil {
		writeError(w, r, err)
		return v, false
	}
	return v, true
}

// jsonCall is the whole of a handler that sends a JSON body to a manager
// method on the sandbox in the path and answers its result.
func jsonCall[Req, Res any](w http.ResponseWriter, r *http.Request, sc sandbox.Scope,
	call func(context.Context, sandbox.Scope, string, Req) (Res, error)) {
	if req, ok := decoded[Req](w, r); ok {
		res, err := call(r.Context(), sc, r.PathValue("id"), req)
		reply(w, r, res, err)
	}
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
