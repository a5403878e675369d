package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type answer struct {
	status int
	code   string
	body   string
}

func call(t *testing.T, e *testenv.Env, method, path, body string, hdr ...string) answer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.Server.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.AdminKey)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	_ = json.Unmarshal(b, &eb)
	return answer{status: resp.StatusCode, code: eb.Error.Code, body: string(b)}
}

// TestBadInput: each bad request gets a clear 4xx with a stable code,
// leaves nothing half-created, and the server keeps serving.
func TestBadInput(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	big := `{"labels":{"k":"` + strings.Repeat("x", api.MaxJSONBody) + `"}}`
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
		inMessage                string
	}{
		{"unknown template", "POST", "/v1/sandboxes", `{"template":"nope"}`, 404, "not_found", "nope"},
		{"invalid template name", "POST", "/v1/sandboxes", `{"template":"../etc"}`, 400, "invalid_argument", ""},
		{"memory too small", "POST", "/v1/sandboxes", `{"memory_mb":1}`, 400, "invalid_argument", "memory_mb"},
		{"memory too large", "POST", "/v1/sandboxes", `{"memory_mb":99999999}`, 400, "invalid_argument", "memory_mb"},
		{"negative cpu", "POST", "/v1/sandboxes", `{"cpu":-1}`, 400, "invalid_argument", "cpu"},
		{"too many cpus", "POST", "/v1/sandboxes", `{"cpu":1000}`, 400, "invalid_argument", "cpu"},
		{"disk too large", "POST", "/v1/sandboxes", `{"disk_mb":99999999}`, 400, "invalid_argument", "disk_mb"},
		{"pids too small", "POST", "/v1/sandboxes", `{"pids":1}`, 400, "invalid_argument", "pids"},
		{"timeout too long", "POST", "/v1/sandboxes", `{"timeout_s":99999999}`, 400, "invalid_argument", "timeout_s"},
		{"unknown field", "POST", "/v1/sandboxes", `{"memroy_mb":512}`, 400, "invalid_argument", "memroy_mb"},
		{"wrong type", "POST", "/v1/sandboxes", `{"cpu":"lots"}`, 400, "invalid_argument", "cpu"},
		{"syntax error", "POST", "/v1/sandboxes", `{"cpu":`, 400, "invalid_argument", ""},
		{"trailing data", "POST", "/v1/sandboxes", `{} {}`, 400, "invalid_argument", "trailing"},
		{"deep json", "POST", "/v1/sandboxes", deep, 400, "invalid_argument", "nested"},
		{"oversized body", "POST", "/v1/sandboxes", big, 413, "too_large", ""},
		{"bad label key", "POST", "/v1/sandboxes", `{"labels":{"a b":"c"}}`, 400, "invalid_argument", "label"},
		{"bad env key", "POST", "/v1/sandboxes", `{"env":{"1X":"c"}}`, 400, "invalid_argument", "environment"},
		{"unknown network mode", "POST", "/v1/sandboxes", `{"network":{"mode":"wide-open"}}`, 400, "invalid_argument", "wide-open"},
		{"malformed id", "GET", "/v1/sandboxes/..%2f..%2fetc", "", 404, "not_found", ""},
		{"malformed id delete", "DELETE", "/v1/sandboxes/x", "", 404, "not_found", ""},
		{"unknown id", "GET", "/v1/sandboxes/sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", "", 404, "not_found", ""},
		{"exec: no command", "POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":[]}`, 400, "invalid_argument", "cmd"},
		{"exec: missing command", "POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":["no-such-program"]}`, 400, "command_not_found", "no-such-program"},
		{"exec: not executable", "POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":["/etc/passwd"]}`, 400, "command_not_found", ""},
		{"exec: NUL in argv", "POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":["echo","a\u0000b"]}`, 400, "invalid_argument", "NUL"},
		{"exec: bad user", "POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":["id"],"user":"admin"}`, 400, "invalid_argument", "user"},
		{"exec: bad cwd", "POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":["id"],"cwd":"/nope"}`, 400, "invalid_argument", "/nope"},
		{"exec: negative timeout", "POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":["id"],"timeout_ms":-5}`, 400, "invalid_argument", "timeout"},
		{"exec: unknown field", "POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"command":["id"]}`, 400, "invalid_argument", ""},
		{"exec: unknown sandbox", "POST", "/v1/sandboxes/sb-aaaaaaaaaaaaaaaaaaaaaaaaaa/exec", `{"cmd":["id"]}`, 404, "not_found", ""},
		{"no such route", "GET", "/v1/nothing", "", 404, "not_found", ""},
		{"wrong method", "PATCH", "/v1/sandboxes", "{}", 405, "method_not_allowed", "PATCH"},
		{"wrong method on an item", "PUT", "/v1/sandboxes/" + sb.ID, "{}", 405, "method_not_allowed", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, e, c.method, c.path, c.body)
			if a.status != c.status || a.code != c.code {
				t.Fatalf("%s %s: got %d %q, want %d %q: %s", c.method, c.path, a.status, a.code, c.status, c.code, clip(a.body))
			}
			if c.inMessage != "" && !strings.Contains(a.body, c.inMessage) {
				t.Errorf("message does not name %q: %s", c.inMessage, clip(a.body))
			}
			if strings.Contains(a.body, e.Data) || strings.Contains(a.body, "goroutine") {
				t.Errorf("answer leaks internals: %s", clip(a.body))
			}
		})
	}
	// Nothing half-created: only the one good sandbox exists, and no
	// stray layer or run directory is left.
	if list, _ := e.Manager.List(t.Context(), e.Scope, nil); len(list) != 1 {
		t.Fatalf("sandboxes after bad input: %d, want 1", len(list))
	}
	runDirs, _ := os.ReadDir(filepath.Join(e.Data, "run", "sandboxes"))
	if len(runDirs) != 1 {
		t.Errorf("run directories: %d, want 1", len(runDirs))
	}
	// The server keeps serving.
	if res := e.Exec(sb.ID, "echo", "still here"); res.Stdout != "still here\n" {
		t.Fatalf("server unhealthy after bad input: %+v", res)
	}
}

func TestAuthRequired(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	for _, h := range []string{"", "Bearer ", "Bearer wrong-key", "Basic " + e.AdminKey, e.AdminKey} {
		req, _ := http.NewRequest("GET", e.Server.URL+"/v1/sandboxes", nil)
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("Authorization %q: status %d, want 401", h, resp.StatusCode)
		}
	}
	// Positive control: the right key works; healthz needs none.
	if a := call(t, e, "GET", "/v1/sandboxes", ""); a.status != 200 {
		t.Fatalf("admin key refused: %d %s", a.status, a.body)
	}
	resp, err := http.Get(e.Server.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, resp)
	}
	resp.Body.Close()
}

func TestExecShapes(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{Env: map[string]string{"SANDBOX_VAR": "s"}})
	a := call(t, e, "POST", "/v1/sandboxes/"+sb.ID+"/exec",
		`{"cmd":["sh","-c","echo out; echo err >&2; echo $SANDBOX_VAR $REQ_VAR; pwd; cat; exit 3"],"env":{"REQ_VAR":"r"},"cwd":"/tmp","stdin":"in\n"}`)
	var res api.ExecResponse
	if err := json.Unmarshal([]byte(a.body), &res); err != nil || a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if res.ExitCode != 3 || res.Stdout != "out\ns r\n/tmp\nin\n" || res.Stderr != "err\n" || res.DurationMs <= 0 {
		t.Fatalf("result %+v", res)
	}
	// Streaming NDJSON: stdout/stderr events then the result.
	a = call(t, e, "POST", "/v1/sandboxes/"+sb.ID+"/exec", `{"cmd":["sh","-c","echo a; echo b >&2; exit 7"]}`,
		"Accept", "application/x-ndjson")
	lines := strings.Split(strings.TrimSpace(a.body), "\n")
	var sawOut, sawErr bool
	for _, l := range lines[:len(lines)-1] {
		sawOut = sawOut || l == `{"stdout":"a\n"}`
		sawErr = sawErr || l == `{"stderr":"b\n"}`
	}
	var last struct {
		ExitCode *int `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.ExitCode == nil || *last.ExitCode != 7 || !sawOut || !sawErr {
		t.Fatalf("stream: %q", a.body)
	}
	// Output cap: truncation flagged, bytes counted.
	a = call(t, e, "POST", "/v1/sandboxes/"+sb.ID+"/exec", `{"cmd":["sh","-c","head -c 100000 /dev/zero"],"max_output_bytes":1000}`)
	res = api.ExecResponse{}
	_ = json.Unmarshal([]byte(a.body), &res)
	if len(res.Stdout) != 1000 || !res.StdoutTruncated || res.StdoutBytes != 100000 {
		t.Fatalf("cap: len %d truncated %v bytes %d", len(res.Stdout), res.StdoutTruncated, res.StdoutBytes)
	}
	// Killed by a signal: reported, exit code 128+n.
	a = call(t, e, "POST", "/v1/sandboxes/"+sb.ID+"/exec", `{"cmd":["sh","-c","kill -TERM $$"]}`)
	res = api.ExecResponse{}
	_ = json.Unmarshal([]byte(a.body), &res)
	if res.Signal != "SIGTERM" || res.ExitCode != 143 {
		t.Fatalf("signal: %+v", res)
	}
	// user
	a = call(t, e, "POST", "/v1/sandboxes/"+sb.ID+"/exec", `{"cmd":["id","-u"],"user":"user"}`)
	if !strings.Contains(a.body, `"stdout":"1000\n"`) {
		t.Fatalf("user: %s", a.body)
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
