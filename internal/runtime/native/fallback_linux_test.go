//go:build linux

package native_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestPlainBuildRunsSandboxes: `go build ./cmd/paddock` (or go install)
// has no embedded guest, and its server re-executes itself as the guest.
// Built as such a user builds it — the module without the guest binary,
// the toolchain's defaults (cgo wherever a C compiler is found) and also
// with CGO_ENABLED=0 — it starts a sandbox whose commands run, hardened as
// always.
func TestPlainBuildRunsSandboxes(t *testing.T) {
	testenv.RequireServer(t)
	src := plainSource(t)
	for _, tc := range []struct {
		name string
		cgo  string // "": the toolchain's default
	}{{"toolchain defaults", ""}, {"CGO_ENABLED=0", "0"}} {
		t.Run(tc.name, func(t *testing.T) {
			bin := buildPlain(t, src, tc.cgo)
			s := startPlainServer(t, bin)
			id := s.create(t)
			out := s.exec(t, id, "sh", "-c", "echo hello; grep CapEff /proc/self/status; cat /proc/self/cgroup")
			if !strings.HasPrefix(out, "hello\n") {
				t.Fatalf("exec output %q", out)
			}
			// The fallback guest is hardened like the embedded one: no
			// capabilities for workloads, and its own cgroup namespace
			// (nothing of the host's tree, such as the server's prefix).
			if !strings.Contains(out, "CapEff:\t0000000000000000") || strings.Contains(out, s.prefix) || !strings.Contains(out, "::/") {
				t.Fatalf("the sandbox is not hardened as usual:\n%s", out)
			}
			s.delete(t, id)
		})
	}
}

// plainSource copies the module as a checkout has it: without the guest
// binary that `make guest` puts into internal/guestbin.
func plainSource(t *testing.T) string {
	t.Helper()
	mod, err := exec.Command(goBin(), "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(strings.TrimSpace(string(mod)))
	dst := t.TempDir()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == ".git" || rel == "bin" || rel == filepath.Join("internal", "guestbin", "bin", "paddock-guest"):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "internal", "guestbin", "bin", "paddock-guest")); !os.IsNotExist(err) {
		t.Fatal("the copy has an embedded guest")
	}
	return dst
}

func goBin() string { return filepath.Join(goruntime.GOROOT(), "bin", "go") }

// buildPlain runs go build in src with the caller's environment, except
// CGO_ENABLED (cgo "" leaves it to the toolchain).
func buildPlain(t *testing.T, src, cgo string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paddock")
	// -trimpath only so that repeated runs share the build cache (the copy
	// lives at a new path each time).
	cmd := exec.Command(goBin(), "build", "-trimpath", "-o", bin, "./cmd/paddock")
	cmd.Dir = src
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CGO_ENABLED=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if cgo != "" {
		cmd.Env = append(cmd.Env, "CGO_ENABLED="+cgo)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, _ := exec.Command(goBin(), "version", "-m", bin).Output()
	t.Logf("built %s (%s)", bin, grepLine(string(out), "build\tCGO_ENABLED="))
	return bin
}

func grepLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return "no " + sub
}

type plainServer struct {
	url, key, prefix string
	cmd              *exec.Cmd
}

func startPlainServer(t *testing.T, bin string) *plainServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// Short: the guest sockets live below it (108-byte Unix socket paths).
	data, err := os.MkdirTemp("", "pdk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A server that failed a create may keep its run directory's
		// tmpfs: it must not outlive the test.
		_ = unix.Unmount(filepath.Join(data, "run"), unix.MNT_DETACH)
		os.RemoveAll(data)
	})
	prefix := fmt.Sprintf("paddock-plain-%d-%d", os.Getpid(), rand.IntN(1<<30))
	uidBase := (15_259 + rand.IntN(30_000)) * 65536 // from 1e9 up, in 65536-uid steps
	s := &plainServer{url: "http://" + addr, key: "plain-build-test-key-0123456789", prefix: prefix}
	s.cmd = exec.Command(bin, "serve", "--data", data, "--listen", addr, "--pool", "0", "--no-network",
		"--cgroup-prefix", prefix, "--uid-base", fmt.Sprint(uidBase))
	s.cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+s.key)
	var log bytes.Buffer
	s.cmd.Stdout, s.cmd.Stderr = &log, &log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
		removeCgroups(prefix)
	})
	deadline := time.Now().Add(2 * time.Minute) // the first start builds the host template
	for {
		if _, err := s.call(http.MethodGet, "/v1/sandboxes", nil); err == nil {
			return s
		}
		if time.Now().After(deadline) || s.cmd.ProcessState != nil {
			t.Fatalf("the server did not come up:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroups removes what a stopped server with no sandboxes leaves of
// its prefix: empty directories.
func removeCgroups(prefix string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/" + prefix)
	if d := "/sys/fs/cgroup/" + prefix; fileExists(d) {
		roots = append(roots, d)
	}
	for _, r := range roots {
		var dirs []string
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = os.Remove(dirs[i])
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func (s *plainServer) call(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return b, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return b, nil
}

func (s *plainServer) create(t *testing.T) string {
	t.Helper()
	b, err := s.call(http.MethodPost, "/v1/sandboxes", map[string]any{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	var sb struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &sb); err != nil || sb.ID == "" {
		t.Fatalf("create answered %s", b)
	}
	return sb.ID
}

func (s *plainServer) exec(t *testing.T, id string, argv ...string) string {
	t.Helper()
	b, err := s.call(http.MethodPost, "/v1/sandboxes/"+id+"/exec", map[string]any{"cmd": argv})
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	var res struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec answered %s", b)
	}
	return res.Stdout
}

func (s *plainServer) delete(t *testing.T, id string) {
	t.Helper()
	if _, err := s.call(http.MethodDelete, "/v1/sandboxes/"+id, nil); err != nil {
		t.Fatalf("delete: %v", err)
	}
}
