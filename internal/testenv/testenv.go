// Package testenv builds a real Paddock stack — the house paddock serve
// builds (internal/server): store, templates, cgroups, writable layers,
// native runtime, manager, secrets, browser service, REST, E2B and MCP
// APIs behind serve's middleware — in a temporary data directory for
// integration tests, and removes every trace of it afterwards.
//
// Test binaries are re-executed as the guest agent inside sandboxes, so a
// package that uses testenv must call testenv.Main from its TestMain.
package testenv

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/guest"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/runtime/native"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/internal/tenant"
)

// Main runs the guest agent when the test binary was started as one, and
// the tests otherwise.
func Main(m *testing.M) {
	if len(os.Args) > 0 && os.Args[0] == "paddock-guest" {
		os.Exit(guest.Main())
	}
	os.Exit(m.Run())
}

// RequireRoot skips t unless the process is root (CI runs as root, so
// there these tests always run).
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates namespaces, cgroups and mounts")
	}
}

// RequireServer skips a test that builds the paddock binary and runs
// `paddock serve` as a child: it needs root, and is left out of -short runs
// (a build takes tens of seconds). make test runs it.
func RequireServer(t testing.TB) {
	t.Helper()
	RequireRoot(t)
	if testing.Short() {
		t.Skip("-short: this test builds the paddock binary and runs paddock serve")
	}
}

// Options tune New.
type Options struct {
	PoolSize int
	// DefaultRuntime is serve's --default-runtime ("": native).
	DefaultRuntime string
	MaxSandboxes   int
	Limits         *sandbox.Limits
	// DataDir reuses a data directory (restart tests); default t.TempDir().
	DataDir string
	// CgroupPrefix reuses a cgroup prefix (restart tests).
	CgroupPrefix string
	UIDBase      int
	Slots        int // uid ranges (sandboxes alive at once); default 64
	Log          *slog.Logger
	Audit        AuditOptions // audit.go: the audit log (on by default) and metrics

	// A stack is serve's house (internal/server): secrets, the browser
	// service, the E2B-compatible API and /mcp are in it, as in paddock
	// serve. Its sandbox network is not, being host-wide (an nftables
	// table, ports, interfaces): a test gives one in a namespace of its
	// own with NetworkConfig, or brings its own with Network.
	NoSecrets, NoBrowser, NoE2B, NoMCP bool

	// NetworkConfig builds serve's sandbox network in the stack, wired as
	// serve wires it (decisions to the audit log and metrics, secret
	// injection); set HostNS to a namespace the test made (netlab). A
	// network that cannot be built fails the test.
	NetworkConfig *server.NetworkConfig
	// Network gives sandboxes a network the test built and wires itself
	// (a network.Stack in a namespace it made); nil: loopback only. Not
	// with NetworkConfig.
	Network runtime.Network

	// HTTP tunes the API's hardening (allowed hosts and origins, body
	// limits), as serve's flags do.
	HTTP server.HTTPConfig
	// PortsDomain is serve's --ports-domain.
	PortsDomain string
	// Templates is serve's image-template flags (--insecure-registry...).
	Templates server.TemplatesConfig
	// UpstreamRoots are the roots the egress proxy trusts when it injects
	// secrets (serve's --egress-upstream-ca); nil: the system's.
	UpstreamRoots *x509.CertPool
	// Browser tunes the browser service.
	Browser browser.Options
}

// Env is a running stack.
type Env struct {
	T         testing.TB
	Data      string
	Prefix    string
	UIDBase   int
	Store     *store.DB
	Templates *template.Registry
	Cgroups   *cgroup.Host
	Disk      disk.Store
	Backend   *native.Backend
	Manager   *sandbox.Manager
	Server    *httptest.Server
	AdminKey  string
	Auth      *auth.Service     // keys, tenants, sandbox tokens
	Quotas    *tenant.Admission // the manager's Admission
	Client    *client.Client
	Scope     sandbox.Scope
	// Stack is the whole house, as serve builds it: the parts above and
	// the optional ones (Network, Secrets, Browser, E2B, MCP).
	Stack *server.Server

	closed  bool
	closing atomic.Bool // audit.go
}

// TmpfsLayers reports whether sandboxes' writable layers are tmpfs (RAM,
// charged to their memory cgroup) rather than a quota'd host store.
func (e *Env) TmpfsLayers() bool { return e.Disk == nil }

// New starts a stack; t.Cleanup destroys it (and every sandbox in it).
func New(t testing.TB, o Options) *Env {
	t.Helper()
	RequireRoot(t)
	e := &Env{T: t, Data: o.DataDir, Prefix: o.CgroupPrefix, UIDBase: o.UIDBase}
	if e.Data == "" {
		e.Data = shortTempDir(t)
	}
	if e.Prefix == "" {
		e.Prefix = fmt.Sprintf("paddock-test-%d-%d", os.Getpid(), randInt(1<<30))
	}
	slots := o.Slots
	if slots == 0 {
		slots = 64
	}
	if e.UIDBase == 0 {
		// A random region per stack, so parallel test packages (almost
		// surely) never share a host uid range.
		buckets := (4_000_000_000 - 100_000_000) / (slots * 65536)
		e.UIDBase = 100_007_936 + randInt(buckets)*slots*65536 // 100_007_936 = 1526*65536
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	adminKey := auth.NewKey()
	cfg := server.Config{DataDir: e.Data, Log: log, Version: "test", AdminKey: adminKey, CgroupPrefix: e.Prefix,
		UIDBase: e.UIDBase, Slots: slots, LayersSize: 8 << 30, Limits: o.Limits, PoolSize: o.PoolSize,
		MaxSandboxes: o.MaxSandboxes, DefaultRuntime: o.DefaultRuntime, Audit: o.Audit.config(), HTTP: o.HTTP, PortsDomain: o.PortsDomain,
		Network: o.NetworkConfig, ExternalNetwork: o.Network, E2B: !o.NoE2B, MCP: !o.NoMCP,
		Templates: o.Templates, WrapObserver: e.observer} // audit.go
	if !o.NoSecrets {
		cfg.Secrets = &server.SecretsConfig{UpstreamRoots: o.UpstreamRoots}
	}
	if !o.NoBrowser {
		b := o.Browser
		cfg.Browser = &b
	}
	srv, err := server.Open(context.Background(), cfg)
	if err != nil {
		e.Close()
		t.Fatalf("testenv: %v", err)
	}
	e.Stack = srv
	if o.NetworkConfig != nil && srv.Network == nil {
		e.Close()
		t.Fatal("testenv: the sandbox network could not be built (see the log)")
	}
	e.Store, e.Templates, e.Cgroups, e.Disk, e.Backend = srv.Store, srv.Templates, srv.Cgroups, srv.Disk, srv.Backend
	e.Manager, e.Auth, e.Quotas, e.AdminKey = srv.Manager, srv.Auth, srv.Quotas, srv.AdminKey
	adm := auth.NewAdmin(e.AdminKey)
	e.Scope = auth.ScopeOf(adm.Principal())
	e.Server = httptest.NewServer(srv.Handler())
	e.Client = client.New(e.Server.URL, e.AdminKey)
	t.Cleanup(e.Close)
	return e
}

// Close destroys every sandbox and releases the stack. Idempotent.
func (e *Env) Close() {
	if e.closed {
		return
	}
	e.closed = true
	e.closing.Store(true) // audit.go: whatever state a test left the log in
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e.Stack != nil {
		_ = e.Stack.Shutdown(ctx) // MCP sessions end, their sandboxes go
	}
	if e.Server != nil {
		e.Server.Close()
	}
	if e.Manager != nil {
		// Every tenant's sandboxes, not only the admin's: they outlive the
		// manager (as they outlive a server), so a tenancy test's would
		// keep running after the test.
		tenants := map[string]bool{e.Scope.Tenant: true}
		if e.Store != nil {
			if rows, err := e.Store.ListSandboxes(ctx); err == nil {
				for _, r := range rows {
					tenants[r.Tenant] = true
				}
			}
		}
		for tenant := range tenants {
			sc := sandbox.Scope{Tenant: tenant, Actor: e.Scope.Actor, Rights: rights.All}
			list, _ := e.Manager.List(ctx, sc, nil)
			for _, sb := range list {
				_ = e.Manager.Delete(ctx, sc, sb.ID)
			}
		}
	}
	e.Shutdown()
	if e.Cgroups != nil && e.Prefix != "" {
		_ = e.Cgroups.RemovePrefix() // what a still-running sandbox holds stays
	}
}

// Shutdown releases the stack without deleting sandboxes, as a server exit
// does (restart tests reopen the same data directory).
func (e *Env) Shutdown() {
	if e.Stack == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = e.Stack.Close(ctx)
	e.Auth, e.Backend, e.Disk, e.Store = nil, nil, nil, nil
}

// Create makes a sandbox through the manager, failing the test on error.
func (e *Env) Create(spec sandbox.Spec) sandbox.Sandbox {
	e.T.Helper()
	sb, err := e.Manager.Create(context.Background(), e.Scope, spec)
	if err != nil {
		e.T.Fatalf("create sandbox: %v", err)
	}
	return sb
}

// Exec runs argv in sandbox id and returns the buffered result.
func (e *Env) Exec(id string, argv ...string) client.ExecResponse {
	e.T.Helper()
	res, err := e.Client.Exec(context.Background(), id, client.ExecRequest{Cmd: argv})
	if err != nil {
		e.T.Fatalf("exec %q: %v", argv, err)
	}
	return res
}

// Sh runs a shell script in sandbox id.
func (e *Env) Sh(id, script string) client.ExecResponse {
	e.T.Helper()
	return e.Exec(id, "/bin/sh", "-c", script)
}

// shortTempDir keeps paths short: Unix socket paths are limited to 108 bytes.
func shortTempDir(t testing.TB) string {
	d, err := os.MkdirTemp("", "pdk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(d) })
	return d
}

// removeAll removes a test data directory; anything still mounted (a
// failed test's layer) is detached first.
func removeAll(d string) {
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		var mounts []string
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) > 4 && strings.HasPrefix(f[4], d+"/") {
				mounts = append(mounts, f[4])
			}
		}
		for i := len(mounts) - 1; i >= 0; i-- {
			_ = unmountDetach(mounts[i])
		}
	}
	_ = os.RemoveAll(d)
}

func randInt(n int) int {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int(binary.LittleEndian.Uint64(b[:]) % uint64(n))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
