//go:build linux

package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/console"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	tenant_ "github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

// stack is a real Paddock stack (testenv) with the console mounted in
// front of its REST API, as paddock serve mounts it.
type stack struct {
	*testenv.Env
	c   *console.Console
	srv *httptest.Server
}

func newStack(t *testing.T) *stack {
	e := testenv.New(t, testenv.Options{})
	c := console.New(console.Options{Auth: e.Auth, Sandboxes: e.Manager})
	mux := http.NewServeMux()
	mux.Handle("/ui", c.Handler())
	mux.Handle("/ui/", c.Handler())
	mux.Handle("/", e.Server.Config.Handler)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); c.Close() })
	return &stack{Env: e, c: c, srv: srv}
}

// page is one browser: its cookie and CSRF token.
type page struct {
	t      *testing.T
	s      *stack
	cookie *http.Cookie
	csrf   string
}

func (s *stack) do(t *testing.T, method, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (s *stack) signIn(t *testing.T, key string) *page {
	t.Helper()
	resp := s.do(t, "POST", "/ui/session", `{"key":"`+key+`"}`, "Content-Type", "application/json", "Origin", s.srv.URL)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("sign-in: %d %s", resp.StatusCode, b)
	}
	var info console.SessionInfo
	raw, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(raw), key) {
		t.Fatal("the sign-in answer holds the key")
	}
	_ = json.Unmarshal(raw, &info)
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == console.CookieName {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/ui" || ck.Secure || ck.Value == key {
		t.Fatalf("session cookie: %+v", ck)
	}
	return &page{t: t, s: s, cookie: ck, csrf: info.CSRF}
}

// call makes a page's call; withToken false leaves the CSRF token out.
func (p *page) call(method, path, body string, withToken bool, hdr ...string) (int, string) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.s.srv.URL+path, strings.NewReader(body))
	req.AddCookie(p.cookie)
	if withToken {
		req.Header.Set(console.CSRFHeader, p.csrf)
	}
	if method != "GET" {
		req.Header.Set("Origin", p.s.srv.URL)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (s *stack) key(t *testing.T, tenant string, scopes ...auth.Scope) auth.CreatedKey {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Auth.Tenants().Create(ctx, tenant, tenant_.Quotas{}); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatal(err)
	}
	k, err := s.Auth.CreateKey(ctx, s.Scope, auth.KeyRequest{Tenant: tenant, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSignInAndCSRF: what sign-in refuses, and that every call through
// the console needs the session's CSRF token and, to change anything, a
// same-origin Origin; a credential the page adds is ignored.
func TestSignInAndCSRF(t *testing.T) {
	s := newStack(t)
	alpha := s.key(t, "alpha", auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec)
	beta := s.key(t, "beta", auth.ScopeRead, auth.ScopeWrite)
	for _, tc := range []struct {
		name, body string
		hdr        []string
		want       int
	}{
		{"cross-site", `{"key":"` + alpha.Key + `"}`, []string{"Content-Type", "application/json", "Origin", "https://evil.example"}, 403},
		{"no origin", `{"key":"` + alpha.Key + `"}`, []string{"Content-Type", "application/json"}, 403},
		{"form post", `key=` + alpha.Key, []string{"Content-Type", "application/x-www-form-urlencoded", "Origin", s.srv.URL}, 400},
		{"wrong key", `{"key":"pdk_nope"}`, []string{"Content-Type", "application/json", "Origin", s.srv.URL}, 401},
		{"unknown field", `{"key":"` + alpha.Key + `","x":1}`, []string{"Content-Type", "application/json", "Origin", s.srv.URL}, 400},
	} {
		resp := s.do(t, "POST", "/ui/session", tc.body, tc.hdr...)
		resp.Body.Close()
		if resp.StatusCode != tc.want || len(resp.Cookies()) != 0 {
			t.Errorf("%s: %d (cookies %d), want %d and none", tc.name, resp.StatusCode, len(resp.Cookies()), tc.want)
		}
	}
	sb := s.Create(sandbox.Spec{})
	tok, err := s.Auth.MintToken(s.Scope, sb.ID, []auth.Scope{auth.ScopeRead}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	resp := s.do(t, "POST", "/ui/session", `{"key":"`+tok.Token+`"}`, "Content-Type", "application/json", "Origin", s.srv.URL)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a sandbox token signed in: %d", resp.StatusCode)
	}

	p := s.signIn(t, alpha.Key)
	if code, _ := p.call("GET", "/ui/api/v1/sandboxes", "", false); code != http.StatusForbidden {
		t.Errorf("a call without the CSRF token: %d, want 403", code)
	}
	if code, _ := p.call("GET", "/ui/api/v1/sandboxes", "", true, console.CSRFHeader, "wrong"); code != http.StatusForbidden {
		t.Errorf("a call with a wrong CSRF token: %d, want 403", code)
	}
	if code, _ := p.call("POST", "/ui/api/v1/sandboxes", `{}`, true, "Origin", "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("a cross-site create: %d, want 403", code)
	}
	// The page's own Authorization is dropped: the call acts as the
	// session's key (tenant alpha), not as beta.
	code, body := p.call("POST", "/ui/api/v1/sandboxes", `{}`, true, "Authorization", "Bearer "+beta.Key)
	if code != http.StatusCreated || !strings.Contains(body, `"tenant":"alpha"`) {
		t.Fatalf("create through the console: %d %s", code, body)
	}
	var made sandbox.Sandbox
	_ = json.Unmarshal([]byte(body), &made)
	// The API's checks apply: another tenant's sandbox is not found; a
	// scope the key lacks is refused.
	if code, _ := p.call("GET", "/ui/api/v1/sandboxes/"+sb.ID, "", true); code != http.StatusNotFound {
		t.Errorf("another tenant's sandbox: %d, want 404", code)
	}
	if code, _ := p.call("GET", "/ui/api/v1/keys", "", true); code != http.StatusForbidden {
		t.Errorf("admin route with a non-admin key: %d, want 403", code)
	}
	// Paths outside the API are refused before anything runs.
	for _, path := range []string{"/ui/api/ui/session", "/ui/api/healthz", "/ui/api/v1/../ui/session"} {
		if code, _ := p.call("GET", path, "", true); code != http.StatusNotFound && code != http.StatusTemporaryRedirect {
			t.Errorf("%s: %d", path, code)
		}
	}
	pb := s.signIn(t, beta.Key)
	if code, body := pb.call("GET", "/ui/api/v1/sandboxes", "", true); code != http.StatusOK || strings.Contains(body, made.ID) {
		t.Errorf("beta's list: %d %s", code, body)
	}
	// Sign-out ends the session; the cookie no longer works.
	if code, _ := p.call("DELETE", "/ui/session", "", true); code != http.StatusNoContent {
		t.Errorf("sign-out: %d", code)
	}
	if code, _ := p.call("GET", "/ui/api/v1/sandboxes", "", true); code != http.StatusUnauthorized {
		t.Errorf("after sign-out: %d, want 401", code)
	}
}

// TestRevokedKeySignsOut: the feed pushes the list and its changes, and a
// revoked key ends the session at the next push and request.
func TestRevokedKeySignsOut(t *testing.T) {
	s := newStack(t)
	k := s.key(t, "gamma", auth.ScopeRead, auth.ScopeWrite)
	p := s.signIn(t, k.Key)
	req, _ := http.NewRequest("GET", s.srv.URL+"/ui/feed", nil)
	req.AddCookie(p.cookie)
	req.Header.Set(console.CSRFHeader, p.csrf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("feed: %v %v", resp, err)
	}
	defer resp.Body.Close()
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{ev, v}
			}
		}
		close(events)
	}()
	next := func(want string) string {
		t.Helper()
		select {
		case e, ok := <-events:
			if !ok || e[0] != want {
				t.Fatalf("feed: got %v, want %s", e, want)
			}
			return e[1]
		case <-time.After(20 * time.Second):
			t.Fatalf("feed: no %s event", want)
		}
		return ""
	}
	if d := next("snapshot"); !strings.Contains(d, `"sandboxes":[]`) {
		t.Fatalf("snapshot: %s", d)
	}
	sc := sandbox.Scope{Tenant: "gamma", Actor: k.ID, Rights: rights.All}
	sb, err := s.Manager.Create(context.Background(), sc, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if d := next("changes"); !strings.Contains(d, sb.ID) {
		t.Fatalf("changes: %s", d)
	}
	if err := s.Manager.Delete(context.Background(), sc, sb.ID); err != nil {
		t.Fatal(err)
	}
	if d := next("changes"); !strings.Contains(d, `"remove":["`+sb.ID+`"]`) {
		t.Fatalf("changes: %s", d)
	}
	before := s.c.Sessions()
	if err := s.Auth.RevokeKey(context.Background(), s.Scope, k.ID); err != nil {
		t.Fatal(err)
	}
	// A change wakes the feed; its fetch finds the key revoked.
	if _, err := s.Manager.Create(context.Background(), sandbox.Scope{Tenant: "gamma", Actor: "admin", Rights: rights.All}, sandbox.Spec{}); err != nil {
		t.Fatal(err)
	}
	next("signedout")
	if s.c.Sessions() != before-1 {
		t.Errorf("sessions: %d, want %d", s.c.Sessions(), before-1)
	}
	if code, _ := p.call("GET", "/ui/session", "", false); code != http.StatusUnauthorized {
		t.Errorf("the revoked key's session: %d, want 401", code)
	}
}
