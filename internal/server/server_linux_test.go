package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/guestbin"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret/inject"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/internal/testenv/netlab"
	"github.com/paddockhq/paddock/wire"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// syncBuf is a log sink tests read while the server writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveConfig is what paddock serve's defaults give, in a data directory,
// cgroup prefix and uid range of the test's own, on a loopback port of
// the kernel's choice; no sandbox network (host-wide).
func serveConfig(t *testing.T, logs io.Writer) server.Config {
	t.Helper()
	testenv.RequireRoot(t)
	dir, err := os.MkdirTemp("", "pdks") // short: socket paths live under it
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("paddock-srvtest-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	t.Cleanup(func() { cleanup(dir, prefix) })
	return server.Config{DataDir: dir, Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Version: "test", CgroupPrefix: prefix, UIDBase: 3_300_004_352, Slots: 16, LayersSize: 1 << 30, PoolSize: 1,
		HTTP: server.HTTPConfig{Listen: "127.0.0.1:0"}, Secrets: &server.SecretsConfig{}, Browser: &browser.Options{},
		E2B: true, MCP: true}
}

// cleanup removes a data directory (detaching what is mounted below it)
// and the cgroup prefix's empty groups.
func cleanup(dir, prefix string) {
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		var mounts []string
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
				mounts = append(mounts, f[4])
			}
		}
		for i := len(mounts) - 1; i >= 0; i-- {
			_ = syscall.Unmount(mounts[i], syscall.MNT_DETACH)
		}
	}
	_ = os.RemoveAll(dir)
	if cg, err := cgroup.Detect("/sys/fs/cgroup", prefix); err == nil {
		_ = cg.RemovePrefix()
	}
}

func status(t *testing.T, method, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The house as serve runs it: one listener with REST, E2B, /mcp and the
// secrets behind the keys; the data directory locked while open; a
// shutdown that leaves sandboxes running for the next server, which
// reattaches them.
func TestServeHouse(t *testing.T) {
	logs := &syncBuf{}
	cfg := serveConfig(t, logs)
	srv, err := server.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	for name, missing := range map[string]bool{"network": srv.Network != nil, "secrets": srv.Secrets == nil,
		"browser": srv.Browser == nil, "E2B": srv.E2B == nil, "MCP": srv.MCP == nil, "audit": srv.AuditLog() == nil} {
		if missing {
			t.Errorf("%s: present %v, want the opposite", name, !missing)
		}
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	key := map[string]string{"Authorization": "Bearer " + srv.AdminKey}

	// One guest line, saying which guest sandboxes run.
	want := `"guest":"re-exec"`
	if guestbin.Embedded() {
		want = `"guest":"embedded"`
	}
	if n := strings.Count(logs.String(), `"guest":`); n != 1 || !strings.Contains(logs.String(), want) {
		t.Errorf("the log has %d guest lines, want one with %s:\n%s", n, want, logs.String())
	}

	for _, tc := range []struct {
		method, path string
		hdr          map[string]string
		want         int
	}{
		{"GET", "/healthz", nil, 200},
		{"GET", "/v1/sandboxes", nil, 401},
		{"GET", "/v1/secrets", nil, 401},
		{"GET", "/v1/secrets", key, 200},
		{"POST", "/mcp", nil, 401},
		{"GET", "/v2/sandboxes", nil, 401},
		{"GET", "/metrics", key, 200},
		{"GET", "/v1/sandboxes", map[string]string{"Authorization": "Bearer " + srv.AdminKey, "Host": "evil.example"}, 403}, // the hardening
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		if h := tc.hdr["Host"]; h != "" {
			req.Host = h
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}

	c := client.New(base, srv.AdminKey)
	ctx := context.Background()
	sb, err := c.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "echo $((6*7))"}}); err != nil || r.Stdout != "42\n" {
		t.Fatalf("exec: %+v %v", r, err)
	}
	recs, err := srv.AuditLog().Query(ctx, audit.Query{Sandbox: sb.ID, Action: "exec"})
	if err != nil || len(recs.Records) < 2 {
		t.Errorf("the exec's intent and result are not in the audit log: %d records, %v", len(recs.Records), err)
	}

	// A second server on the same data directory is refused.
	again := cfg
	again.Log = slog.New(slog.DiscardHandler)
	if s2, err := server.Open(ctx, again); err == nil || !strings.Contains(err.Error(), "another paddock server is using") {
		if s2 != nil {
			_ = s2.Close(ctx)
		}
		t.Fatalf("second Open on a locked data directory = %v", err)
	}

	// Shutdown stops serving; the sandbox keeps running.
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve = %v after Shutdown", err)
	}
	if err := srv.Close(sctx); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(sctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	// The next server takes the lock and reattaches the sandbox.
	cfg.Log = slog.New(slog.DiscardHandler)
	next, err := server.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer next.Close(ctx)
	if next.AdminKey != srv.AdminKey {
		t.Error("the generated admin key was not kept in the data directory")
	}
	scope := sandbox.Scope{Tenant: auth.DefaultTenant, Actor: "test", Rights: rights.All}
	if _, err := next.Manager.Get(ctx, scope, sb.ID); err != nil {
		t.Fatalf("not reattached: %v", err)
	}
	if err := next.Manager.Delete(ctx, scope, sb.ID); err != nil {
		t.Fatal(err)
	}
}

// Audit.Disable: no audit log, no metrics, no Auditor; the API still
// serves (the bare path that benchmarks measure).
func TestAuditDisabled(t *testing.T) {
	cfg := serveConfig(t, io.Discard)
	cfg.Audit.Disable = true
	cfg.Browser, cfg.E2B, cfg.MCP, cfg.Secrets = nil, false, false, nil
	srv, err := server.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	if srv.AuditLog() != nil || srv.Metrics() != nil || srv.Recorder() != nil {
		t.Fatal("an audit log or metrics with Audit.Disable")
	}
	if srv.Secrets != nil || srv.Browser != nil || srv.E2B != nil || srv.MCP != nil {
		t.Fatal("optional parts present though left out")
	}
	if _, err := os.Stat(cfg.DataDir + "/audit"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DATA/audit exists: %v", err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	if code, _ := status(t, "GET", "http://"+ln.Addr().String()+"/mcp", nil); code != http.StatusNotFound {
		t.Errorf("/mcp without MCP: %d, want 404", code)
	}
	if code, _ := status(t, "GET", "http://"+ln.Addr().String()+"/v1/secrets",
		map[string]string{"Authorization": "Bearer " + srv.AdminKey}); code != http.StatusNotImplemented {
		t.Errorf("/v1/secrets without secrets: %d, want 501", code)
	}
}

// The network serve builds, in a namespace of the test's own, wired as
// serve wires it: secret injection's hook gives a sandbox with inject
// rules its CA (and one without none: the positive control), and the
// proxy's decisions reach the audit log.
func TestNetworkWired(t *testing.T) {
	cfg := serveConfig(t, io.Discard)
	ns := netlab.New(t)
	cfg.Network = &server.NetworkConfig{HostNS: ns.Path(), Upstreams: []netip.AddrPort{}}
	srv, err := server.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	if srv.Network == nil {
		t.Fatal("no sandbox network")
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	c := client.New(hs.URL, srv.AdminKey)
	ctx := context.Background()
	scope := sandbox.Scope{Tenant: auth.DefaultTenant, Actor: "test", Rights: rights.All}
	if _, _, err := srv.Secrets.Set(ctx, scope, auth.DefaultTenant, "API_TOKEN", []byte("s3cret-value-0123456789"), "api.test"); err != nil {
		t.Fatal(err)
	}
	check := "cat " + inject.CAPath + " 2>&1; echo; echo ca=$NODE_EXTRA_CA_CERTS; curl -sS -m 5 -o /dev/null http://refused.test/ 2>&1; true"
	for _, tc := range []struct {
		name   string
		rules  []wire.InjectRule
		wantCA bool
	}{
		{"without inject rules", nil, false},
		{"with inject rules", []wire.InjectRule{{Host: "api.test", Header: "Authorization", Value: "Bearer {secret:API_TOKEN}"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := srv.Manager.Create(ctx, scope, sandbox.Spec{Network: &sandbox.Network{Mode: sandbox.NetAllowlist,
				Allow: []string{"api.test"}, Inject: tc.rules}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Manager.Delete(ctx, scope, sb.ID)
			r, err := c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"sh", "-c", check}})
			if err != nil {
				t.Fatal(err)
			}
			out := r.Stdout
			if got := strings.Contains(out, "BEGIN CERTIFICATE") && strings.Contains(out, "ca="+inject.CAPath); got != tc.wantCA {
				t.Errorf("egress CA in the sandbox: %v, want %v:\n%s", got, tc.wantCA, out)
			}
			var page audit.Page
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if page, err = srv.AuditLog().Query(ctx, audit.Query{Sandbox: sb.ID, Action: "net."}); err == nil && len(page.Records) > 0 {
					break
				}
			}
			if len(page.Records) == 0 || !strings.Contains(string(page.Records[0]), "refused.test") {
				t.Errorf("the proxy's refusal is not in the audit log: %v %s", err, page.Records)
			}
		})
	}
}
