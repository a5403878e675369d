//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/testenv"
)

// paddockBin is the test binary as `paddock` (testscript puts it in PATH;
// see TestMain).
func paddockBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("paddock")
	if err != nil {
		t.Fatalf("paddock is not in PATH (TestMain sets it up): %v", err)
	}
	return bin
}

func connect(t *testing.T, tr sdk.Transport) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "paddock-cmd-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: %v", name, res.Content[0].(*sdk.TextContent).Text)
	}
	return res.StructuredContent.(map[string]any)
}

func sessionSandboxes(e *testenv.Env) int {
	n := 0
	list, _ := e.Manager.List(context.Background(), e.Scope, nil)
	for _, sb := range list {
		if sb.Spec.Labels[mcp.SessionLabel] != "" {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// `paddock mcp` as a real subprocess on stdio, talking to a server.
func TestMCPStdioCommand(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	cmd := exec.Command(paddockBin(t), "mcp")
	cmd.Env = append(os.Environ(), "PADDOCK_URL="+e.Server.URL, "PADDOCK_API_KEY="+e.AdminKey)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs := connect(t, &sdk.CommandTransport{Command: cmd})
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) < 15 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	out := callTool(t, cs, "exec", map[string]any{"command": "echo $((6*7)) > /workspace/n; cat /workspace/n"})
	if out["stdout"] != "42\n" {
		t.Fatalf("exec = %v", out)
	}
	read := callTool(t, cs, "file_read", map[string]any{"path": "/workspace/n"})
	if read["content"] != "42\n" || read["sandbox"] != out["sandbox"] {
		t.Fatalf("file_read = %v", read)
	}
	if sessionSandboxes(e) != 1 {
		t.Fatal("no session sandbox on the server")
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v (stderr: %s)", err, stderr.String())
	}
	if n := sessionSandboxes(e); n != 0 {
		t.Fatalf("%d session sandboxes left after paddock mcp exited (stderr: %s)", n, stderr.String())
	}
}

// `paddock mcp --embedded`: its own manager, no server.
func TestMCPEmbedded(t *testing.T) {
	testenv.RequireRoot(t)
	data, err := os.MkdirTemp("", "pdk") // short: socket paths live under it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeMounted(data) })
	prefix := fmt.Sprintf("paddock-mcp-test-%d", os.Getpid())
	t.Cleanup(func() { removeCgroups(prefix) })
	cmd := exec.Command(paddockBin(t), "mcp", "--embedded", "--data", data, "--cgroup-prefix", prefix,
		"--uid-base", "3500007936", "--pool", "0", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "PADDOCK_URL=http://127.0.0.1:1", "PADDOCK_API_KEY=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "paddock-cmd-test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	out := callTool(t, cs, "exec", map[string]any{"argv": []string{"sh", "-c", "id -u; hostname"}})
	if !strings.HasPrefix(out["stdout"].(string), "0\n") {
		t.Fatalf("exec = %v", out)
	}
	callTool(t, cs, "file_write", map[string]any{"path": "notes.md", "content": "# hi\n"})
	found := callTool(t, cs, "file_find", map[string]any{"pattern": "*.md"})
	if m := found["matches"].([]any); len(m) != 1 {
		t.Fatalf("file_find = %v", found)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), `"level":"ERROR"`) {
		t.Fatalf("errors logged:\n%s", stderr.String())
	}
	// The session's sandbox went with the session: nothing left running.
	ents, _ := os.ReadDir(filepath.Join(data, "run", "sandboxes"))
	if len(ents) != 0 {
		t.Fatalf("sandboxes left behind: %v", ents)
	}
}

// removeCgroups removes the (empty) cgroups under prefix in every
// hierarchy, deepest first.
func removeCgroups(prefix string) {
	ctrls, _ := os.ReadDir("/sys/fs/cgroup")
	for _, c := range ctrls {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join("/sys/fs/cgroup", c.Name(), prefix), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = syscall.Rmdir(dirs[i])
		}
	}
}

// removeMounted removes a data directory, detaching what the stack left
// mounted in it (its run directory stays mounted for a restart).
func removeMounted(dir string) {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var mounts []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			mounts = append(mounts, f[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = syscall.Unmount(mounts[i], syscall.MNT_DETACH)
	}
	_ = os.RemoveAll(dir)
}

// /mcp on the server, as serve mounts it (testenv's stack is serve's:
// internal/server).
func TestServeMountsMCP(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	hs := e.Server
	resp, err := http.Post(hs.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: status %d", resp.StatusCode)
	}
	tr := &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: addBearer(e.AdminKey)}}
	cs := connect(t, tr)
	out := callTool(t, cs, "exec", map[string]any{"command": "echo ok"})
	if out["stdout"] != "ok\n" {
		t.Fatalf("exec = %v", out)
	}
	_ = cs.Close()
	waitFor(t, "the session sandbox to go", func() bool { return sessionSandboxes(e) == 0 })
}

type bearerTransport struct{ key string }

func addBearer(key string) http.RoundTripper { return bearerTransport{key} }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// inspectorVersion is the last MCP Inspector that runs on Node 20.
const inspectorVersion = "0.15.0"

// inspector installs the unmodified MCP Inspector (once per machine, in
// the temp dir) from testdata/npm/inspector, whose lock file pins its whole
// dependency tree, and returns a function running its CLI.
func inspector(t *testing.T) func(args ...string) ([]byte, error) {
	t.Helper()
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the MCP Inspector test needs %s (Node.js 20 and npm): %v", tool, err)
		}
	}
	dir := filepath.Join(os.TempDir(), "paddock-mcp-inspector-"+inspectorVersion)
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(bin); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for _, f := range []string{"package.json", "package-lock.json"} {
			b, err := os.ReadFile(filepath.Join("testdata", "npm", "inspector", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		install := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			_ = os.RemoveAll(dir)
			t.Skipf("cannot install @modelcontextprotocol/inspector@%s with npm (offline?): %v\n%s", inspectorVersion, err, out)
		}
	}
	return func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npx", append([]string{"--no-install", "mcp-inspector", "--cli"}, args...)...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return out, fmt.Errorf("%w: %s%s", err, out, stderr.String())
		}
		return out, nil
	}
}

type inspected struct {
	Tools []struct {
		Name         string         `json:"name"`
		InputSchema  map[string]any `json:"inputSchema"`
		OutputSchema map[string]any `json:"outputSchema"`
	} `json:"tools"`
	IsError           bool             `json:"isError"`
	Content           []map[string]any `json:"content"`
	StructuredContent map[string]any   `json:"structuredContent"`
}

func runInspector(t *testing.T, run func(...string) ([]byte, error), target []string, method string, args ...string) inspected {
	t.Helper()
	all := append(append([]string{}, target...), "--method", method)
	all = append(all, args...)
	out, err := run(all...)
	if err != nil {
		t.Fatalf("inspector %v: %v", all, err)
	}
	var res inspected
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("inspector output: %v\n%s", err, out)
	}
	if res.IsError {
		t.Fatalf("inspector %v: tool error %v", all, res.Content)
	}
	return res
}

// The unmodified MCP Inspector CLI lists the tools and calls exec and the
// file tools, over stdio (paddock mcp) and over streamable HTTP (/mcp).
func TestInspector(t *testing.T) {
	run := inspector(t)
	e := testenv.New(t, testenv.Options{})
	hs := e.Server // /mcp mounted, as serve mounts it
	// Inspector 0.15's CLI cannot send headers; an authenticating proxy
	// in front of /mcp (as a gateway would be) adds the bearer key.
	u, _ := url.Parse(hs.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // event streams
	director := proxy.Director
	proxy.Director = func(r *http.Request) {
		director(r)
		r.Header.Set("Authorization", "Bearer "+e.AdminKey)
	}
	gw := httptest.NewServer(proxy)
	defer gw.Close()

	for _, tc := range []struct {
		name   string
		target []string
	}{
		{"stdio", []string{"-e", "PADDOCK_URL=" + e.Server.URL, "-e", "PADDOCK_API_KEY=" + e.AdminKey, paddockBin(t), "mcp"}},
		{"http", []string{gw.URL + "/mcp", "--transport", "http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := runInspector(t, run, tc.target, "tools/list")
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if tool.InputSchema["type"] != "object" || tool.OutputSchema["type"] != "object" {
					t.Errorf("%s: schemas %v / %v", tool.Name, tool.InputSchema, tool.OutputSchema)
				}
			}
			for _, want := range []string{"exec", "file_read", "file_write", "file_edit", "file_list", "file_find", "file_search",
				"process_start", "process_output", "process_signal", "sandbox_create", "sandbox_list", "sandbox_delete", "port_url"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}
			ex := runInspector(t, run, tc.target, "tools/call", "--tool-name", "exec", "--tool-arg", "command=echo inspected | tr a-z A-Z")
			if ex.StructuredContent["stdout"] != "INSPECTED\n" || ex.StructuredContent["exit_code"] != float64(0) {
				t.Fatalf("exec = %+v", ex)
			}
			// Each Inspector run is its own session: the file tools work on
			// a sandbox made for the purpose.
			sb, err := e.Client.Create(context.Background(), client.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Client.Delete(context.Background(), sb.ID)
			runInspector(t, run, tc.target, "tools/call", "--tool-name", "file_write", "--tool-arg", "sandbox="+sb.ID,
				"--tool-arg", "path=/workspace/hello.txt", "--tool-arg", "content=hello from the inspector")
			rd := runInspector(t, run, tc.target, "tools/call", "--tool-name", "file_read", "--tool-arg", "sandbox="+sb.ID,
				"--tool-arg", "path=/workspace/hello.txt")
			if rd.StructuredContent["content"] != "hello from the inspector" {
				t.Fatalf("file_read = %+v", rd)
			}
			ls := runInspector(t, run, tc.target, "tools/call", "--tool-name", "file_list", "--tool-arg", "sandbox="+sb.ID)
			if fmt.Sprint(ls.StructuredContent["entries"]) == "[]" {
				t.Fatalf("file_list = %+v", ls)
			}
			if tc.name == "stdio" {
				// paddock mcp exits with the Inspector: its sandboxes go.
				waitFor(t, "the Inspector sessions' sandboxes to go", func() bool { return sessionSandboxes(e) == 0 })
			}
			// Over HTTP the Inspector leaves without ending its sessions
			// (no DELETE): the idle timeout ends them, and their sandboxes'
			// own time limits bound them meanwhile (see internal/mcp).
		})
	}
	// Without the key, /mcp refuses the Inspector.
	if out, err := run(hs.URL+"/mcp", "--transport", "http", "--method", "tools/list"); err == nil || !strings.Contains(err.Error(), "unauthenticated") {
		t.Fatalf("inspector without a key: %v %s", err, out)
	}
}
