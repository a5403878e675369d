//go:build linux

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// recorder is the manager's Observer: what the audit log would get.
type recorder struct {
	mu     sync.Mutex
	events []sandbox.Event
}

func (r *recorder) Event(_ context.Context, e sandbox.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return nil
}

func (r *recorder) find(kind, phase, sandboxID string) []sandbox.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sandbox.Event
	for _, e := range r.events {
		if e.Kind == kind && e.Phase == phase && (sandboxID == "" || e.Sandbox == sandboxID) {
			out = append(out, e)
		}
	}
	return out
}

// requests is the HTTP Auditor: who called /mcp.
type requests struct {
	mu       sync.Mutex
	actors   []string
	statuses []int
}

func (q *requests) Begin(r *http.Request, p auth.Principal, route string) (func(int), error) {
	q.mu.Lock()
	q.actors = append(q.actors, p.Tenant+"/"+p.KeyID+" "+route)
	q.mu.Unlock()
	return func(status int) {
		q.mu.Lock()
		q.statuses = append(q.statuses, status)
		q.mu.Unlock()
	}, nil
}

// harness is a real stack (testenv) whose manager has an Observer, served
// by the REST API with the MCP handler mounted at /mcp, as in paddock serve.
type harness struct {
	t   testing.TB
	e   *testenv.Env
	mgr *sandbox.Manager
	rec *recorder
	req *requests
	srv *mcp.Server
	hs  *httptest.Server
}

type harnessOptions struct {
	limits      *sandbox.Limits
	idle        time.Duration
	ports       bool
	maxSessions int
	// perTenant, perKey: the session limits of one tenant and one key.
	perTenant, perKey int
}

func newHarness(t testing.TB, o harnessOptions) *harness {
	t.Helper()
	e := testenv.New(t, testenv.Options{Limits: o.limits})
	limits := sandbox.DefaultLimits(2)
	if o.limits != nil {
		limits = *o.limits
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := &harness{t: t, e: e, rec: &recorder{}, req: &requests{}}
	// A manager of our own over the test stack's lower layers: testenv's
	// has no Observer. Started before anything exists, so its reconcile
	// sweep touches nothing of testenv's.
	snaps, err := snapshot.Open(filepath.Join(t.TempDir(), "snapshots"))
	if err != nil {
		t.Fatal(err)
	}
	vols := openTestVolumes(t) // volume_linux_test.go
	h.mgr = sandbox.New(sandbox.Config{Limits: limits}, sandbox.Deps{Log: log, Store: e.Store, Backend: e.Backend,
		Templates: e.Templates, Admission: e.Quotas, Observer: h.rec, Snapshots: snaps, Volumes: vols})
	if err := h.mgr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var links mcp.PortLinker // without: a manager with no HTTP server to reach its ports through
	if o.ports {
		links = api.NewPortLinks(h.mgr, e.Auth, "")
	}
	h.srv, err = mcp.New(mcp.Local(h.mgr.Caller(), links),
		mcp.Options{Log: log, Version: "test", IdleTimeout: o.idle, MaxSessions: o.maxSessions,
			MaxSessionsPerTenant: o.perTenant, MaxSessionsPerKey: o.perKey,
			AllowedOrigins: []string{"https://app.example"}, Auditor: h.req})
	if err != nil {
		t.Fatal(err)
	}
	a := api.New(api.Options{Log: log, Manager: h.mgr, Auth: e.Auth, Version: "test",
		Mounts:     map[string]http.Handler{"/mcp": h.srv.Handler(e.Auth)},
		Middleware: []func(http.Handler) http.Handler{api.Harden(api.HardenOptions{Log: log, AllowedOrigins: []string{"https://app.example"}})}})
	h.hs = httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = h.srv.Close(ctx)
		h.hs.Close()
		for _, tn := range []string{auth.DefaultTenant, "a", "b"} {
			list, _ := h.mgr.List(ctx, sandbox.Scope{Tenant: tn, Rights: rights.All}, nil)
			for _, sb := range list {
				_ = h.mgr.Delete(ctx, sandbox.Scope{Tenant: tn, Rights: rights.All}, sb.ID)
			}
		}
		_ = h.mgr.Close(ctx)
	})
	return h
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// key makes a tenant (if needed) and a key of it.
func (h *harness) key(tn string, q tenant.Quotas, scopes ...auth.Scope) auth.CreatedKey {
	h.t.Helper()
	ctx := context.Background()
	if _, err := h.e.Auth.Tenants().Get(ctx, tn); err != nil {
		if _, err := h.e.Auth.Tenants().Create(ctx, tn, q); err != nil {
			h.t.Fatal(err)
		}
	}
	if len(scopes) == 0 {
		scopes = []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}
	}
	k, err := h.e.Auth.CreateKey(ctx, h.e.Scope, auth.KeyRequest{Tenant: tn, Scopes: scopes})
	if err != nil {
		h.t.Fatal(err)
	}
	return k
}

// bearer adds the key to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

func newClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "paddock-test", Version: "1"}, nil)
}

// connectHTTP opens a session over streamable HTTP with key.
func (h *harness) connectHTTP(key string) *sdk.ClientSession {
	h.t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: h.hs.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}}
	cs, err := newClient().Connect(context.Background(), tr, nil)
	if err != nil {
		h.t.Fatalf("connect over HTTP: %v", err)
	}
	h.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// connectMemory opens a session over in-memory transports (the stdio
// code path), acting as p; done is closed when the server side finished
// (its sandbox deleted).
func connectMemory(t *testing.T, srv *mcp.Server, p auth.Principal) (cs *sdk.ClientSession, done chan struct{}) {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	done = make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(context.Background(), st, p); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	cs, err := newClient().Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatalf("connect in memory: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close(); <-done })
	return cs, done
}

// call runs a tool; it fails the test on a protocol error (failures must
// be isError results) and decodes the structured result into out.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v (failures must be isError results)", name, err)
	}
	if res.IsError {
		return res
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return res
}

func mustOK(t *testing.T, name string, res *sdk.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s failed: %s", name, text(res))
	}
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func wantError(t *testing.T, name string, res *sdk.CallToolResult, substrings ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: want an isError result, got %s", name, text(res))
	}
	for _, s := range substrings {
		if !strings.Contains(text(res), s) {
			t.Fatalf("%s: error %q lacks %q", name, text(res), s)
		}
	}
}

var toolNames = []string{"exec", "file_edit", "file_find", "file_list", "file_read", "file_search", "file_write",
	"port_url", "process_list", "process_output", "process_signal", "process_start",
	"run_code", "sandbox_create", "sandbox_delete", "sandbox_fork", "sandbox_fork_memory", "sandbox_hibernate", "sandbox_list",
	"sandbox_memory_snapshot", "sandbox_pause", "sandbox_resume",
	"sandbox_snapshot", "snapshot_delete", "snapshot_list", "volume_create", "volume_delete", "volume_list"}

func checkTools(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 40 {
			t.Errorf("%s: description too thin for a model: %q", tool.Name, tool.Description)
		}
		for what, sch := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			m, ok := sch.(map[string]any)
			if !ok || m["type"] != "object" {
				t.Errorf("%s: %s schema %v is not an object schema", tool.Name, what, sch)
			}
		}
	}
	sort.Strings(names)
	if !slices.Equal(names, toolNames) {
		t.Fatalf("tools = %v, want %v", names, toolNames)
	}
}

// sessionSandboxes lists a tenant's sandboxes made for MCP sessions.
func (h *harness) sessionSandboxes(tn string) []sandbox.Sandbox {
	var out []sandbox.Sandbox
	list, _ := h.mgr.List(context.Background(), sandbox.Scope{Tenant: tn, Rights: rights.All}, nil)
	for _, sb := range list {
		if sb.Spec.Labels[mcp.SessionLabel] != "" {
			out = append(out, sb)
		}
	}
	return out
}

// eventually polls cond (an asynchronous cleanup) for up to 30 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type execResult struct {
	Sandbox         string `json:"sandbox"`
	ExitCode        int    `json:"exit_code"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutBytes     int64  `json:"stdout_bytes"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	TimedOut        bool   `json:"timed_out"`
}

// roundTrip drives every tool family in the session sandbox.
func roundTrip(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	var ex execResult
	mustOK(t, "exec", call(t, cs, "exec", map[string]any{"command": "echo hello; echo oops >&2; exit 3"}, &ex))
	if ex.ExitCode != 3 || ex.Stdout != "hello\n" || ex.Stderr != "oops\n" || ex.Sandbox == "" {
		t.Fatalf("exec = %+v", ex)
	}
	id := ex.Sandbox

	var nulls execResult
	mustOK(t, "exec with null arguments", call(t, cs, "exec", map[string]any{"command": "echo n", "argv": nil, "cwd": nil}, &nulls))
	if nulls.Stdout != "n\n" {
		t.Fatalf("exec with nulls = %+v", nulls)
	}
	var argv execResult
	mustOK(t, "exec argv", call(t, cs, "exec", map[string]any{"argv": []string{"printf", "%s|", "a b", "$HOME"},
		"cwd": "/tmp", "env": map[string]string{"X": "1"}}, &argv))
	if argv.Stdout != "a b|$HOME|" || argv.Sandbox != id {
		t.Fatalf("exec argv = %+v (want the same session sandbox %s)", argv, id)
	}

	var big execResult
	mustOK(t, "exec big", call(t, cs, "exec", map[string]any{"command": "seq 1 100000", "max_output_bytes": 2048}, &big))
	if !big.StdoutTruncated || !strings.Contains(big.Stdout, "bytes omitted") || !strings.HasPrefix(big.Stdout, "1\n2\n") ||
		!strings.HasSuffix(big.Stdout, "99999\n100000\n") || big.StdoutBytes != 588895 {
		t.Fatalf("truncated exec: truncated=%v bytes=%d head %q tail %q", big.StdoutTruncated, big.StdoutBytes,
			big.Stdout[:min(20, len(big.Stdout))], big.Stdout[max(0, len(big.Stdout)-20):])
	}

	var w struct {
		Path  string `json:"path"`
		Bytes int64  `json:"bytes"`
	}
	mustOK(t, "file_write", call(t, cs, "file_write", map[string]any{"path": "/workspace/src/app.py",
		"content": "def greet():\n    return 'hi'\n\nprint(greet())\n"}, &w))
	if w.Path != "/workspace/src/app.py" || w.Bytes != 45 {
		t.Fatalf("file_write = %+v", w)
	}
	var e struct {
		Replacements int `json:"replacements"`
	}
	mustOK(t, "file_edit", call(t, cs, "file_edit", map[string]any{"path": "src/app.py", "old_string": "return 'hi'",
		"new_string": "return 'hello'"}, &e))
	if e.Replacements != 1 {
		t.Fatalf("file_edit = %+v", e)
	}
	var r struct {
		Content    string `json:"content"`
		StartLine  int    `json:"start_line"`
		EndLine    int    `json:"end_line"`
		TotalLines int    `json:"total_lines"`
		More       bool   `json:"more"`
	}
	mustOK(t, "file_read", call(t, cs, "file_read", map[string]any{"path": "/workspace/src/app.py", "start_line": 2, "end_line": 2}, &r))
	if r.Content != "    return 'hello'\n" || r.StartLine != 2 || r.EndLine != 2 || r.TotalLines != 4 || !r.More {
		t.Fatalf("file_read = %+v", r)
	}
	var run execResult
	mustOK(t, "exec python", call(t, cs, "exec", map[string]any{"command": "python3 src/app.py || sh -c 'grep -c hello src/app.py'"}, &run))
	if !strings.Contains(run.Stdout, "hello") && strings.TrimSpace(run.Stdout) != "1" {
		t.Fatalf("the edited file did not run: %+v", run)
	}
	var l struct {
		Entries []struct {
			Path, Type string
		} `json:"entries"`
	}
	mustOK(t, "file_list", call(t, cs, "file_list", map[string]any{"depth": 2}, &l))
	if !slices.ContainsFunc(l.Entries, func(e struct{ Path, Type string }) bool { return e.Path == "/workspace/src/app.py" && e.Type == "file" }) {
		t.Fatalf("file_list = %+v", l)
	}
	var f struct {
		Matches []struct{ Path string } `json:"matches"`
	}
	mustOK(t, "file_find", call(t, cs, "file_find", map[string]any{"pattern": "**/*.py"}, &f))
	if len(f.Matches) != 1 || f.Matches[0].Path != "/workspace/src/app.py" {
		t.Fatalf("file_find = %+v", f)
	}
	var s struct {
		Matches []struct {
			Path string
			Line int
			Text string
		} `json:"matches"`
	}
	mustOK(t, "file_search", call(t, cs, "file_search", map[string]any{"query": "HELLO", "ignore_case": true}, &s))
	if len(s.Matches) != 1 || s.Matches[0].Line != 2 || !strings.Contains(s.Matches[0].Text, "hello") {
		t.Fatalf("file_search = %+v", s)
	}

	var p struct {
		Sandbox string `json:"sandbox"`
		Process string `json:"process"`
		State   string `json:"state"`
	}
	mustOK(t, "process_start", call(t, cs, "process_start", map[string]any{"command": "echo started; sleep 60", "tag": "srv"}, &p))
	if p.Process == "" || p.State != "running" || p.Sandbox != id {
		t.Fatalf("process_start = %+v", p)
	}
	type output struct {
		Process struct {
			State    string `json:"state"`
			ExitCode *int   `json:"exit_code"`
			Signal   string `json:"signal"`
		} `json:"process"`
		Stdout       string `json:"stdout"`
		StdoutOffset int64  `json:"stdout_offset"`
	}
	var o output
	eventually(t, "the process's first output", func() bool {
		mustOK(t, "process_output", call(t, cs, "process_output", map[string]any{"process": p.Process}, &o))
		return o.Stdout == "started\n"
	})
	var again output
	mustOK(t, "process_output again", call(t, cs, "process_output", map[string]any{"process": "tag:srv", "stdout_offset": o.StdoutOffset}, &again))
	if again.Stdout != "" || again.StdoutOffset != o.StdoutOffset || again.Process.State != "running" {
		t.Fatalf("incremental read = %+v (after %+v)", again, o)
	}
	var pl struct {
		Processes []struct{ Process string } `json:"processes"`
	}
	mustOK(t, "process_list", call(t, cs, "process_list", map[string]any{}, &pl))
	if len(pl.Processes) != 1 || pl.Processes[0].Process != p.Process {
		t.Fatalf("process_list = %+v", pl)
	}
	var sig struct {
		Signalled int `json:"signalled"`
	}
	mustOK(t, "process_signal", call(t, cs, "process_signal", map[string]any{"process": p.Process, "signal": "SIGKILL", "tree": true}, &sig))
	if sig.Signalled < 1 {
		t.Fatalf("process_signal = %+v", sig)
	}
	var done output
	mustOK(t, "process_output wait", call(t, cs, "process_output", map[string]any{"process": p.Process, "wait_s": 10}, &done))
	if done.Process.State != "exited" || done.Stdout != "started\n" {
		t.Fatalf("after SIGKILL: %+v", done)
	}

	var list struct {
		Sandboxes []struct {
			ID      string `json:"id"`
			Session bool   `json:"session"`
		} `json:"sandboxes"`
		SessionSandbox string `json:"session_sandbox"`
	}
	mustOK(t, "sandbox_list", call(t, cs, "sandbox_list", nil, &list))
	if list.SessionSandbox != id || len(list.Sandboxes) != 1 || !list.Sandboxes[0].Session {
		t.Fatalf("sandbox_list = %+v", list)
	}
	// port_url: a link to the exposed-port route where a server serves
	// it, else an error saying why not.
	var pu struct {
		URL string `json:"url"`
	}
	if res := call(t, cs, "port_url", map[string]any{"port": 8080}, &pu); res.IsError {
		wantError(t, "port_url", res, "sandbox ports have no URL")
	} else if !strings.Contains(pu.URL, "/v1/sandboxes/"+id+"/ports/8080/?paddock_token=pdt_") {
		t.Fatalf("port_url = %q", pu.URL)
	}
	return id
}

func TestHTTP(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	cs := h.connectHTTP(k.Key)
	checkTools(t, cs)
	if n := len(h.sessionSandboxes("a")); n != 0 {
		t.Fatalf("%d session sandboxes before any call", n)
	}
	id := roundTrip(t, cs)
	sbs := h.sessionSandboxes("a")
	if len(sbs) != 1 || sbs[0].ID != id {
		t.Fatalf("session sandboxes = %+v, want just %s", sbs, id)
	}
	// The session's end (the client's DELETE) deletes its sandbox.
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the session sandbox to be deleted", func() bool { return len(h.rec.find("sandbox.delete", "result", id)) > 0 })
	if len(h.sessionSandboxes("a")) != 0 {
		t.Fatal("session sandbox still listed")
	}
	if ev := h.rec.find("sandbox.delete", "result", id); len(ev) != 1 || ev[0].Actor != k.ID {
		t.Fatalf("delete events = %+v, want one by %s", ev, k.ID)
	}
}

func TestInMemory(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	p := auth.Principal{KeyID: k.ID, Tenant: "a", Scopes: k.Scopes}
	cs, done := connectMemory(t, h.srv, p)
	checkTools(t, cs)
	id := roundTrip(t, cs)
	_ = cs.Close()
	<-done // Serve returns after the sandbox is gone
	if _, err := h.mgr.Get(context.Background(), sandbox.Scope{Tenant: "a", Rights: rights.All}, id); err == nil {
		t.Fatalf("session sandbox %s outlived its session", id)
	}
}

// The REST client backend (paddock mcp against a server).
func TestClientBackend(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	srv, err := mcp.New(client.New(h.hs.URL, k.Key), mcp.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cs, done := connectMemory(t, srv, auth.Principal{})
	checkTools(t, cs)
	id := roundTrip(t, cs)
	wantError(t, "exec elsewhere", call(t, cs, "exec", map[string]any{"sandbox": "sbx-nope", "command": "true"}, nil),
		`No sandbox with id "sbx-nope"`, "sandbox_list")
	_ = cs.Close()
	<-done
	if len(h.sessionSandboxes("a")) != 0 {
		t.Fatalf("session sandbox %s outlived its session", id)
	}
	if ev := h.rec.find("exec", "intent", id); len(ev) == 0 || ev[0].Actor != k.ID || ev[0].Tenant != "a" {
		t.Fatalf("exec events through REST = %+v", ev)
	}

	bad, err := mcp.New(client.New(h.hs.URL, "pdk_wrong"), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs2, _ := connectMemory(t, bad, auth.Principal{})
	wantError(t, "bad key", call(t, cs2, "exec", map[string]any{"command": "true"}, nil), "PADDOCK_API_KEY")
}

func TestErrorsAreToolResults(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	cs := h.connectHTTP(h.key("a", tenant.Quotas{}).Key)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"exec", map[string]any{"sandbox": "sbx-missing", "command": "true"}, []string{`No sandbox with id "sbx-missing"`, "sandbox_list", "omit `sandbox`"}},
		{"exec", map[string]any{}, []string{"Give `command`"}},
		{"exec", map[string]any{"command": "ls", "argv": []string{"ls"}}, []string{"not both"}},
		{"exec", map[string]any{"argv": []string{"/no/such/program"}}, nil},
		{"exec", map[string]any{"command": "true", "bogus": 1}, []string{"bogus"}},
		{"file_read", map[string]any{"path": "/workspace/missing.txt"}, []string{"missing.txt"}},
		{"file_read", map[string]any{}, []string{"path"}},
		{"file_write", map[string]any{"path": "/proc/x", "content": "x"}, nil},
		{"file_edit", map[string]any{"path": "/etc/hostname", "old_string": "no such text anywhere", "new_string": "x"}, []string{"does not occur"}},
		{"process_output", map[string]any{"process": "p999"}, nil},
		{"process_signal", map[string]any{"process": "p1", "signal": "SIGBOGUS"}, []string{"signal"}},
		{"sandbox_delete", map[string]any{"sandbox": "sbx-missing"}, []string{"No sandbox"}},
		{"sandbox_create", map[string]any{"memory_mb": 1}, []string{"memory_mb"}},
		{"port_url", map[string]any{"port": 70000}, []string{"port"}},
	} {
		res := call(t, cs, tc.tool, tc.args, nil)
		wantError(t, fmt.Sprintf("%s %v", tc.tool, tc.args), res, tc.want...)
	}
	// An ambiguous edit says how to fix it.
	mustOK(t, "file_write", call(t, cs, "file_write", map[string]any{"path": "twice.txt", "content": "x\nx\n"}, nil))
	wantError(t, "file_edit twice", call(t, cs, "file_edit", map[string]any{"path": "twice.txt", "old_string": "x", "new_string": "y"}, nil),
		"occurs 2 times", "replace_all")
	// A binary file is refused with a way forward.
	mustOK(t, "make binary", call(t, cs, "exec", map[string]any{"command": "head -c 100 /dev/zero > bin.dat"}, nil))
	wantError(t, "file_read binary", call(t, cs, "file_read", map[string]any{"path": "bin.dat"}, nil), "binary", "exec")
}
