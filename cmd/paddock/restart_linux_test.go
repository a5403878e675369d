//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/testenv"
)

// serveProc is a real `paddock serve` child process.
type serveProc struct {
	t      *testing.T
	bin    string
	data   string
	prefix string
	addr   string
	key    string
	cmd    *exec.Cmd
	c      *client.Client
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paddock")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (s *serveProc) start(pool int) {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "serve", "--data", s.data, "--listen", s.addr, "--pool", strconv.Itoa(pool),
		"--cgroup-prefix", s.prefix, "--uid-base", "300007936")
	s.cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+s.key)
	logf, err := os.OpenFile(filepath.Join(s.data, "..", "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.c = client.New("http://"+s.addr, s.key)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := s.c.List(context.Background(), nil); err == nil {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(s.data, "..", "server.log"))
			s.t.Fatalf("server did not come up:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *serveProc) kill9() {
	s.t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_, _ = s.cmd.Process.Wait()
}

func (s *serveProc) stop() {
	s.t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _, _ = s.cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.kill9()
		s.t.Fatal("server did not stop on SIGTERM")
	}
}

func (s *serveProc) exec(id string, argv ...string) client.ExecResponse {
	s.t.Helper()
	res, err := s.c.Exec(context.Background(), id, client.ExecRequest{Cmd: argv})
	if err != nil {
		s.t.Fatalf("exec %v in %s: %v", argv, id, err)
	}
	return res
}

// leftovers lists what a server with this prefix and data dir still holds:
// cgroup directories, run directories, layer mounts, guest processes.
func (s *serveProc) leftovers() []string {
	var out []string
	for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct", "freezer", "unified"} {
		ents, _ := os.ReadDir(filepath.Join("/sys/fs/cgroup", ctrl, s.prefix))
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, "cgroup "+ctrl+"/"+e.Name())
			}
		}
	}
	ents, _ := os.ReadDir(filepath.Join(s.data, "run", "sandboxes"))
	for _, e := range ents {
		out = append(out, "run dir "+e.Name())
	}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], filepath.Join(s.data, "layers")+"/") {
			out = append(out, "mount "+f[4])
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if i := strings.Index(line, "/"+s.prefix+"/"); i >= 0 && strings.Contains(line, ":pids:") {
				id, _, _ := strings.Cut(line[i+len(s.prefix)+2:], "/")
				out = append(out, "process "+filepath.Base(filepath.Dir(p))+" of "+id)
			}
		}
	}
	return out
}

// newServeProc is a real `paddock serve` (not started yet) with its own
// data directory and cgroup prefix, cleaned up after the test: a failed
// test must not leave sandboxes running.
func newServeProc(t *testing.T, name string) *serveProc {
	t.Helper()
	testenv.RequireServer(t)
	dir, err := os.MkdirTemp("", "pdk"+name)
	if err != nil {
		t.Fatal(err)
	}
	s := &serveProc{t: t, bin: buildBinary(t), data: filepath.Join(dir, "data"), addr: freeAddr(t),
		prefix: fmt.Sprintf("paddock-%s-%d", name, os.Getpid()), key: name + "-test-key-0123456789"}
	t.Cleanup(func() {
		if s.cmd != nil && s.cmd.ProcessState == nil {
			s.kill9()
		}
		s.start(0)
		ids, _ := s.c.List(context.Background(), nil)
		for _, sb := range ids {
			_ = s.c.Delete(context.Background(), sb.ID)
		}
		s.stop()
		for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct", "freezer"} {
			_ = os.Remove(filepath.Join("/sys/fs/cgroup", ctrl, s.prefix))
		}
		_ = os.RemoveAll(dir)
	})
	if err := os.MkdirAll(s.data, 0o700); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKill9AndRestart: after kill -9 of the server and a restart, every
// sandbox from before is reattached (running, its files and daemons
// intact) or, if it died meanwhile, cleaned up; warm-pool members are
// cleaned up; leftovers nobody recorded are swept; and once everything is
// deleted nothing is left.
func TestKill9AndRestart(t *testing.T) {
	s := newServeProc(t, "restart")
	ctx := context.Background()
	s.start(2)
	var ids []string
	for i := 0; i < 3; i++ {
		sb, err := s.c.Create(ctx, client.Spec{Labels: map[string]string{"n": strconv.Itoa(i)}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sb.ID)
	}
	s.exec(ids[0], "sh", "-c", "echo kept > /workspace/state")
	s.exec(ids[1], "sh", "-c", "(setsid sleep 1000 >/dev/null 2>&1 &); true")
	// Let the pool fill, so there are pooled sandboxes to clean up too.
	time.Sleep(500 * time.Millisecond)

	s.kill9()
	// The sandboxes outlive the server.
	if res := s.leftovers(); len(res) == 0 {
		t.Fatal("nothing survived the server's death: sandboxes should keep running")
	}
	// While the server is down, one sandbox dies, and a crash is simulated
	// half-way through a create: resources nobody recorded.
	killSandbox(t, s.prefix, ids[2])
	stray := "sb-strayaaaaaaaaaaaaaaaaaaaaa"
	for _, ctrl := range []string{"pids", "memory"} {
		if err := os.MkdirAll(filepath.Join("/sys/fs/cgroup", ctrl, s.prefix, stray), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(s.data, "run", "sandboxes", stray), 0o700); err != nil {
		t.Fatal(err)
	}

	s.start(0)
	list, err := s.c.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, sb := range list {
		got[sb.ID] = true
	}
	if !got[ids[0]] || !got[ids[1]] || got[ids[2]] || len(list) != 2 {
		t.Fatalf("after restart: %v; want exactly %s and %s", list, ids[0], ids[1])
	}
	if res := s.exec(ids[0], "cat", "/workspace/state"); res.Stdout != "kept\n" {
		t.Fatalf("reattached sandbox lost its files: %+v", res)
	}
	if res := s.exec(ids[1], "sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"); !strings.Contains(res.Stdout, "sleep 1000") {
		t.Fatalf("reattached sandbox lost its daemon: %+v", res)
	}
	// Everything left belongs to the two reattached sandboxes: the dead
	// one, the unrecorded one and the old warm pool are gone.
	for _, l := range s.leftovers() {
		if !strings.Contains(l, ids[0]) && !strings.Contains(l, ids[1]) {
			t.Errorf("leftover of a dead, pooled or unrecorded sandbox: %s", l)
		}
	}
	// Timeouts still apply after a restart.
	if _, err := s.c.SetTimeout(ctx, ids[1], time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if _, err := s.c.Get(ctx, ids[1]); !client.IsNotFound(err) {
		t.Fatalf("timeout not enforced after restart: %v", err)
	}
	if err := s.c.Delete(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	s.stop()
	if l := s.leftovers(); len(l) > 0 {
		t.Fatalf("leaks after deleting everything:\n%s", strings.Join(l, "\n"))
	}
}

// killSandbox SIGKILLs the guest of sandbox id (found by its cgroup).
func killSandbox(t *testing.T, prefix, id string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/pids", prefix, id, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(p)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	time.Sleep(200 * time.Millisecond)
}
