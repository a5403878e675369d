package mcp

import (
	"context"
	"encoding/json"
	"net/http"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
)

// maxMessageBytes bounds one MCP request body (a file_write carries the
// whole file).
const maxMessageBytes = 16 << 20

// Handler serves MCP over streamable HTTP (mount it at /mcp). Every request
// needs `Authorization: Bearer KEY`, checked by authn exactly as for REST;
// a session is bound to the key that opened it (another key gets 403), and
// ends after the idle timeout. Browser origins other than the allowed ones
// are refused.
func (s *Server) Handler(authn auth.Authenticator) http.Handler {
	stream := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.http }, &sdk.StreamableHTTPOptions{
		SessionTimeout:      s.o.IdleTimeout,
		Logger:              quiet(s.log),
		MaxRequestBodyBytes: maxMessageBytes,
		// One JSON answer per call, not an event stream: cheaper for both
		// sides (the tools send nothing before their result).
		JSONResponse: true,
		// DNS rebinding: without a Host check in front, the SDK's applies.
		DisableLocalhostProtection: s.o.HostChecked,
	})
	// The SDK's bearer middleware only carries the principal (found by
	// authenticate) into the session as TokenInfo; its UserID binds the
	// session to the key (session hijacking with a stolen session id).
	bind := sdkauth.RequireBearerToken(tokenInfo, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return s.checkOrigin(s.authenticate(authn, s.limitSessions(bind(stream))))
}

func tokenInfo(ctx context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
	p, ok := gate.Principal(ctx)
	if !ok {
		return nil, sdkauth.ErrInvalidToken
	}
	scopes := make([]string, len(p.Scopes))
	for i, sc := range p.Scopes {
		scopes[i] = string(sc)
	}
	return &sdkauth.TokenInfo{
		Scopes: scopes,
		UserID: p.Tenant + "\x00" + p.KeyID + "\x00" + p.TokenID + "\x00" + p.Sandbox,
		Extra:  map[string]any{extraPrincipal: p, extraBaseURL: baseURL(r)},
	}, nil
}

// baseURL is where the request reached this server.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// The MCP endpoint's credential and error shape (package gate).
var (
	errNoBearer   = gate.ErrNoBearer
	errBadKey     = errs.New(errs.CodeUnauthenticated, "invalid or revoked API key")
	errCannotAuth = errs.New(errs.CodeUnavailable, "cannot check the API key right now")
)

// fail answers in the REST API's error shape; a refused key is told how
// to authenticate (RFC 6750).
func fail(w http.ResponseWriter, _ *http.Request, err error) {
	switch {
	case gate.Is(err, errNoBearer):
		w.Header().Set("WWW-Authenticate", `Bearer realm="paddock"`)
	case gate.Is(err, errBadKey):
		w.Header().Set("WWW-Authenticate", `Bearer realm="paddock", error="invalid_token"`)
	}
	writeError(w, errs.HTTPStatus(errs.CodeOf(err)), errs.CodeOf(err), errs.Public(err))
}

// authenticate puts next behind the gate: the bearer key checked with the
// server's Authenticator exactly as for REST, the request recorded (as
// "POST /mcp" and so on) before it is served. Which tool may do what is
// the services' to decide (the sandbox manager checks every call).
func (s *Server) authenticate(authn auth.Authenticator, next http.Handler) http.Handler {
	g := gate.New(authn, s.o.Auditor, s.log, gate.Surface{Name: "MCP", Credential: gate.RequiredBearer, Invalid: errBadKey,
		Unavailable: errCannotAuth, Limit: s.o.RateLimit, Fail: fail})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Wrap(r.Method+" /mcp", 0, next).ServeHTTP(w, r)
	})
}

// limitSessions refuses new sessions beyond the limits (each holds
// memory, and possibly a sandbox, until it ends or idles out):
// MaxSessions in all, MaxSessionsPerTenant of a tenant, MaxSessionsPerKey
// of a key (limits.go).
func (s *Server) limitSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			next.ServeHTTP(w, r)
			for ss := range s.http.Sessions() {
				if ss.ID() == id {
					return // not closed (not the caller's, or refused): still counts
				}
			}
			s.owners.forget(id) // closed: it counts no more (limits.go)
			return
		}
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		p, _ := gate.Principal(r.Context())
		o := owner{tenant: p.Tenant, key: p.KeyID}
		release, err := s.owners.reserve(o, s.http.Sessions(), s.o)
		if err != nil {
			w.Header().Set("Retry-After", "30")
			code := errs.CodeOf(err)
			if code == errs.CodeUnavailable {
				code = errs.CodeLimit // as before: the code names the limit, the status whose it is
			}
			writeError(w, errs.HTTPStatus(errs.CodeOf(err)), code, errs.Public(err))
			return
		}
		defer func() { release(w.Header().Get("Mcp-Session-Id")) }()
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses requests from browser pages, except the allowed
// origins. Even a same-origin page is refused: the only pages at this
// server's origin are sandboxes' exposed ports, which serve untrusted
// code (a page there driving /mcp would be a confused deputy). Host
// names (DNS rebinding) are checked by the server's hardening middleware
// and, for loopback listeners, by the SDK; this check stands on its own.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
				writeError(w, http.StatusForbidden, errs.CodeForbidden, "cross-site request refused")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		norm, ok := s.origins.Allowed(origin)
		if !ok {
			s.log.Warn("mcp: refused a request from a browser origin", "origin", clip(origin), "remote", r.RemoteAddr)
			writeError(w, http.StatusForbidden, errs.CodeForbidden, "requests from origin "+quote(clip(origin))+" are refused (allowed origins are configured on the server)")
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", norm)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// writeError answers in the REST API's error shape.
func writeError(w http.ResponseWriter, status int, code errs.Code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body.Error.Code, body.Error.Message = string(code), msg
	_ = json.NewEncoder(w).Encode(body)
}

func isNotFound(err error) bool { return errs.CodeOf(err) == errs.CodeNotFound }
