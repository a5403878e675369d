// Package testenv builds a real Paddock stack (store, templates, cgroups,
// writable layers, native runtime, manager, REST API) in a temporary data
// directory for integration tests, and removes every trace of it afterwards.
//
// Test binaries are re-executed as the guest agent inside sandboxes, so a
// package that uses testenv must call testenv.Main from its TestMain.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/guest"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/runtime/native"
	"github.com/paddockhq/paddock/internal/sandbox"
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
	PoolSize     int
	MaxSandboxes int
	Limits       *sandbox.Limits
	// DataDir reuses a data directory (restart tests); default t.TempDir().
	DataDir string
	// CgroupPrefix reuses a cgroup prefix (restart tests).
	CgroupPrefix string
	UIDBase      int
	Slots        int // uid ranges (sandboxes alive at once); default 64
	Log          *slog.Logger
	Audit        AuditOptions // audit.go: the audit log (on by default) and metrics
	// Network gives sandboxes a network (a network.Stack, usually in a
	// namespace the test made); nil: loopback only.
	Network runtime.Network
	// API, if set, adjusts the REST API's options before it is built (a
	// test gives it a browser service over e.Manager, say).
	API func(e *Env, o *api.Options)
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

	closed bool
	obs    *envObs // audit.go
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
	var err error
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			e.Close()
			t.Fatalf("testenv: %s: %v", what, err)
		}
	}
	e.Store, err = store.Open(e.Data, auth.Migrations...)
	must("store", err)
	e.Templates, err = template.Open(e.Data, log)
	must("templates", err)
	e.Cgroups, err = cgroup.Detect("/sys/fs/cgroup", e.Prefix)
	must("cgroups", err)
	e.Disk, _, err = disk.Open(disk.Options{Dir: filepath.Join(e.Data, "layers"), ImageSize: 8 << 30})
	must("layers", err)
	e.Backend, err = native.New(native.Options{DataDir: e.Data, Log: log, Cgroups: e.Cgroups, Disk: e.Disk,
		UIDBase: e.UIDBase, Slots: slots, Network: o.Network})
	must("backend", err)
	limits := sandbox.DefaultLimits(goruntime.NumCPU())
	if o.Limits != nil {
		limits = *o.Limits
	}
	e.Quotas = tenant.NewAdmission(tenant.NewStore(e.Store.SQL()), limits)
	e.obs, err = openObs(e.Data, o.Audit, log) // audit.go
	must("audit log", err)
	e.Manager = sandbox.New(sandbox.Config{Limits: limits, PoolSize: o.PoolSize, MaxSandboxes: o.MaxSandboxes},
		sandbox.Deps{Log: log, Store: e.Store, Backend: e.Backend, Templates: e.Templates, Admission: e.Quotas, Observer: e.obs.observer()})
	must("manager start", e.Manager.Start(context.Background()))
	e.AdminKey = auth.NewKey()
	secret, err := auth.LoadSecret(e.Data)
	must("token secret", err)
	e.Auth, err = auth.NewService(auth.Options{DB: e.Store.SQL(), Tenants: e.Quotas.Tenants(), AdminKey: e.AdminKey, Secret: secret, Log: log})
	must("auth", err)
	adm := auth.NewAdmin(e.AdminKey)
	e.Scope = auth.ScopeOf(adm.Principal())
	ao := api.Options{Log: log, Manager: e.Manager, Auth: e.Auth, Templates: e.Templates, Version: "test",
		Auditor: e.obs.auditor(), Middleware: e.obs.middleware(api.Harden(api.HardenOptions{Log: log}))}
	if o.API != nil {
		o.API(e, &ao)
	}
	srv := api.New(ao)
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
	e.obs.stopRefusing()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
		_ = e.Manager.Close(ctx)
	}
	e.Shutdown()
	if e.Cgroups != nil && e.Prefix != "" {
		_ = e.Cgroups.RemovePrefix() // what a still-running sandbox holds stays
	}
}

// Shutdown releases the stack's resources without deleting sandboxes, as a
// server exit does (restart tests reopen the same data directory).
func (e *Env) Shutdown() {
	e.obs.close()
	e.obs = nil
	if e.Auth != nil {
		_ = e.Auth.Close()
		e.Auth = nil
	}
	if e.Backend != nil {
		_ = e.Backend.Close()
		e.Backend = nil
	}
	if e.Disk != nil {
		_ = e.Disk.Close()
		e.Disk = nil
	}
	if e.Store != nil {
		_ = e.Store.Close()
		e.Store = nil
	}
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
