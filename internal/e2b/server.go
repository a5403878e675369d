package e2b

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/wire"
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
	MintToken(sc rights.Scope, sandboxID string, scopes []wire.Scope, ttl time.Duration) (wire.Token, error)
}

// Options configure the adapter.
type Options struct {
	Log       *slog.Logger
	Manager   *sandbox.Manager
	Auth      auth.Authenticator
	Tokens    TokenMinter
	Templates Templates    // nil: every templateID is the default template
	Auditor   gate.Auditor // nil: requests are not recorded (manager events still are)
	RateLimit gate.Limiter // nil: no per-key rate
	// DefaultInternet is the internet access of a create that does not say
	// (allow_internet_access): E2B's API gives it; serve's
	// --e2b-default-internet=false does not.
	DefaultInternet bool
	// TokenTTL is the life of an envdAccessToken (0: auth.MaxTokenTTL).
	// A client that needs a fresh one calls connect.
	TokenTTL time.Duration
	// PortsDomain is serve's --ports-domain: sandbox URLs (getHost) are
	// PORT-ID.DOMAIN (ports.go); "" leaves the SDK's own domain.
	PortsDomain string
	// Builder builds the templates of E2B's template build API
	// (tplapi.go); nil: that API answers 501.
	Builder TemplateBuilder
	// TemplateDir stages the uploaded files of template COPY steps
	// (emptied at New); "" refuses template builds.
	TemplateDir string
	// MaxTemplateContext bounds one upload and one build's COPY files
	// together (0, or more than 512 MiB: 512 MiB).
	MaxTemplateContext int64
	// Secrets is the tenant secret store behind E2B's /secrets and the
	// ${e2b.secrets.NAME} placeholders of network rules (secrets.go,
	// transform.go); nil: both are refused as unsupported.
	Secrets *secret.Store
}

// Server is the E2B-compatible API.
type Server struct {
	o       Options
	log     *slog.Logger
	m       *sandbox.Manager
	control *http.ServeMux
	envd    *http.ServeMux
	code    *http.ServeMux // code.go: E2B's code interpreter (port 49999)
	watch   *watchers
	signed  issued    // signed.go: the access tokens issued, for signed file URLs
	tpl     *tplState // tplapi.go: template builds
	routes  []Route
	once    sync.Once
}

// Route is one served endpoint and the right it declares (the gate checks
// it, and the manager again); the every-route test walks them.
type Route struct {
	Pattern string // "POST /sandboxes"; envd routes carry the E2b-Sandbox-Id header
	Need    rights.Right
	Open    bool   // needs no right, only a credential (envd's health); else Need is set
	Envd    bool   // an envd route (authenticated by a sandbox's access token)
	Stream  bool   // a Connect server stream
	Port    string // E2b-Sandbox-Port of an envd route when it is not envd's (the code interpreter's)
}

// Routes lists the served endpoints.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

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
	s := &Server{o: o, log: o.Log, m: o.Manager}
	var err error
	if s.tpl, err = newTplState(o.TemplateDir, o.MaxTemplateContext); err != nil {
		return nil, err
	}
	s.watch = newWatchers(s)
	s.control = s.controlRoutes()
	s.envd = s.envdRoutes()
	s.code = s.codeRoutes()
	return s, nil
}

// Close stops the adapter's polling watchers.
func (s *Server) Close() {
	s.once.Do(func() {
		s.watch.closeAll()
		s.tpl.close()
	})
}

// Handler serves both APIs: a request carrying E2b-Sandbox-Id is for envd,
// any other for the control plane.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(hdrSandboxID) != "" {
			if r.Header.Get(hdrSandboxPort) == CodeInterpreterPort {
				s.code.ServeHTTP(w, r)
				return
			}
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
	"/snapshots", "/templates/", // snapshots (state.go), template builds (tplapi.go)
	"/v3/templates", "/v2/templates/",
	"/secrets", "/secrets/", // secrets (secrets.go)
	"/health", "/files", "/process.Process/", "/filesystem.Filesystem/",
	"/execute", "/contexts", "/contexts/", // the code interpreter (code.go)
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

// mintToken issues the envdAccessToken of a sandbox: a sandbox-scoped
// token holding the caller's read, write and exec scopes.
func (s *Server) mintToken(sc rights.Scope, id string) (string, error) {
	var scopes []wire.Scope
	for scope, r := range map[wire.Scope]rights.Right{wire.ScopeRead: rights.Read, wire.ScopeWrite: rights.Write, wire.ScopeExec: rights.Exec} {
		if sc.Can(r) {
			scopes = append(scopes, scope)
		}
	}
	if len(scopes) == 0 {
		return "", errs.New(errs.CodeForbidden, "this key holds none of the read, write and exec scopes")
	}
	tok, err := s.o.Tokens.MintToken(sc, id, scopes, s.o.TokenTTL)
	if err != nil {
		return "", err
	}
	s.signed.add(id, tok.Token)
	return tok.Token, nil
}

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
