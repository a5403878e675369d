package console

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
)

const (
	// CookieName is the session cookie; its path is Prefix, so neither the
	// REST API nor a sandbox's port host ever receives it.
	CookieName = "paddock_console"
	// CSRFHeader carries the session's CSRF token on every call the page
	// makes; a WebSocket, which cannot set headers, offers it as the
	// subprotocol CSRFProtocol+token.
	CSRFHeader    = "X-Paddock-CSRF"
	CSRFProtocol  = "csrf."
	maxSignInBody = 4 << 10
)

// SessionInfo is what the page learns about its session (never the key).
type SessionInfo struct {
	KeyID     string       `json:"key_id"`
	Tenant    string       `json:"tenant"`
	Scopes    []auth.Scope `json:"scopes"`
	CSRF      string       `json:"csrf"`
	ExpiresAt time.Time    `json:"expires_at"`
}

func info(s *session) SessionInfo {
	return SessionInfo{KeyID: s.p.KeyID, Tenant: s.p.Tenant, Scopes: s.p.Scopes, CSRF: s.csrf, ExpiresAt: s.expires}
}

func (c *Console) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true,
		Secure: c.secure(r), SameSite: http.SameSiteStrictMode}
}

func (c *Console) current(r *http.Request) (*session, bool) {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return nil, false
	}
	return c.st.get(ck.Value)
}

var errSignedOut = errs.New(errs.CodeUnauthenticated, "not signed in to the console (or the session ended)")

// withSession admits a request of a signed-in page: the session cookie,
// then the CSRF token (header, or subprotocol for a WebSocket), and for
// anything that changes state or opens a socket a same-origin Origin.
// SameSite=Strict alone does not stop a same-site attacker — a sandbox's
// port served on a sibling host is same-site — so the token is required on
// every call, reads included.
func (c *Console) withSession(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c.refuseInsecure(w, r) {
			return
		}
		s, ok := c.current(r)
		if !ok {
			writeError(w, errSignedOut)
			return
		}
		ws := isWebSocket(r)
		tok := r.Header.Get(CSRFHeader)
		if ws {
			tok = wsCSRF(r)
		}
		if !s.csrfOK(tok) {
			writeError(w, errs.New(errs.CodeForbidden, "missing or wrong CSRF token (reload the console)"))
			return
		}
		if (ws || !safeMethod(r.Method)) && !sameOrigin(r) {
			writeError(w, errs.New(errs.CodeForbidden, "cross-site request refused"))
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, s)), s)
	}
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// wsCSRF finds the token among the offered subprotocols.
func wsCSRF(r *http.Request) string {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(p), CSRFProtocol); ok {
				return t
			}
		}
	}
	return ""
}

// sessionInfo answers whether the page is signed in, with the CSRF token
// it needs (a reload loses the page's memory; the cookie survives).
func (c *Console) sessionInfo(w http.ResponseWriter, r *http.Request) {
	if c.refuseInsecure(w, r) {
		return
	}
	s, ok := c.current(r)
	if !ok {
		writeError(w, errSignedOut)
		return
	}
	// A revoked key signs the console out here too, not only on the next
	// API call.
	if !c.stillValid(r.Context(), s) {
		writeError(w, errSignedOut)
		return
	}
	writeJSON(w, http.StatusOK, info(s))
}

// signIn exchanges an API key for a session. The request must come from a
// page of this server (login CSRF: a foreign page signing a visitor in
// with the attacker's key) and carry JSON, which no plain HTML form can.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if c.refuseInsecure(w, r) {
		return
	}
	if !sameOrigin(r) {
		writeError(w, errs.New(errs.CodeForbidden, "cross-site sign-in refused"))
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, errs.Invalid("sign-in takes a JSON body {\"key\": \"...\"}"))
		return
	}
	var body struct {
		Key string `json:"key"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxSignInBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, errs.Invalid("sign-in takes a JSON body {\"key\": \"...\"}"))
		return
	}
	key := strings.TrimSpace(body.Key)
	if key == "" {
		writeError(w, errs.Invalid("enter an API key"))
		return
	}
	p, err := c.o.Auth.Authenticate(r.Context(), key)
	if err != nil {
		if errs.CodeOf(err) == errs.CodeUnauthenticated {
			err = errs.New(errs.CodeUnauthenticated, "invalid, expired or revoked API key")
		}
		writeError(w, err)
		return
	}
	if p.Sandbox != "" {
		writeError(w, errs.New(errs.CodeForbidden, "a sandbox token cannot sign in to the console; use an API key"))
		return
	}
	end, ok := c.audit(w, r, p, "POST "+Prefix+"/session")
	if !ok {
		return
	}
	if old, ok := c.current(r); ok {
		c.st.end(old)
	}
	s, value, err := c.st.create(key, p)
	if err != nil {
		end(http.StatusTooManyRequests)
		writeError(w, err)
		return
	}
	http.SetCookie(w, c.cookie(r, value, int(c.o.SessionTTL/time.Second)))
	end(http.StatusOK)
	writeJSON(w, http.StatusOK, info(s))
}

func (c *Console) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	end, ok := c.audit(w, r, s.p, "DELETE "+Prefix+"/session")
	if !ok {
		return
	}
	c.st.end(s)
	http.SetCookie(w, c.cookie(r, "", -1))
	end(http.StatusNoContent)
	w.WriteHeader(http.StatusNoContent)
}

// audit opens the record of a console action; on failure it answers 503
// and the action does not happen (the audit log fails closed).
func (c *Console) audit(w http.ResponseWriter, r *http.Request, p auth.Principal, route string) (func(int), bool) {
	if c.o.Auditor == nil {
		return func(int) {}, true
	}
	end, err := c.o.Auditor.Begin(r, p, route)
	if err != nil {
		c.log.Error("audit log unavailable; refusing console request", "route", route, "err", err)
		writeError(w, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act"))
		return nil, false
	}
	return end, true
}

// stillValid re-authenticates the session's key; a key that no longer
// authenticates ends every session of it.
func (c *Console) stillValid(ctx context.Context, s *session) bool {
	_, err := c.o.Auth.Authenticate(ctx, s.key)
	if err == nil {
		return true
	}
	if errs.CodeOf(err) == errs.CodeUnauthenticated {
		c.log.Info("console signed out: its key no longer authenticates", "key", s.p.KeyID, "tenant", s.p.Tenant)
		c.st.endKey(s.p)
		return false
	}
	return true // a store hiccup is not a revocation; the API decides on the next call
}
