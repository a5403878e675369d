package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/e2b"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenant"
)

type obsFunc func(context.Context, sandbox.Event) error

func (f obsFunc) Event(ctx context.Context, e sandbox.Event) error { return f(ctx, e) }

// The audit log refusing an intent stops the fan-out (the action will not
// happen); a result reaches every observer even if the log failed.
func TestFanout(t *testing.T) {
	var seen []string
	failing := obsFunc(func(context.Context, sandbox.Event) error { return errors.New("disk full") })
	counting := obsFunc(func(_ context.Context, e sandbox.Event) error { seen = append(seen, e.Phase); return nil })
	f := fanout{failing, counting}
	if err := f.Event(context.Background(), sandbox.Event{Phase: "intent"}); err == nil {
		t.Fatal("intent error lost")
	}
	if err := f.Event(context.Background(), sandbox.Event{Phase: "result"}); err == nil {
		t.Fatal("result error lost")
	}
	if strings.Join(seen, ",") != "result" {
		t.Fatalf("seen %v", seen)
	}
}

// A configuration that cannot work is refused before anything is opened:
// the data directory is not even made.
func TestCheck(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("Open refuses every configuration off Linux")
	}
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"no data", Config{}, "no data directory"},
		{"cert without key", Config{DataDir: "/x", HTTP: HTTPConfig{TLSCert: "c.pem"}}, "--tls-cert and --tls-key go together"},
		{"key without cert", Config{DataDir: "/x", HTTP: HTTPConfig{TLSKey: "k.pem"}}, "--tls-cert and --tls-key go together"},
		{"ports domain", Config{DataDir: "/x", PortsDomain: "not a name"}, `--ports-domain "not a name"`},
		{"ports domain too long", Config{DataDir: "/x", PortsDomain: strings.Repeat("a.", 120) + "com"}, "--ports-domain"},
		{"bad pool", Config{DataDir: "/x", Network: &NetworkConfig{PoolV4: "10.0.0.0/33"}}, "--net-pool"},
		{"two networks", Config{DataDir: "/x", Network: &NetworkConfig{}, ExternalNetwork: nopNetwork{}}, "pass one"},
		{"default runtime", Config{DataDir: "/x", DefaultRuntime: "kata"}, `--default-runtime "kata": want native or gvisor`},
		{"runsc missing", Config{DataDir: "/x", Runsc: "/nonexistent/runsc"}, "--runsc /nonexistent/runsc: gVisor is not available on this server: runsc is not installed"},
		{"runsc not gVisor's", Config{DataDir: "/x", Runsc: os.Args[0]}, "runsc is not gVisor's runsc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir() + "/data"
			if tc.c.DataDir != "" {
				tc.c.DataDir = dir
			}
			_, err := Open(context.Background(), tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused configuration made its data directory (%v)", err)
			}
		})
	}
	c := Config{DataDir: "/x", PortsDomain: "Ports.Example.COM.", Network: &NetworkConfig{PoolV6: "none"}}
	if err := c.check(); err != nil || c.PortsDomain != "ports.example.com" {
		t.Fatalf("check = %v, domain %q; want it normalised", err, c.PortsDomain)
	}
}

type nopNetwork struct{ runtime.Network }

// The E2B-compatible API sits on the API's port beside /mcp and Paddock's
// own routes, none shadowing another (a clash would panic in api.New), and
// a mount already taken is left alone.
func TestE2BMounts(t *testing.T) {
	db, err := store.Open(t.TempDir(), Migrations()...)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	authn, err := auth.NewService(auth.Options{DB: db.SQL(), Tenants: tenant.NewStore(db.SQL()), Secret: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer authn.Close()
	log := slog.New(slog.DiscardHandler)
	s := &Server{cfg: Config{E2B: true}, log: log, Store: db, Auth: authn,
		Manager: sandbox.New(sandbox.Config{Limits: sandbox.DefaultLimits(1)}, sandbox.Deps{})}
	defer s.Close(context.Background())
	marker := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) })
	}
	mounts := map[string]http.Handler{"/mcp": marker("mcp")}
	s.openE2B(mounts)
	if s.E2B == nil {
		t.Fatal("no E2B API")
	}
	for _, p := range e2b.MountPatterns {
		if mounts[p] == nil {
			t.Errorf("%s is not mounted", p)
		}
	}
	srv := httptest.NewServer(api.New(api.Options{Log: log, Manager: s.Manager, Auth: authn, Mounts: mounts}).Handler())
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
	taken := map[string]http.Handler{"/files": marker("mine")}
	addMounts(taken, map[string]http.Handler{"/files": marker("e2b"), "/health": marker("e2b")}, log)
	rr := httptest.NewRecorder()
	taken["/files"].ServeHTTP(rr, httptest.NewRequest("GET", "/files", nil))
	if rr.Body.String() != "mine" || taken["/health"] == nil {
		t.Errorf("a taken mount was replaced (%q), or a free one not added", rr.Body.String())
	}
}

// Migrations are every package's, once each: a data directory does not
// depend on which parts a server runs.
func TestMigrations(t *testing.T) {
	db, err := store.Open(t.TempDir(), Migrations()...)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"api_keys", "network_attachments", "secrets"} {
		var n int
		if err := db.SQL().QueryRow(`SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?`, table).Scan(&n); err != nil || n != 1 {
			t.Errorf("table %s: %d %v", table, n, err)
		}
	}
}
