package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// Exposed ports (docs/ports.md): a TCP port a sandbox listens on, served
// at /v1/sandboxes/{id}/ports/{port}/… (HTTP and WebSocket) and, with a
// ports domain, at {port}-{id}.{domain}. Callers authenticate with an API
// key (Authorization header) or a port URL's token: a sandbox token minted
// for the claim "{id}_p{port}", which is no sandbox's id, so the token
// reaches that one port and no other route. Paddock's credentials are
// removed before a request goes into the sandbox.

const (
	// PortTokenParam is the query parameter of a port URL's token.
	PortTokenParam = wire.PortTokenParam
	// The cookie a port URL's token is kept in on a port host (only there:
	// those hosts are the sandbox's own origin). Over TLS the __Host-
	// prefix stops a sibling port host from planting one for another
	// (cookie tossing).
	portCookie       = "paddock_port"
	portCookieSecure = "__Host-paddock_port"

	portPattern       = "/v1/sandboxes/{id}/ports/{port}/{path...}"
	defaultPortURLTTL = time.Hour

	// pathModeCSP serves what a sandbox sends under the API's own origin
	// in an opaque origin: a page there cannot read the answers of other
	// sandboxes' ports or of the API (same-origin reads), nor set cookies.
	pathModeCSP = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads"
)

var portMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions}

// portClaim is the sandbox claim of a port URL's token.
func portClaim(id string, port int) string { return id + "_p" + strconv.Itoa(port) }

func (s *Server) portRoutes() {
	s.authed("POST /v1/sandboxes/{id}/ports/{port}/url", rights.Exec, s.portURL)
	pp := newPortProxy(s)
	for _, m := range portMethods {
		pattern := m + " " + portPattern
		s.route(Route{Method: m, Pattern: portPattern, Need: pp.need, Port: true}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pp.serve(w, r, pattern, r.PathValue("id"), r.PathValue("port"), portRest(r.URL.EscapedPath()), false)
		}))
	}
	s.ports = pp
}

// portRest is the escaped path after /v1/sandboxes/{id}/ports/{port}.
func portRest(escaped string) string {
	segs := strings.SplitN(escaped, "/", 7) // "", v1, sandboxes, id, ports, port, rest
	if len(segs) < 7 {
		return "/"
	}
	return "/" + segs[6]
}

// parsePort reads a port in canonical decimal form, 1-65535.
func parsePort(s string) (int, bool) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, _ := strconv.Atoi(s)
	return n, n >= 1 && n <= 65535
}

// PortURL is the answer of POST /v1/sandboxes/{id}/ports/{port}/url.
type PortURL = wire.PortURL

func (s *Server) portURL(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	port, ok := parsePort(r.PathValue("port"))
	if !ok {
		writeError(w, r, errs.Invalid("port must be a number between 1 and 65535"))
		return
	}
	var b wire.PortURLRequest
	if err := decode(r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.TTLS < 0 || b.TTLS > int64(auth.MaxTokenTTL/time.Second) {
		writeError(w, r, errs.Invalid("ttl_s must be between 1 and %d", int64(auth.MaxTokenTTL/time.Second)))
		return
	}
	u, err := s.links.PortURL(r.Context(), r.PathValue("id"), port, time.Duration(b.TTLS)*time.Second)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, u)
}

// portsDomain is the configured ports domain, lower-case, without dots
// around it ("" when host-based routing is off).
func (s *Server) portsDomain() string {
	return strings.Trim(strings.ToLower(strings.TrimSpace(s.o.PortsDomain)), ".")
}

// portHosts serves {port}-{id}.{domain} (host-based routing): nothing but
// sandbox ports is served under the ports domain.
func (s *Server) portHosts(next http.Handler) http.Handler {
	domain := s.portsDomain()
	if domain == "" || s.ports == nil {
		return next
	}
	suffix := "." + domain
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, _ := gate.SplitHost(r.Host)
		if h != domain && !strings.HasSuffix(h, suffix) {
			next.ServeHTTP(w, r)
			return
		}
		label := strings.TrimSuffix(h, suffix)
		ps, id, ok := strings.Cut(label, "-")
		if _, valid := parsePort(ps); !ok || !valid || !sandbox.ValidID(id) {
			writeError(w, r, errs.NotFound("no such sandbox port: the name must be PORT-SANDBOX.%s", domain))
			return
		}
		if h, ok := s.o.HostPorts[atoiPort(ps)]; ok {
			h(w, r, id) // a mount's port (portpolicy.go)
			return
		}
		pattern := r.Method + " " + portPattern
		s.ports.serve(w, r, pattern, id, ps, r.URL.EscapedPath(), true)
	})
}

// portProxy forwards requests to sandbox ports, keeping connections to
// each (sandbox, port) alive between requests.
type portProxy struct {
	s    *Server
	rp   *httputil.ReverseProxy
	gate *gate.Gate // finds no credential itself: serve has (portPrincipal)
	// need is the right reaching a port takes, on a path and on a port
	// host alike: the one value the route table declares and serve checks.
	need rights.Right
}

type portCtxKey struct{}

// portReq is what the proxy's hooks need of one request.
type portReq struct {
	target   *sandbox.PortTarget
	rest     string // escaped path inside the sandbox
	hostMode bool
	host     string // the Host header to send ("": the request's)
}

// key is the upstream URL host for a target: the transport pools
// connections by it, one pool per sandbox port (.invalid never resolves).
func targetKey(t *sandbox.PortTarget) string {
	return strconv.Itoa(t.Port) + "." + t.Sandbox + ".paddock-port.invalid"
}

func newPortProxy(s *Server) *portProxy {
	pp := &portProxy{s: s, need: rights.Exec, gate: gate.New(s.o.Auth, s.o.Auditor, s.log, gate.Surface{Name: "REST", Vet: portsVet, Fail: writeError,
		Limit: s.o.RateLimit})}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			pr, _ := ctx.Value(portCtxKey{}).(*portReq)
			if pr == nil || addr != targetKey(pr.target)+":80" {
				return nil, errors.New("port proxy: no target for " + addr)
			}
			return pr.target.Dial(ctx)
		},
		MaxIdleConns: 256, MaxIdleConnsPerHost: 8, IdleConnTimeout: 30 * time.Second,
		ExpectContinueTimeout: time.Second, DisableCompression: true, MaxResponseHeaderBytes: 64 << 10,
	}
	pp.rp = &httputil.ReverseProxy{
		Transport: tr,
		Rewrite: func(r *httputil.ProxyRequest) {
			pr := r.In.Context().Value(portCtxKey{}).(*portReq)
			r.Out.URL.Scheme, r.Out.URL.Host = "http", targetKey(pr.target)
			r.Out.URL.RawPath = pr.rest
			r.Out.URL.Path, _ = url.PathUnescape(pr.rest)
			r.Out.Host = r.In.Host
			if pr.host != "" {
				r.Out.Host = pr.host // the sandbox's Host mask (portpolicy.go)
			}
			r.SetXForwarded()
			if !pr.hostMode {
				r.Out.Header.Set("X-Forwarded-Prefix", "/v1/sandboxes/"+pr.target.Sandbox+"/ports/"+strconv.Itoa(pr.target.Port))
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			pr := resp.Request.Context().Value(portCtxKey{}).(*portReq)
			if !pr.hostMode {
				// Under the API's origin a sandbox must not set cookies (for
				// other sandboxes' paths, say) nor run as that origin.
				resp.Header.Del("Set-Cookie")
				resp.Header.Add("Content-Security-Policy", pathModeCSP)
			}
			return nil
		},
		ErrorHandler: pp.fail,
	}
	return pp
}

// fail answers a request the sandbox's port did not (in the API's error
// shape; 502 for a port nothing listens on).
func (pp *portProxy) fail(w http.ResponseWriter, r *http.Request, err error) {
	pr, _ := r.Context().Value(portCtxKey{}).(*portReq)
	if errors.Is(err, context.Canceled) {
		return // the client went away
	}
	var body ErrorBody
	status := http.StatusBadGateway
	body.Error.Code = string(errs.CodeUnavailable)
	switch {
	case pr != nil && errors.Is(err, syscall.ECONNREFUSED):
		body.Error.Message = fmt.Sprintf("nothing listens on port %d in sandbox %s", pr.target.Port, pr.target.Sandbox)
	case errs.CodeOf(err) != errs.CodeInternal:
		status, body.Error.Code, body.Error.Message = StatusOf(errs.CodeOf(err)), string(errs.CodeOf(err)), errs.Public(err)
	default:
		body.Error.Message = "the sandbox's port did not answer"
		pp.s.log.Debug("port proxy", "err", err)
	}
	writeJSON(w, status, body)
}

// serve authenticates, authorises and forwards one request to a port.
func (pp *portProxy) serve(w http.ResponseWriter, r *http.Request, pattern, id, portStr, rest string, hostMode bool) {
	s := pp.s
	port, ok := parsePort(portStr)
	if !ok {
		writeError(w, r, errs.Invalid("port must be a number between 1 and 65535"))
		return
	}
	if !sandbox.ValidID(id) {
		writeError(w, r, errs.NotFound("sandbox not found"))
		return
	}
	pol := s.policy(id, port)
	cred, err := s.portPrincipal(r, id, port, hostMode)
	if errors.Is(err, errNoPortCred) && hostMode && pol.Public && pol.Tenant != "" {
		// A public port (portpolicy.go): a request without a credential
		// acts on this port of this sandbox alone.
		cred, err = portCred{p: publicPrincipal(pol.Tenant, id, port)}, nil
	}
	if err != nil {
		if errs.CodeOf(err) == errs.CodeUnauthenticated {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paddock"`)
		}
		writeError(w, r, err)
		return
	}
	p := cred.p
	// Nothing of Paddock's goes into the sandbox: not the key, not the
	// token, whichever way it came (and the audit record sees none).
	r = r.Clone(r.Context())
	stripPortCredentials(r, cred.header)
	for _, h := range s.o.PortTokenHeaders {
		r.Header.Del(h)
	}
	if hostMode {
		// On a port host the mux matched nothing: name the sandbox and port
		// as the path would, or the audit record would not say whose port
		// was reached (the recorder files it under the {id} path value).
		r.SetPathValue("id", id)
		r.SetPathValue("port", portStr)
	}
	pp.gate.Serve(w, r, p, pattern, pp.need, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pp.forward(w, r, cred, id, port, rest, hostMode, pol)
	}))
}

// portsVet refuses a token minted for another sandbox or port as if this
// one did not exist (the port gate's Vet: after the request is recorded).
func portsVet(r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	port, _ := parsePort(r.PathValue("port"))
	if p.Sandbox != "" && p.Sandbox != id && p.Sandbox != portClaim(id, port) {
		return errs.NotFound("sandbox not found")
	}
	return nil
}

// forward sends one authorised request to the port.
func (pp *portProxy) forward(w http.ResponseWriter, r *http.Request, cred portCred, id string, port int, rest string, hostMode bool, pol PortPolicy) {
	s := pp.s
	// A port link's token names "{id}_p{port}", which is no sandbox: once
	// vetted, the caller acts on this sandbox alone (a key, too).
	sc := gate.Scope(r.Context())
	sc.Sandbox = id
	target, err := s.m.ExposePort(r.Context(), sc, id, port)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if hostMode && cred.query != "" {
		setPortCookie(w, r, cred.query)
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.Header.Get("Sec-Fetch-Mode") == "navigate" {
			// A browser: keep the token out of its address bar, history and
			// Referer; the cookie carries it from here.
			loc := r.URL.EscapedPath()
			if r.URL.RawQuery != "" {
				loc += "?" + r.URL.RawQuery
			}
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, loc, http.StatusSeeOther)
			return
		}
	}
	pr := &portReq{target: target, rest: rest, hostMode: hostMode}
	if pol.Host != "" {
		pr.host = maskHost(pol.Host, port)
	}
	ctx := context.WithValue(r.Context(), portCtxKey{}, pr)
	pp.rp.ServeHTTP(w, r.WithContext(ctx))
}

// portCred is how a port request authenticated.
type portCred struct {
	p       auth.Principal
	header  bool   // the Authorization header held a Paddock credential
	query   string // the token given in the URL, if that is what authenticated
	unbound bool   // p is valid but for another sandbox or port (answered 404 once audited: portsVet)
}

// portPrincipal authenticates a port request: an API key or token in the
// Authorization header, else a token in the URL, else (port hosts) one
// in the cookie. A token must have been minted for this sandbox or this
// very port; one for anything else is marked unbound (404, like a
// sandbox of another tenant). An Authorization header that is not
// Paddock's is the app's own and is passed on.
func (s *Server) portPrincipal(r *http.Request, id string, port int, hostMode bool) (portCred, error) {
	var c portCred
	bound := func(p auth.Principal) bool {
		return p.Sandbox == "" || p.Sandbox == id || p.Sandbox == portClaim(id, port)
	}
	// Credential leak into the sandbox (issue 14): "bearer KEY" is as
	// much Paddock's as "Bearer KEY" (schemes are case-insensitive:
	// gate.AuthParam), and with two Authorization headers one could be
	// checked and the other forwarded, so two are refused.
	tok, err := gate.Bearer(r.Header)
	if err != nil {
		return c, err
	}
	if tok != "" {
		parsed, _ := auth.ParseToken(tok)
		p, err := s.o.Auth.Authenticate(r.Context(), tok)
		switch {
		case err == nil:
			c.p, c.header, c.unbound = p, true, !bound(p)
			return c, nil
		case errs.CodeOf(err) != errs.CodeUnauthenticated:
			return c, err
		case parsed.Kind != auth.KindOpaque:
			// Paddock-shaped, so never the app's own: refused (and never
			// passed on into the sandbox).
			return c, errs.New(errs.CodeUnauthenticated, "invalid, expired or revoked credential")
		}
	}
	try := func(tok string) (auth.Principal, error) {
		p, err := s.o.Auth.Authenticate(r.Context(), tok)
		if err != nil {
			if errs.CodeOf(err) == errs.CodeUnauthenticated {
				return p, errs.New(errs.CodeUnauthenticated, "the port link's token is invalid or expired: ask for a new one")
			}
			return p, err
		}
		if p.TokenID == "" {
			// A key in a URL ends up in logs and histories.
			return p, errs.New(errs.CodeUnauthenticated, "only a sandbox token can be given in the URL; send an API key in the Authorization header")
		}
		return p, nil
	}
	if _, tok := s.headerToken(r); tok != "" { // E2B's traffic access token header, say
		p, err := try(tok)
		c.p, c.unbound = p, !bound(p)
		return c, err
	}
	if r.URL.RawQuery != "" {
		if tok := r.URL.Query().Get(PortTokenParam); tok != "" {
			p, err := try(tok)
			c.p, c.query, c.unbound = p, tok, !bound(p)
			return c, err
		}
	}
	if hostMode {
		var last error
		for _, ck := range r.Cookies() {
			if ck.Name != portCookie && ck.Name != portCookieSecure {
				continue
			}
			p, err := try(ck.Value)
			if err == nil && bound(p) {
				c.p = p
				return c, nil
			}
			if err == nil { // planted for another host: remember, keep looking
				c.p, c.unbound = p, true
				continue
			}
			last = err
		}
		if c.unbound {
			return c, nil
		}
		if last != nil {
			return c, last
		}
	}
	return c, errNoPortCred
}

// errNoPortCred: a port request without any credential.
var errNoPortCred = errs.New(errs.CodeUnauthenticated, "missing credentials: an API key (Authorization: Bearer KEY) or a port URL's token (POST /v1/sandboxes/{id}/ports/{port}/url)")

// atoiPort is a port host's port (0 when malformed).
func atoiPort(s string) int {
	n, _ := parsePort(s)
	return n
}

// stripPortCredentials removes Paddock's credentials from r: the
// Authorization header if it was Paddock's, the URL's token, the port
// cookie. The rest of the query and of the cookies stays byte for byte.
func stripPortCredentials(r *http.Request, authHeader bool) {
	if authHeader {
		r.Header.Del("Authorization")
	}
	if r.URL.RawQuery != "" {
		parts := strings.Split(r.URL.RawQuery, "&")
		kept := parts[:0]
		for _, kv := range parts {
			k, _, _ := strings.Cut(kv, "=")
			if uk, err := url.QueryUnescape(k); err == nil && uk == PortTokenParam || k == PortTokenParam {
				continue
			}
			kept = append(kept, kv)
		}
		if len(kept) != len(parts) {
			r.URL.RawQuery = strings.Join(kept, "&")
			r.RequestURI = ""
		}
	}
	if vals := r.Header.Values("Cookie"); len(vals) > 0 {
		var kept []string
		for _, line := range vals {
			for _, c := range strings.Split(line, ";") {
				name, _, _ := strings.Cut(strings.TrimSpace(c), "=")
				if name == portCookie || name == portCookieSecure || strings.TrimSpace(c) == "" {
					continue
				}
				kept = append(kept, strings.TrimSpace(c))
			}
		}
		r.Header.Del("Cookie")
		if len(kept) > 0 {
			r.Header.Set("Cookie", strings.Join(kept, "; "))
		}
	}
}

// setPortCookie keeps a port URL's token on the port host for the token's
// life: host-only, HttpOnly (the sandbox's scripts cannot read it),
// SameSite=Lax (other sites' forms and scripts do not carry it).
func setPortCookie(w http.ResponseWriter, r *http.Request, tok string) {
	name := portCookie
	if r.TLS != nil {
		name = portCookieSecure
	}
	maxAge := int(defaultPortURLTTL / time.Second)
	if p, err := auth.ParseToken(tok); err == nil && p.Kind == auth.KindToken {
		maxAge = int(time.Until(p.Claims.ExpiresAt) / time.Second)
	}
	if maxAge < 1 {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: tok, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
}
