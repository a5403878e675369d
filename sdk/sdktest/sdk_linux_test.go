//go:build linux

package sdktest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
	"github.com/paddockhq/paddock/internal/testenv"
)

// python is Debian's interpreter: a pyenv python3 earlier on PATH lacks
// python3-httpx and python3-websockets.
const python = "/usr/bin/python3"

// root is the repository root (this package is sdk/sdktest).
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// server is a running `paddock serve`.
type server struct {
	URL, Key string
	// Registry is a reference the server can pull (a small busybox image
	// on a local docker-registry), "" without docker-registry and busybox.
	Registry string
}

// registry starts Debian's docker-registry with a small image on it, if
// docker-registry and busybox are installed: the reference, and the serve
// flags that reach it. Without them the suites skip the pull tests with
// the reason (PADDOCK_TEST_REGISTRY_SKIP).
func registry(t *testing.T) (ref, skip string, flags []string) {
	for _, bin := range []string{"docker-registry", "busybox"} {
		if _, err := exec.LookPath(bin); err != nil {
			return "", bin + " is not installed (apt-get install docker-registry busybox-static): template pull is not tested", nil
		}
	}
	reg := ocitest.Start(t)
	layer := ocitest.Busybox(t, map[string]ocitest.File{"hello.txt": {Body: "pulled from the registry\n"}})
	ref = reg.Ref("sdk/hello:1")
	reg.Push(t, ref, ocitest.Image(t, v1.Config{Env: []string{"PATH=/bin", "FROM_IMAGE=1"}}, types.OCILayer, layer))
	return ref, "", []string{"--insecure-registry", reg.Host, "--registry-auth", reg.DockerConfig(t)}
}

// serve builds paddock and starts `paddock serve` on a temp data dir and a
// free loopback port; t.Cleanup stops it (SIGTERM, which destroys its sandboxes).
func serve(t *testing.T) server {
	t.Helper()
	dir, err := os.MkdirTemp("", "pdksdk") // short: sockets live under it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	bin := filepath.Join(dir, "paddock")
	build := exec.Command("go", "build", "-o", bin, "./cmd/paddock")
	build.Dir = root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	key := auth.NewKey()
	ref, skip, regFlags := registry(t)
	args := append([]string{"serve", "--data", filepath.Join(dir, "data"), "--listen", addr, "--pool", "0",
		"--cgroup-prefix", fmt.Sprintf("paddock-sdktest-%d", os.Getpid()), "--uid-base", "600007936"}, regFlags...)
	cmd := exec.Command(bin, args...)
	if skip != "" {
		t.Log(skip)
		_ = os.Setenv("PADDOCK_TEST_REGISTRY_SKIP", skip)
	}
	cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+key)
	logPath := filepath.Join(dir, "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url := "http://" + addr
	prefix := fmt.Sprintf("paddock-sdktest-%d", os.Getpid())
	t.Cleanup(func() {
		// serve keeps sandboxes across a restart: delete what a failed
		// suite left, then stop the server and remove its (empty) cgroups.
		deleteAll(t, url, key)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _, _ = cmd.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", prefix))
		for _, d := range dirs {
			_ = os.Remove(d)
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("server log (tail):\n%s", tail(b, 6000))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("paddock serve did not come up:\n%s", tail(b, 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return server{URL: url, Key: key, Registry: ref}
}

// deleteAll deletes every sandbox of every tenant, through the API: the
// admin mints a short key per tenant (sandboxes are listed per tenant).
func deleteAll(t *testing.T, url, admin string) {
	call := func(method, path, key string, body any, out any) int {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, url+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	var tenants struct {
		Tenants []struct{ Name string } `json:"tenants"`
	}
	call("GET", "/v1/tenants", admin, nil, &tenants)
	left := 0
	for _, tn := range tenants.Tenants {
		var k struct{ ID, Key string }
		if call("POST", "/v1/keys", admin, map[string]any{"tenant": tn.Name, "scopes": []string{"read", "write"}, "expires_in_s": 300}, &k) != 201 {
			continue
		}
		var list struct {
			Sandboxes []struct{ ID string } `json:"sandboxes"`
		}
		call("GET", "/v1/sandboxes", k.Key, nil, &list)
		for _, sb := range list.Sandboxes {
			call("DELETE", "/v1/sandboxes/"+sb.ID, k.Key, nil, nil)
			left++
		}
		call("DELETE", "/v1/keys/"+k.ID, admin, nil, nil)
	}
	if left > 0 {
		t.Logf("deleted %d sandboxes the suites left behind", left)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// run runs name args in dir with the server in the environment and returns
// its combined output; the test fails if it exits non-zero.
func run(t *testing.T, s server, dir string, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PADDOCK_URL="+s.URL, "PADDOCK_API_KEY="+s.Key, "PYTHONDONTWRITEBYTECODE=1", "NO_COLOR=1",
		"PADDOCK_TEST_REGISTRY_REF="+s.Registry)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("%s %s output:\n%s", name, strings.Join(args, " "), tail(out, 30000))
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

func requirePython(t *testing.T) {
	t.Helper()
	probe := exec.Command(python, "-c", "import httpx, websockets, pytest")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("the Python SDK suite needs Debian's python3 with python3-httpx, python3-websockets and python3-pytest (.ci/run installs them): %v %s", err, out)
	}
}

func requireNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the TypeScript SDK suite needs %s (Node.js 20 and npm; .ci/run installs them): %v", tool, err)
		}
	}
}

var (
	pytestSummary = regexp.MustCompile(`(?m)^(?:=+ )?(\d+) passed(?:, (\d+) skipped)?.* in [\d.]+s`)
	nodeCount     = regexp.MustCompile(`(?m)^# (pass|fail|cancelled) (\d+)$`)
)

// TestSDKs starts one server and runs both SDKs' suites against it.
func TestSDKs(t *testing.T) {
	testenv.RequireServer(t)
	s := serve(t)
	r := root(t)

	t.Run("python", func(t *testing.T) {
		requirePython(t)
		out := run(t, s, filepath.Join(r, "sdk", "python"), 10*time.Minute, python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "tests")
		m := pytestSummary.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no pytest summary in:\n%s", tail([]byte(out), 4000))
		}
		t.Logf("pytest: %s", m[0])
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "SKIPPED") {
				t.Log(line)
			}
		}
		if n, _ := strconv.Atoi(m[1]); n < 50 {
			t.Errorf("only %d Python tests passed", n)
		}
		if !strings.Contains(out, "0 violations") {
			t.Errorf("answers differ from /openapi.json")
		}
	})

	t.Run("python-wheel", func(t *testing.T) {
		requirePython(t)
		if out, err := exec.Command(python, "-c", "import setuptools, wheel, pip").CombinedOutput(); err != nil {
			t.Skipf("building the wheel needs python3-pip, python3-setuptools and python3-wheel (.ci/run installs them): %v %s", err, out)
		}
		// Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
		src := filepath.Join(t.TempDir(), "python")
		copyTree(t, filepath.Join(r, "sdk", "python"), src, func(rel string) bool {
			return !strings.Contains(rel, "__pycache__") && !strings.HasPrefix(rel, "tests") && !strings.HasPrefix(rel, "build")
		})
		wheels := t.TempDir()
		run(t, s, src, 5*time.Minute, python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", wheels, ".")
		ents, _ := filepath.Glob(filepath.Join(wheels, "paddock_sdk-*.whl"))
		if len(ents) != 1 {
			t.Fatalf("wheels: %v", ents)
		}
		list := run(t, s, wheels, time.Minute, python, "-m", "zipfile", "-l", ents[0])
		for _, want := range []string{"paddock/py.typed", "paddock/models.py", "paddock/_sync_client.py", "paddock/integrations/langchain.py"} {
			if !strings.Contains(list, want) {
				t.Errorf("the wheel lacks %s:\n%s", want, list)
			}
		}
	})

	t.Run("typescript", func(t *testing.T) {
		requireNode(t)
		dir := installTS(t, filepath.Join(r, "sdk", "typescript"))
		run(t, s, dir, 5*time.Minute, "node", filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json")
		out := run(t, s, dir, 10*time.Minute, "node", "--test", "--test-reporter=tap", "test/")
		counts := map[string]int{}
		for _, m := range nodeCount.FindAllStringSubmatch(out, -1) {
			counts[m[1]], _ = strconv.Atoi(m[2])
		}
		t.Logf("node --test: %v", counts)
		if counts["fail"] != 0 || counts["cancelled"] != 0 || counts["pass"] < 35 {
			t.Fatalf("node --test: %v\n%s", counts, tail([]byte(out), 8000))
		}
	})
}

// installTS installs the TypeScript package's pinned dependencies with npm
// ci into a cache directory keyed by its lock file (once per machine; the
// test then copies the sources in), and returns that directory.
func installTS(t *testing.T, pkg string) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(pkg, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	dir := filepath.Join(os.TempDir(), "paddock-sdk-ts-"+hex.EncodeToString(sum[:6]))
	marker := filepath.Join(dir, "node_modules", ".paddock-installed")
	if _, err := os.Stat(marker); err != nil {
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"package.json", "package-lock.json"} {
			copyFile(t, filepath.Join(pkg, f), filepath.Join(dir, f))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		install := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			_ = os.RemoveAll(dir)
			t.Fatalf("npm ci (sdk/typescript): %v\n%s", err, tail(out, 6000))
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"src", "test", "bench", "dist"} {
		_ = os.RemoveAll(filepath.Join(dir, sub))
	}
	copyFile(t, filepath.Join(pkg, "package.json"), filepath.Join(dir, "package.json"))
	copyFile(t, filepath.Join(pkg, "tsconfig.json"), filepath.Join(dir, "tsconfig.json"))
	for _, sub := range []string{"src", "test", "bench"} {
		copyTree(t, filepath.Join(pkg, sub), filepath.Join(dir, sub), func(string) bool { return true })
	}
	return dir
}

func copyTree(t *testing.T, from, to string, keep func(rel string) bool) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if rel != "." && !keep(rel) {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		copyFile(t, p, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, _ := in.Stat()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, bufio.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
