//go:build linux

package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

// TestConsoleE2E runs web/console/e2e/console.e2e.mjs — Playwright
// (playwright-core, driving Debian's /usr/bin/chromium) with axe-core —
// against a real `paddock serve` with sandbox networking, both in a
// network namespace of the test's own. The script signs in, creates
// sandboxes, types in the terminal, moves files, watches the browser,
// sees a denied connection, verifies the audit chain, revokes a key and
// is signed out, checks that another tenant's sandbox never shows, that
// hostile names and output run no script, and that axe finds no serious
// or critical violation; it measures the list with 500 sandboxes and the
// terminal's echo. PADDOCK_CONSOLE_SCREENSHOTS=DIR keeps its screenshots
// (docs/console is where the docs take them from).
func TestConsoleE2E(t *testing.T) {
	testenv.RequireServer(t)
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("needs Debian's chromium (/usr/bin/chromium; .ci/run installs it)")
	}
	dir := workDir(t)
	bin := filepath.Join(t.TempDir(), "paddock")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/paddockhq/paddock/cmd/paddock").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	shots := os.Getenv("PADDOCK_CONSOLE_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if !filepath.IsAbs(shots) {
		shots = filepath.Join("..", "..", shots) // relative to the repository, like the docs
	}
	if shots, _ = filepath.Abs(shots); os.MkdirAll(shots, 0o755) != nil {
		t.Fatalf("cannot make %s", shots)
	}

	ns := netlab.New(t)
	srv := startServer(t, ns, bin)
	defer srv.cleanup()

	// About four minutes on an idle 2-core machine; a loaded one (CI runs
	// packages side by side) needs more.
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	results := filepath.Join(t.TempDir(), "results.json")
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "e2e", "console.e2e.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PADDOCK_URL=http://"+srv.addr, "PADDOCK_ADMIN_KEY="+srv.key,
		"SCREENSHOTS="+shots, "RESULTS="+results)
	var out bytes.Buffer
	w := io.MultiWriter(&out, lineLogger{t})
	cmd.Stdout, cmd.Stderr = w, w
	if err := ns.Do(cmd.Start); err != nil { // node and its chromium live in the namespace
		t.Fatal(err)
	}
	err := cmd.Wait()
	passed := 0
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "KEY "); ok {
			srv.keys = append(srv.keys, k)
		}
		if strings.HasPrefix(line, "ok ") {
			passed++
		}
	}
	if err != nil || !strings.Contains(out.String(), "ALL OK") {
		t.Fatalf("the console e2e script failed: %v\nserver log:\n%s", err, srv.log())
	}
	if passed < 20 {
		t.Fatalf("only %d steps passed", passed)
	}
	var res struct {
		ListRenderMs  float64 `json:"list_render_ms"`
		SnapshotDomMs float64 `json:"snapshot_dom_ms"`
		UpdateP50Ms   float64 `json:"update_p50_ms"`
		UpdateMaxMs   float64 `json:"update_max_ms"`
		EchoP50Ms     float64 `json:"echo_p50_ms"`
		Sandboxes     int     `json:"sandboxes"`
	}
	b, err := os.ReadFile(results)
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("no results from the script: %v", err)
	}
	t.Logf("performance: %d sandboxes listed in %.0f ms (snapshot to DOM %.0f ms); updates p50 %.1f ms, max %.1f ms; terminal echo p50 %.1f ms",
		res.Sandboxes, res.ListRenderMs, res.SnapshotDomMs, res.UpdateP50Ms, res.UpdateMaxMs, res.EchoP50Ms)
}

// lineLogger streams the script's output into the test log (with -v, as
// it happens: a run cut short by the test's timeout still shows how far it
// got).
type lineLogger struct{ t *testing.T }

func (l lineLogger) Write(p []byte) (int, error) {
	l.t.Logf("e2e: %s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}

// e2eServer is a paddock serve in a namespace.
type e2eServer struct {
	t      *testing.T
	ns     *netlab.NS
	cmd    *exec.Cmd
	dir    string
	addr   string
	key    string
	prefix string
	keys   []string // "tenant key" pairs the script made, for cleanup
	hc     *http.Client
	exited chan struct{}
}

func startServer(t *testing.T, ns *netlab.NS, bin string) *e2eServer {
	t.Helper()
	dir, err := os.MkdirTemp("", "pdkui")
	if err != nil {
		t.Fatal(err)
	}
	s := &e2eServer{t: t, ns: ns, dir: dir, addr: "127.0.0.1:7070", key: auth.NewKey(),
		prefix: fmt.Sprintf("paddock-ui-%d", os.Getpid()), exited: make(chan struct{}),
		hc: &http.Client{Transport: &http.Transport{DialContext: ns.Dial}}}
	s.cmd = exec.Command(bin, "serve", "--data", filepath.Join(dir, "data"), "--listen", s.addr, "--pool", "0",
		"--cgroup-prefix", s.prefix, "--uid-base", "700006400", "--log-level", "warn", "--net-pool-v6", "none",
		"--dns-upstream", "127.0.0.1:9") // nothing answers there: no lookup leaves the namespace
	s.cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+s.key)
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := ns.Do(s.cmd.Start); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if s.status("GET", "/v1/sandboxes", s.key) == http.StatusOK {
			return s
		}
		select {
		case <-s.exited:
			t.Fatalf("the server exited at start:\n%s", s.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not come up:\n%s", s.log())
		}
	}
}

func (s *e2eServer) status(method, path, key string) int {
	req, _ := http.NewRequest(method, "http://"+s.addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (s *e2eServer) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// cleanup deletes every sandbox any key of the test still sees, stops
// the server and removes its cgroups, mounts and files.
func (s *e2eServer) cleanup() {
	for _, k := range append([]string{"default " + s.key}, s.keys...) {
		_, key, _ := strings.Cut(k, " ")
		req, _ := http.NewRequest("GET", "http://"+s.addr+"/v1/sandboxes", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := s.hc.Do(req)
		if err != nil {
			continue
		}
		var body struct {
			Sandboxes []struct {
				ID string `json:"id"`
			} `json:"sandboxes"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		for _, sb := range body.Sandboxes {
			s.status("DELETE", "/v1/sandboxes/"+sb.ID, key)
		}
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(40 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct", "freezer", "unified"} {
		removeTree(filepath.Join("/sys/fs/cgroup", ctrl, s.prefix))
	}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var mounts []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], s.dir+"/") {
			mounts = append(mounts, f[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = syscall.Unmount(mounts[i], syscall.MNT_DETACH)
	}
	_ = os.RemoveAll(s.dir)
}

// removeTree removes an (empty) cgroup directory tree, deepest first.
func removeTree(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i])
	}
}
