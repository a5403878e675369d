//go:build linux

package hostile

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
)

// A real `paddock serve` child process, for the cases that kill the
// server (the approach of cmd/paddock's restart test).

var paddockBuild struct {
	once sync.Once
	bin  string
	err  error
}

// paddockBinary builds cmd/paddock once per test binary.
func paddockBinary(t testing.TB) string {
	t.Helper()
	paddockBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "pdkbin")
		if err != nil {
			paddockBuild.err = err
			return
		}
		bin := filepath.Join(dir, "paddock")
		cmd := exec.Command("go", "build", "-o", bin, "github.com/paddockhq/paddock/cmd/paddock")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			paddockBuild.err = fmt.Errorf("go build ./cmd/paddock: %v\n%s", err, out)
			return
		}
		paddockBuild.bin = bin
	})
	if paddockBuild.err != nil {
		t.Fatal(paddockBuild.err)
	}
	return paddockBuild.bin
}

type serverOptions struct {
	// network runs the server in a network namespace the test made, with
	// sandbox networking on (interfaces and nftables live there, not in the
	// machine's namespace). Otherwise: --no-network, on a loopback port.
	network bool
	uidBase int      // default 700007936
	extra   []string // more serve flags
	data    string   // data directory (default: a fresh one)
	// files are handed to the server as a careless parent would: entry i
	// open on descriptor 3+i (nil: none there).
	files []*os.File
	// ns, with network, is a namespace another server already runs in (two
	// servers on one host), and addr the API's address there.
	ns   *netNS
	addr string
	// ownPrefix leaves --cgroup-prefix unset: the server derives its own.
	ownPrefix bool
}

type server struct {
	t                 *testing.T
	o                 serverOptions
	bin, dir, data    string
	prefix, addr, key string
	ns                *netNS
	cmd               *exec.Cmd
	exited            chan struct{}
	c                 *client.Client
	hc                *http.Client
	ready             time.Duration // how long the last start took to answer
	logPath           string
}

// startServer starts a server; t.Cleanup deletes its sandboxes, stops it
// and removes its data.
func startServer(t *testing.T, o serverOptions) *server {
	t.Helper()
	testenvRoot(t)
	if o.uidBase == 0 {
		o.uidBase = 700007936
	}
	dir, err := os.MkdirTemp("", "pdksrv")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, o: o, bin: paddockBinary(t), dir: dir, data: filepath.Join(dir, "data"),
		prefix: fmt.Sprintf("paddock-hostile-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6),
		key:    "hostile-suite-admin-key-0123456789", logPath: filepath.Join(dir, "server.log")}
	if o.data != "" {
		s.data = o.data
	}
	if err := os.MkdirAll(s.data, 0o700); err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	if o.network {
		s.ns, s.addr = o.ns, o.addr
		if s.ns == nil {
			s.ns = newNetNS(t)
		}
		if s.addr == "" {
			s.addr = "127.0.0.1:7070"
		}
		tr.DialContext = s.ns.Dial
	} else {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s.addr = l.Addr().String()
		l.Close()
	}
	s.hc = &http.Client{Transport: tr}
	t.Cleanup(s.cleanup)
	s.start()
	return s
}

func testenvRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs a real server")
	}
}

func (s *server) start() {
	s.t.Helper()
	args := []string{"serve", "--data", s.data, "--listen", s.addr, "--pool", "0",
		"--uid-base", strconv.Itoa(s.o.uidBase), "--log-level", "warn"}
	if !s.o.ownPrefix {
		args = append(args, "--cgroup-prefix", s.prefix)
	}
	if !s.o.network {
		args = append(args, "--no-network")
	}
	if rt := suiteRuntime(s.t); rt != "" {
		args = append(args, "--default-runtime", rt)
	}
	s.cmd = exec.Command(s.bin, append(args, s.o.extra...)...)
	s.cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+s.key)
	s.cmd.ExtraFiles = s.o.files
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	defer logf.Close()
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	t0 := time.Now()
	if s.ns != nil {
		err = s.ns.Do(s.cmd.Start) // the child is born in the namespace
	} else {
		err = s.cmd.Start()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	s.exited = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(s.cmd, s.exited)
	s.c = client.New("http://"+s.addr, s.key).WithHTTPClient(s.hc)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := s.c.List(context.Background(), nil); err == nil {
			s.ready = time.Since(t0)
			if s.o.ownPrefix { // the one it chose, for the checks and the cleanup
				if b, err := os.ReadFile(filepath.Join(s.data, "cgroup-prefix")); err == nil {
					s.prefix = strings.TrimSpace(string(b))
				}
			}
			return
		}
		select {
		case <-s.exited:
			s.t.Fatalf("the server exited at start:\n%s", s.log())
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the server did not come up:\n%s", s.log())
		}
	}
}

func (s *server) log() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

func (s *server) running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

func (s *server) kill9() {
	s.t.Helper()
	if s.running() {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.exited
	}
}

func (s *server) stop() {
	s.t.Helper()
	if !s.running() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		s.kill9()
		s.t.Errorf("the server did not stop on SIGTERM")
	}
}

func (s *server) cleanup() {
	s.kill9()
	// Best effort: a failed test must leave no sandbox running.
	s.start()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	list, _ := s.c.List(ctx, nil)
	for _, sb := range list {
		_ = s.c.Delete(ctx, sb.ID)
	}
	s.stop()
	s.kill9()
	for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct", "freezer", "unified"} {
		_ = os.Remove(filepath.Join("/sys/fs/cgroup", ctrl, s.prefix))
	}
	unmountUnder(s.dir)
	_ = os.RemoveAll(s.dir)
}

// unmountUnder detaches whatever is still mounted below dir.
func unmountUnder(dir string) {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var mounts []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			mounts = append(mounts, f[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = syscall.Unmount(mounts[i], syscall.MNT_DETACH)
	}
}

func (s *server) auditDir() string { return filepath.Join(s.data, "audit") }

// create makes a sandbox through the server's API.
func (s *server) create(spec client.Spec) string {
	s.t.Helper()
	sb, err := s.c.Create(ctxT(s.t, time.Minute), spec)
	if err != nil {
		s.t.Fatalf("create: %v\n%s", err, s.log())
	}
	return sb.ID
}

// stillServes proves the server answers: a fresh exec in each sandbox.
func (s *server) stillServes(ids ...string) {
	s.t.Helper()
	for _, id := range ids {
		res, err := s.c.Exec(ctxT(s.t, time.Minute), id, client.ExecRequest{Cmd: []string{"echo", "still-alive"}})
		if err != nil || res.Stdout != "still-alive\n" {
			s.t.Fatalf("a fresh exec in %s fails: %+v %v", id, res, err)
		}
	}
}

// verify runs `paddock audit verify` on the data directory.
func (s *server) verify() (int, string) {
	out, err := exec.Command(s.bin, "audit", "verify", "--data", s.data).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0, string(out)
}
