package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/e2b"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenant"
)

// TestWithE2B: serve's mounts put the E2B-compatible API on the API's
// port beside /mcp and Paddock's own routes, none shadowing another (a
// clash would panic in api.New), and a mount already taken is left alone.
func TestWithE2B(t *testing.T) {
	db, err := store.Open(t.TempDir(), auth.Migrations...)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	authn, err := auth.NewService(auth.Options{DB: db.SQL(), Tenants: tenant.NewStore(db.SQL()), Secret: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	st := &stack{db: db, authn: authn, mgr: sandbox.New(sandbox.Config{Limits: sandbox.DefaultLimits(1)}, sandbox.Deps{})}
	defer st.Close()
	log := slog.New(slog.DiscardHandler)
	marker := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) })
	}
	mounts := withE2B(map[string]http.Handler{"/mcp": marker("mcp")}, st, log)
	for _, p := range e2b.MountPatterns {
		if mounts[p] == nil {
			t.Errorf("%s is not mounted", p)
		}
	}
	srv := httptest.NewServer(api.New(api.Options{Log: log, Manager: st.mgr, Auth: authn, Mounts: mounts}).Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path string
		hdr  map[string]string
		want string
	}{
		{"/v2/sandboxes", nil, `{"code":401,`},                                                      // E2B's control plane
		{"/health", map[string]string{"E2b-Sandbox-Id": "sb-x"}, `{"code":401,`},                    // envd
		{"/process.Process/List", map[string]string{"E2b-Sandbox-Id": "sb-x"}, `"unauthenticated"`}, // Connect
		{"/mcp", nil, "mcp"},
		{"/v1/sandboxes", nil, `{"error":{"code":"unauthenticated"`}, // Paddock's own
		{"/healthz", nil, `"ok":true`},
	} {
		req, _ := http.NewRequest("GET", srv.URL+tc.path, nil)
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		if tc.path == "/process.Process/List" {
			req.Method = "POST"
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %s; want %s", tc.path, b, tc.want)
		}
	}
	taken := withE2B(map[string]http.Handler{"/files": marker("mine")}, st, log)
	rr := httptest.NewRecorder()
	taken["/files"].ServeHTTP(rr, httptest.NewRequest("GET", "/files", nil))
	if rr.Body.String() != "mine" {
		t.Errorf("a taken mount was replaced: %q", rr.Body.String())
	}
}
