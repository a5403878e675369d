package console

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
)

func principal(tenant, key string) auth.Principal {
	return auth.Principal{KeyID: key, Tenant: tenant, Scopes: []auth.Scope{auth.ScopeRead}}
}

func TestSessionBounds(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	st := newStore(time.Hour, 10*time.Minute, 3, 2)
	st.now = func() time.Time { return now }
	a1, v1, err := st.create("k1", principal("t", "key_a"))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	_, v2, _ := st.create("k1", principal("t", "key_a"))
	now = now.Add(time.Second)
	_, v3, _ := st.create("k1", principal("t", "key_a")) // the key's third: its oldest goes
	if _, ok := st.get(v1); ok {
		t.Error("the key's oldest session survived its per-key bound")
	}
	select {
	case <-a1.Done():
	default:
		t.Error("an evicted session's Done was not closed")
	}
	for _, v := range []string{v2, v3} {
		if _, ok := st.get(v); !ok {
			t.Error("a newer session was lost")
		}
	}
	if _, _, err := st.create("k2", principal("t", "key_b")); err != nil {
		t.Fatal(err)
	}
	// Server-wide bound: refused, and nobody else is signed out for it.
	if _, _, err := st.create("k3", principal("u", "key_c")); errs.CodeOf(err) != errs.CodeLimit {
		t.Fatalf("beyond the server-wide bound: %v, want limit_exceeded", err)
	}
	if st.count() != 3 {
		t.Fatalf("count %d, want 3", st.count())
	}
	// Idle and absolute expiry.
	now = now.Add(11 * time.Minute)
	if _, ok := st.get(v3); ok {
		t.Error("an idle session is still valid")
	}
	st2 := newStore(time.Hour, time.Hour, 10, 10)
	st2.now = func() time.Time { return now }
	s, v, _ := st2.create("k", principal("t", "key_a"))
	for i := 0; i < 6; i++ {
		now = now.Add(9 * time.Minute)
		if !st2.touch(s) {
			t.Fatal("an active session expired early")
		}
	}
	now = now.Add(9 * time.Minute) // 63 minutes after sign-in
	if _, ok := st2.get(v); ok {
		t.Error("a session outlived its absolute lifetime")
	}
	if _, ok := st2.get(""); ok {
		t.Error("an empty cookie found a session")
	}
}

func TestEndKey(t *testing.T) {
	st := newStore(time.Hour, time.Hour, 10, 10)
	a, _, _ := st.create("k", principal("t", "key_a"))
	b, _, _ := st.create("k", principal("t", "key_a"))
	c, vc, _ := st.create("k2", principal("t", "key_b"))
	st.endKey(a.p)
	for _, s := range []*session{a, b} {
		select {
		case <-s.Done():
		default:
			t.Error("a session of the revoked key lives on")
		}
	}
	if _, ok := st.get(vc); !ok || c.ended {
		t.Error("another key's session ended")
	}
}

func TestAPIPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"/ui/api/v1/sandboxes", "/v1/sandboxes", true},
		{"/ui/api/v1/sandboxes/sb-1/files/list", "/v1/sandboxes/sb-1/files/list", true},
		{"/ui/api/v1/", "/v1/", true},
		{"/ui/api/metrics", "/metrics", true},
		{"/ui/api/v1/../ui/session", "", false},
		{"/ui/api/v1/./sandboxes", "", false},
		{"/ui/api/healthz", "", false},
		{"/ui/api/ui/session", "", false},
		{"/ui/api/v1", "", false},
		{"/ui/apiv1/sandboxes", "", false},
		{"/ui/api//v1/sandboxes", "", false},
		{"/ui/api/v1//sandboxes", "", false},
		{"/ui/api/v1/a\\b", "", false},
		{"/v1/sandboxes", "", false},
	} {
		got, ok := apiPath(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("apiPath(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzAPIPath: whatever the page asks for, the console reaches only the
// versioned API (or /metrics), by a clean path.
func FuzzAPIPath(f *testing.F) {
	for _, s := range []string{"/ui/api/v1/sandboxes", "/ui/api/v1/../x", "/ui/api/metrics", "/ui/api/v1/%2e%2e/x", "/ui/api/v1/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, ok := apiPath(p)
		if !ok {
			return
		}
		if got != "/metrics" && !strings.HasPrefix(got, "/v1/") {
			t.Fatalf("%q maps outside the API: %q", p, got)
		}
		for _, seg := range strings.Split(got, "/")[1:] {
			if seg == ".." || seg == "." {
				t.Fatalf("%q maps to an unclean path %q", p, got)
			}
		}
		if strings.ContainsAny(got, "\\\x00") {
			t.Fatalf("%q maps to %q", p, got)
		}
	})
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, fetchSite string
		want              bool
	}{
		{"http://paddock.test:7070", "", true},
		{"https://paddock.test:7070", "", true},
		{"http://PADDOCK.test:7070", "", true},
		{"http://evil.example", "", false},
		{"http://8080-sb-x.paddock.test", "", false}, // a sandbox's port host: same site, not same origin
		{"http://paddock.test:7071", "", false},
		{"null", "", false},
		{"file://paddock.test:7070", "", false},
		{"", "same-origin", true},
		{"", "same-site", false},
		{"", "", false},
	} {
		r := httptest.NewRequest("POST", "http://paddock.test:7070/ui/session", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if tc.fetchSite != "" {
			r.Header.Set("Sec-Fetch-Site", tc.fetchSite)
		}
		if got := sameOrigin(r); got != tc.want {
			t.Errorf("Origin %q, Sec-Fetch-Site %q: %v, want %v", tc.origin, tc.fetchSite, got, tc.want)
		}
	}
}

type noAuth struct{ called bool }

func (n *noAuth) Authenticate(context.Context, string) (auth.Principal, error) {
	n.called = true
	return principal("t", "key_a"), nil
}

// A session cookie over plain HTTP on a non-loopback address would cross
// the network in clear: the console refuses to sign in there unless the
// server was told a TLS proxy is in front (--insecure-listen).
func TestPlainHTTPOffLoopbackRefused(t *testing.T) {
	for _, tc := range []struct {
		local    string
		insecure bool
		want     int
	}{
		{"10.1.2.3:7070", false, http.StatusForbidden},
		{"10.1.2.3:7070", true, http.StatusOK},
		{"127.0.0.1:7070", false, http.StatusOK},
		{"[::1]:7070", false, http.StatusOK},
	} {
		a := &noAuth{}
		c := New(Options{Auth: a, AllowInsecure: tc.insecure})
		r := httptest.NewRequest("POST", "http://paddock.test:7070/ui/session", strings.NewReader(`{"key":"pdk_x"}`))
		r.Header.Set("Origin", "http://paddock.test:7070")
		r.Header.Set("Content-Type", "application/json")
		addr, _ := net.ResolveTCPAddr("tcp", tc.local)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
		w := httptest.NewRecorder()
		c.Handler().ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("local %s insecure=%v: %d, want %d (%s)", tc.local, tc.insecure, w.Code, tc.want, w.Body)
		}
		if tc.want == http.StatusForbidden && (a.called || w.Header().Get("Set-Cookie") != "") {
			t.Errorf("local %s: refused, but the key was checked or a cookie set", tc.local)
		}
		c.Close()
	}
}

func TestPageHeaders(t *testing.T) {
	c := New(Options{Auth: &noAuth{}})
	defer c.Close()
	for _, p := range []string{"/ui/", "/ui/assets/app.js", "/ui/assets/app.css"} {
		w := httptest.NewRecorder()
		c.Handler().ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", p, w.Code)
		}
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", p, w.Header())
		}
	}
	// The page has no inline script or style for the CSP to allow.
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/ui/", nil))
	body := w.Body.String()
	if strings.Contains(body, "<style") || strings.Contains(body, "style=") || strings.Count(body, "<script") != strings.Count(body, `<script type="module" src=`) {
		t.Errorf("inline script or style in the page:\n%s", body)
	}
	for _, p := range []string{"/ui/assets/../console.go", "/ui/assets/index.html", "/ui/nope"} {
		w := httptest.NewRecorder()
		c.Handler().ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if w.Code != http.StatusNotFound && w.Code != http.StatusTemporaryRedirect {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
}
