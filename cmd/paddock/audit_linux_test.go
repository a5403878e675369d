//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/testenv"
)

// auditServer is a real `paddock serve` child process for the audit
// crash tests.
type auditServer struct {
	t                       *testing.T
	bin, data, addr, prefix string
	key                     string
	cmd                     *exec.Cmd
	c                       *client.Client
}

func (s *auditServer) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "serve", "--data", s.data, "--listen", s.addr, "--pool", "0",
		"--cgroup-prefix", s.prefix, "--uid-base", "500007936", "--audit-sync", "always")
	s.cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+s.key)
	logf, err := os.OpenFile(filepath.Join(s.data, "..", "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	defer logf.Close()
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

func (s *auditServer) signal(sig syscall.Signal) {
	_ = s.cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { _, _ = s.cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
		s.t.Errorf("server did not stop on %v", sig)
	}
	s.cmd = nil
}

// verify runs the built binary's `audit verify` and returns its exit code
// and output.
func (s *auditServer) verify() (int, string) {
	out, err := exec.Command(s.bin, "audit", "verify", "--data", s.data).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0, string(out)
}

// TestAuditSurvivesKill9: a server writing records under load (execs from
// several clients, --audit-sync=always) is killed with SIGKILL; the log
// still verifies; a torn final line (what a kill in the middle of a write
// leaves) is repaired at the next start — and only that — and recorded;
// after more work and a clean stop the whole log verifies.
func TestAuditSurvivesKill9(t *testing.T) {
	testenv.RequireServer(t)
	dir, err := os.MkdirTemp("", "pdkak")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "paddock")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &auditServer{t: t, bin: bin, data: filepath.Join(dir, "data"), addr: addr,
		prefix: fmt.Sprintf("paddock-audit-%d", os.Getpid()), key: "audit-kill-test-key-0123456789"}
	t.Cleanup(func() {
		if s.cmd != nil {
			s.signal(syscall.SIGKILL)
		}
		// Best effort: leave no sandbox running.
		s.start()
		ids, _ := s.c.List(context.Background(), nil)
		for _, sb := range ids {
			_ = s.c.Delete(context.Background(), sb.ID)
		}
		s.signal(syscall.SIGTERM)
		for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct", "freezer"} {
			_ = os.Remove(filepath.Join("/sys/fs/cgroup", ctrl, s.prefix))
		}
		_ = os.RemoveAll(dir)
	})
	if err := os.MkdirAll(s.data, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s.start()
	sb, err := s.c.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	// Load: execs from four clients until the server dies.
	var wg sync.WaitGroup
	var ok atomic.Int64
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "echo audited\necho 'x\"}\n{\"seq\":1}'"}}); err == nil {
					ok.Add(1)
				}
			}
		}()
	}
	for ok.Load() < 50 {
		time.Sleep(10 * time.Millisecond)
	}
	s.signal(syscall.SIGKILL)
	close(stop)
	wg.Wait()
	if code, out := s.verify(); code != 0 {
		t.Fatalf("after kill -9 the log does not verify:\n%s", out)
	}
	// What a kill in the middle of a write leaves: part of a line.
	segs, _ := filepath.Glob(filepath.Join(s.data, "audit", "audit-*.jsonl"))
	last := segs[len(segs)-1]
	torn := `{"seq":999999,"time":"2026-12-01T10:00:00.000000000Z","action":"exec","phase":"int`
	f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(torn)
	f.Close()
	if code, out := s.verify(); code != 0 || !strings.Contains(out, "partial record") {
		t.Fatalf("a torn tail is a warning, not a failure (exit %d):\n%s", code, out)
	}

	s.start()
	for i := 0; i < 5; i++ {
		if _, err := s.c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.c.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	s.signal(syscall.SIGTERM)
	code, out := s.verify()
	if code != 0 || strings.Contains(out, "partial record") {
		t.Fatalf("after the restart the log does not verify cleanly (exit %d):\n%s", code, out)
	}
	// The repair is recorded, and only the torn bytes were cut.
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	var starts, repairs int
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		r, err := audit.ParseLine(line)
		if err != nil {
			t.Fatal(err)
		}
		switch r.Action {
		case audit.ActionStart:
			starts++
		case audit.ActionRepair:
			repairs++
			if !bytes.Contains(r.Args, []byte(fmt.Sprintf(`"discarded_bytes":%d`, len(torn)))) {
				t.Errorf("repair cut more than the torn line: %s", r.Args)
			}
		}
	}
	if starts != 2 || repairs != 1 {
		t.Fatalf("starts %d, repairs %d", starts, repairs)
	}
	t.Logf("%d execs before the kill; %s", ok.Load(), strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
}
