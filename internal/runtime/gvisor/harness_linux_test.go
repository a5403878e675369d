//go:build linux

package gvisor_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/template"
)

// TestMain runs the agent when the test binary is the sandbox's agent (no
// embedded guest in a test build: the backend mounts this binary).
func TestMain(m *testing.M) {
	if len(os.Args) > 0 && os.Args[0] == "paddock-guest" {
		os.Exit(guest.Main())
	}
	os.Exit(m.Run())
}

// env is a gVisor backend on its own data directory, cgroup prefix and
// writable-layer store.
type env struct {
	t       testing.TB
	data    string
	cg      *cgroup.Host
	disk    disk.Store
	tmpl    *template.Template
	b       *gvisor.Backend
	opts    gvisor.Options
	mu      sync.Mutex
	created []runtime.Instance
}

// requireGVisor skips unless the test can start gVisor sandboxes: root and
// runsc (scripts/deps.sh builds it; CI runs it first).
func requireGVisor(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: gVisor sandboxes need cgroups, mounts and namespaces")
	}
	if _, err := gvisor.FindRunsc(os.Getenv("PADDOCK_RUNSC")); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
}

func newEnv(t testing.TB, mod func(*gvisor.Options)) *env {
	t.Helper()
	requireGVisor(t)
	data, err := os.MkdirTemp("", "pdkgv")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, data: data}
	t.Cleanup(e.close)
	var b [4]byte
	_, _ = rand.Read(b[:])
	if e.cg, err = cgroup.Detect("", "paddock-gvtest-"+hex.EncodeToString(b[:])); err != nil {
		t.Fatal(err)
	}
	var why error
	if e.disk, why, err = disk.Open(disk.Options{Dir: data + "/layers", ImageSize: 8 << 30}); err != nil {
		t.Fatal(err)
	}
	if e.disk == nil {
		t.Logf("no quota'd layer store (%v): gVisor bounds each layer itself", why)
	}
	reg, err := template.Open(data, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if e.tmpl, err = reg.Get("host"); err != nil {
		t.Fatal(err)
	}
	e.opts = gvisor.Options{DataDir: data, Cgroups: e.cg, Disk: e.disk, Runsc: os.Getenv("PADDOCK_RUNSC"),
		// runsc's own debug logs (DATA/gvisor/debug/), for profiling a phase.
		Debug: os.Getenv("PADDOCK_TEST_RUNSC_DEBUG") == "1",
		Log:   slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: testLogLevel()}))}
	if mod != nil {
		mod(&e.opts)
	}
	if e.b, err = gvisor.New(e.opts); err != nil {
		t.Fatal(err)
	}
	return e
}

type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

var seq struct {
	sync.Mutex
	n int
}

func newID() string {
	seq.Lock()
	defer seq.Unlock()
	seq.n++
	return fmt.Sprintf("gv%d-%d", os.Getpid(), seq.n)
}

// config is a small sandbox's config.
func (e *env) config() runtime.Config {
	return runtime.Config{ID: newID(), Template: e.tmpl, Hostname: "sandbox",
		Limits: runtime.Limits{CPU: 1, MemoryBytes: 256 << 20, DiskBytes: 256 << 20, DiskInodes: 100000, Pids: 256}}
}

func (e *env) create(cfg runtime.Config) runtime.Instance {
	e.t.Helper()
	inst, err := e.b.Create(e.t.(interface{ Context() context.Context }).Context(), cfg)
	if err != nil {
		e.t.Fatalf("create: %v", err)
	}
	e.track(inst)
	return inst
}

func (e *env) track(inst runtime.Instance) {
	e.mu.Lock()
	e.created = append(e.created, inst)
	e.mu.Unlock()
}

// close destroys every sandbox and leaves nothing behind.
func (e *env) close() {
	e.mu.Lock()
	created := e.created
	e.created = nil
	e.mu.Unlock()
	if e.b != nil {
		for _, inst := range created {
			_ = e.b.Destroy(context.Background(), inst)
		}
		_ = e.b.Close()
	}
	if e.disk != nil {
		_ = e.disk.Close()
	}
	if e.cg != nil {
		if err := e.cg.RemovePrefix(); err != nil {
			e.t.Errorf("cgroups left: %v", err)
		}
	}
	if os.Getenv("PADDOCK_TEST_RUNSC_DEBUG") == "1" {
		if keep, err := os.MkdirTemp("", "pdkgv-debug-"); err == nil {
			_ = os.Rename(filepath.Join(e.data, "gvisor", "debug"), filepath.Join(keep, "debug"))
			e.t.Logf("runsc debug logs kept in %s", keep)
		}
	}
	_ = os.RemoveAll(e.data)
}

type outBuf struct {
	mu             sync.Mutex
	stdout, stderr bytes.Buffer
}

func (o *outBuf) Stdout(p []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stdout.Write(p)
	return nil
}
func (o *outBuf) Stderr(p []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stderr.Write(p)
	return nil
}

type execOut struct {
	guestapi.ExecResult
	Stdout, Stderr string
}

// run executes argv in inst and returns its result (the test fails on a
// transport error).
func run(t testing.TB, inst runtime.Instance, argv ...string) execOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var o outBuf
	res, err := inst.Guest().Exec(ctx, guestapi.ExecRequest{Argv: argv, TimeoutMs: 60000}, nil, &o)
	if err != nil {
		t.Fatalf("exec %q: %v", argv, err)
	}
	return execOut{ExecResult: res, Stdout: o.stdout.String(), Stderr: o.stderr.String()}
}

// sh runs a shell script in inst.
func sh(t testing.TB, inst runtime.Instance, script string) execOut {
	t.Helper()
	return run(t, inst, "sh", "-c", script)
}

func mustMkdir(t testing.TB, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
}

func gvisorCheckpoint(dir string, leaveRunning bool) gvisor.CheckpointOptions {
	return gvisor.CheckpointOptions{Dir: dir, LeaveRunning: leaveRunning}
}

// assertNoTrace fails t if sandbox id left anything: its directory, runsc
// state, a cgroup in any hierarchy, or a process naming it.
func (e *env) assertNoTrace(t testing.TB, id string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(e.data, "gvisor", "sandboxes", id)); err == nil {
		t.Errorf("sandbox directory of %s left", id)
	}
	if m, _ := filepath.Glob(filepath.Join(e.data, "gvisor", "state", id+"_sandbox:*")); len(m) > 0 {
		t.Errorf("runsc state of %s left: %v", id, m)
	}
	if _, err := os.Lstat(filepath.Join(e.data, "gvisor", "state", "runsc-"+id+".sock")); err == nil {
		t.Errorf("runsc control socket of %s left", id)
	}
	if m, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", e.cg.Prefix(), id)); len(m) > 0 {
		t.Errorf("cgroups of %s left: %v", id, m)
	}
	if m, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", e.cg.Prefix(), id)); len(m) > 0 {
		t.Errorf("cgroup of %s left: %v", id, m)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(id)) && bytes.Contains(b, []byte("runsc")) {
			t.Errorf("a runsc process of %s is left: %s", id, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}

// testLogLevel is the backend's log level in tests: PADDOCK_TEST_DEBUG=1
// shows its debug lines (create and restore timings).
func testLogLevel() slog.Level {
	if os.Getenv("PADDOCK_TEST_DEBUG") == "1" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}
