//go:build linux

package api_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

func needKernels(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel, matplotlib").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel and matplotlib (Debian packages) for the host template: %v", err)
	}
}

func codeReq(code string) wire.CodeExecuteRequest {
	var r wire.CodeExecuteRequest
	r.Code = code
	return r
}

// The REST surface through the Go client (the stream) and raw HTTP (the
// one-answer form, the NDJSON lines as sent, errors).
func TestCodeREST(t *testing.T) {
	needKernels(t)
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()

	var types []string
	var ex wire.CodeExecution
	err := e.Client.ExecuteCode(ctx, sb.ID, codeReq("import sys\nv = 20\nprint('a', flush=True)\nprint('b', file=sys.stderr, flush=True)\nv * 2"), func(ev wire.CodeEvent) error {
		types = append(types, ev.Type)
		ex.Add(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "start stdout stderr result end"; strings.Join(types, " ") != want {
		t.Fatalf("events %v, want %s", types, want)
	}
	if ex.Text() != "40" || ex.Stdout != "a\n" || ex.Stderr != "b\n" {
		t.Fatalf("execution %+v", ex)
	}
	if ex, err = e.Client.RunCode(ctx, sb.ID, codeReq("v")); err != nil || ex.Text() != "20" {
		t.Fatalf("state across cells: %v %q", err, ex.Text())
	}

	// A matplotlib PNG that decodes, in the one-answer form.
	a := call(t, e, "POST", "/v1/sandboxes/"+sb.ID+"/code?stream=false",
		`{"code":"import matplotlib.pyplot as plt\nplt.plot([1,2],[3,4])\nplt.show()"}`)
	if a.status != 200 {
		t.Fatalf("stream=false: %d %s", a.status, a.body)
	}
	var one wire.CodeExecution
	if err := json.Unmarshal([]byte(a.body), &one); err != nil || len(one.Results) != 1 || one.End == nil || one.End.Status != "ok" {
		t.Fatalf("one answer: %v %s", err, a.body[:min(len(a.body), 500)])
	}
	var b64 string
	_ = json.Unmarshal(one.Results[0].Bundle["image/png"], &b64)
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("png: %v %d bytes", err, len(png))
	}
	// Accept: application/json asks for the same.
	if a := call(t, e, "POST", "/v1/sandboxes/"+sb.ID+"/code", `{"code":"3"}`, "Accept", "application/json"); a.status != 200 || !strings.HasPrefix(a.body, "{\"start\"") {
		t.Fatalf("Accept json: %d %s", a.status, a.body)
	}
	// The default is the NDJSON stream, one event per line.
	a = call(t, e, "POST", "/v1/sandboxes/"+sb.ID+"/code", `{"code":"1/0"}`)
	sc := bufio.NewScanner(strings.NewReader(a.body))
	var last wire.CodeEvent
	n := 0
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if last.Type == "error" && (last.Error.Name != "ZeroDivisionError" || !strings.Contains(last.Error.Traceback, "ZeroDivisionError")) {
			t.Fatalf("error event %+v", last.Error)
		}
		n++
	}
	if n != 3 || last.Type != "end" || last.End.Status != "error" {
		t.Fatalf("%d lines, last %+v: %s", n, last, a.body)
	}

	// Contexts: create, list, get, restart, delete.
	var creq wire.CodeContextRequest
	creq.Language = "js"
	js, err := e.Client.CreateCodeContext(ctx, sb.ID, creq)
	if err != nil || js.Language != "javascript" {
		t.Fatalf("create: %v %+v", err, js)
	}
	in := codeReq("let n = 1")
	in.Context = js.ID
	if _, err := e.Client.RunCode(ctx, sb.ID, in); err != nil {
		t.Fatal(err)
	}
	in.Code = "n += 1; n"
	if ex, err := e.Client.RunCode(ctx, sb.ID, in); err != nil || ex.Text() != "2" {
		t.Fatalf("js state: %v %q", err, ex.Text())
	}
	list, err := e.Client.CodeContexts(ctx, sb.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %+v", err, list)
	}
	if got, err := e.Client.CodeContext(ctx, sb.ID, js.ID); err != nil || got.ExecutionCount != 2 {
		t.Fatalf("get: %v %+v", err, got)
	}
	if got, err := e.Client.RestartCodeContext(ctx, sb.ID, js.ID); err != nil || got.Restarts != 1 {
		t.Fatalf("restart: %v %+v", err, got)
	}
	if err := e.Client.DeleteCodeContext(ctx, sb.ID, js.ID); err != nil {
		t.Fatal(err)
	}

	// Bad input: clear 4xx answers with stable codes, before any stream.
	for _, tc := range []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"unknown language", "/code", `{"code":"1","language":"cobol"}`, 400, "invalid_argument"},
		{"unknown field", "/code", `{"code":"1","bogus":1}`, 400, "invalid_argument"},
		{"not json", "/code", `{`, 400, "invalid_argument"},
		{"bad stream flag", "/code?stream=maybe", `{"code":"1"}`, 400, "invalid_argument"},
		{"unknown context", "/code", `{"code":"1","context_id":"nope"}`, 404, "not_found"},
		{"too large", "/code", `{"code":"` + strings.Repeat("x", 1<<20+1) + `"}`, 413, "too_large"},
		{"unknown context get", "/code/contexts/nope", ``, 404, "not_found"},
	} {
		method := "POST"
		if tc.body == "" {
			method = "GET"
		}
		a := call(t, e, method, "/v1/sandboxes/"+sb.ID+tc.path, tc.body)
		if a.status != tc.status || a.code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, a.status, a.body[:min(len(a.body), 300)], tc.status, tc.code)
		}
	}
	if a := call(t, e, "POST", "/v1/sandboxes/sb-nosuchsandbox000000000000/code", `{"code":"1"}`); a.status != 404 {
		t.Errorf("missing sandbox: %d %s", a.status, a.body)
	}
}
