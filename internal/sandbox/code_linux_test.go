//go:build linux

package sandbox_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

func needPython(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel (python3-ipykernel) on the host template: %v", err)
	}
}

// run executes one cell through the manager and gathers its stream.
func run(t *testing.T, m *sandbox.Manager, sc sandbox.Scope, id string, req sandbox.CodeExecuteRequest) (codewire.Execution, []string) {
	t.Helper()
	var ex codewire.Execution
	var types []string
	err := m.ExecuteCode(context.Background(), sc, id, req, func(ev codewire.Event) error {
		types = append(types, ev.Type)
		ex.Add(ev)
		return nil
	})
	if err != nil {
		t.Fatalf("execute %q: %v", req.Code, err)
	}
	return ex, types
}

func cell(code string) sandbox.CodeExecuteRequest {
	var r sandbox.CodeExecuteRequest
	r.Code = code
	return r
}

func TestCodeThroughManager(t *testing.T) {
	needPython(t)
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	m, sc := e.Manager, e.Scope

	ex, types := run(t, m, sc, sb.ID, cell("x = 41\nprint('hi')\nx + 1"))
	if ex.Text() != "42" || ex.Stdout != "hi\n" || ex.End.Status != codewire.StatusOK {
		t.Fatalf("first cell: %+v %+v", ex, ex.End)
	}
	if types[0] != "start" || types[len(types)-1] != "end" {
		t.Fatalf("event order %v", types)
	}
	if ex, _ = run(t, m, sc, sb.ID, cell("x")); ex.Text() != "41" {
		t.Fatalf("state across cells: %q", ex.Text())
	}
	if ex, _ = run(t, m, sc, sb.ID, cell("1/0")); ex.Error == nil || ex.Error.Name != "ZeroDivisionError" || ex.End.Status != codewire.StatusError {
		t.Fatalf("error: %+v", ex.Error)
	}

	// A second context is isolated from the default one.
	var creq sandbox.CodeContextRequest
	creq.Cwd = "/tmp"
	c2, err := m.CreateCodeContext(context.Background(), sc, sb.ID, creq)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Language != codewire.Python || c2.Cwd != "/tmp" || c2.User != "root" {
		t.Fatalf("created %+v", c2)
	}
	in2 := cell("x")
	in2.Context = c2.ID
	if ex, _ = run(t, m, sc, sb.ID, in2); ex.Error == nil || ex.Error.Name != "NameError" {
		t.Fatalf("context isolation: %+v %q", ex.Error, ex.Text())
	}
	list, err := m.CodeContexts(context.Background(), sc, sb.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %+v", err, list)
	}
	if got, err := m.CodeContext(context.Background(), sc, sb.ID, c2.ID); err != nil || got.ID != c2.ID {
		t.Fatalf("get: %v %+v", err, got)
	}
	in2.Code = "y = 1"
	run(t, m, sc, sb.ID, in2)
	if got, err := m.RestartCodeContext(context.Background(), sc, sb.ID, c2.ID); err != nil || got.Restarts != 1 {
		t.Fatalf("restart: %v %+v", err, got)
	}
	in2.Code = "y"
	if ex, _ = run(t, m, sc, sb.ID, in2); ex.Error == nil || ex.Error.Name != "NameError" {
		t.Fatalf("restart kept state: %q", ex.Text())
	}
	if err := m.DeleteCodeContext(context.Background(), sc, sb.ID, c2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CodeContext(context.Background(), sc, sb.ID, c2.ID); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("deleted context: %v", err)
	}

	// Rights: a read-only caller lists but does not run code (positive
	// control: the full scope above ran it).
	ro := sc
	ro.Rights = rights.Of(rights.Read)
	if err := m.ExecuteCode(context.Background(), ro, sb.ID, cell("1"), func(codewire.Event) error { return nil }); errs.CodeOf(err) != errs.CodeForbidden {
		t.Fatalf("read-only execute: %v", err)
	}
	if _, err := m.CodeContexts(context.Background(), ro, sb.ID); err != nil {
		t.Fatalf("read-only list: %v", err)
	}

	// Bad input is refused before the guest sees it.
	for _, tc := range []struct {
		name string
		req  sandbox.CodeExecuteRequest
		code errs.Code
	}{
		{"unknown language", sandbox.CodeExecuteRequest{ExecuteRequest: codewire.ExecuteRequest{Code: "1", Language: "cobol"}}, errs.CodeInvalid},
		{"context and language", sandbox.CodeExecuteRequest{ExecuteRequest: codewire.ExecuteRequest{Code: "1", Language: "python", Context: "c"}}, errs.CodeInvalid},
		{"too large", cell(strings.Repeat("#", 1<<20+1)), errs.CodeTooLarge},
		{"negative timeout", sandbox.CodeExecuteRequest{ExecuteRequest: codewire.ExecuteRequest{Code: "1", TimeoutMS: -1}}, errs.CodeInvalid},
		{"bad user", sandbox.CodeExecuteRequest{ExecuteRequest: codewire.ExecuteRequest{Code: "1"}, User: "nobody"}, errs.CodeInvalid},
		{"unknown context", sandbox.CodeExecuteRequest{ExecuteRequest: codewire.ExecuteRequest{Code: "1", Context: "nope"}}, errs.CodeNotFound},
	} {
		err := m.ExecuteCode(context.Background(), sc, sb.ID, tc.req, func(codewire.Event) error { return nil })
		if errs.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}

	// The audit trail has the cells and the context actions.
	seen := map[string]bool{}
	for _, r := range e.AuditRecords(audit.Query{Sandbox: sb.ID, Limit: 1000}) {
		seen[r.Action+"/"+r.Phase] = true
	}
	for _, want := range []string{"code.execute/intent", "code.execute/result", "code.context_create/result",
		"code.context_restart/result", "code.context_delete/result"} {
		if !seen[want] {
			t.Errorf("no %s audit record; have %v", want, seen)
		}
	}
}

// The caller going away interrupts the cell, and the context keeps its
// state (KeyboardInterrupt, not a dead kernel).
func TestCodeCancelOnCallerGone(t *testing.T) {
	needPython(t)
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	m, sc := e.Manager, e.Scope
	run(t, m, sc, sb.ID, cell("kept = 7"))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- m.ExecuteCode(ctx, sc, sb.ID, cell("import time\nprint('going', flush=True)\ntime.sleep(60)"), func(ev codewire.Event) error {
			if ev.Type == codewire.EventStdout {
				cancel()
			}
			return nil
		})
	}()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a cell whose caller went away returned no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled cell did not return")
	}
	t0 := time.Now()
	ex, _ := run(t, m, sc, sb.ID, cell("kept"))
	if ex.Text() != "7" || ex.Start.Restarted {
		t.Fatalf("after a cancel: %q restarted=%v", ex.Text(), ex.Start.Restarted)
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Fatalf("the next cell waited %v: the cancelled one kept running", d)
	}
}

// A paused sandbox refuses a cell unless its spec has auto_resume, as
// exec does; with it the cell resumes the sandbox and finds its state.
func TestCodePaused(t *testing.T) {
	needPython(t)
	e := testenv.New(t, testenv.Options{})
	m, sc := e.Manager, e.Scope
	ctx := context.Background()
	plain := e.Create(sandbox.Spec{})
	auto := e.Create(sandbox.Spec{AutoResume: true})
	run(t, m, sc, plain.ID, cell("1"))
	run(t, m, sc, auto.ID, cell("kept = 3"))
	for _, id := range []string{plain.ID, auto.ID} {
		if _, err := m.Pause(ctx, sc, id); err != nil {
			t.Fatal(err)
		}
	}
	err := m.ExecuteCode(ctx, sc, plain.ID, cell("1"), func(codewire.Event) error { return nil })
	if errs.CodeOf(err) != errs.CodeSandboxPaused {
		t.Fatalf("a cell in a paused sandbox: %v", err)
	}
	if ex, _ := run(t, m, sc, auto.ID, cell("kept")); ex.Text() != "3" || ex.Start.Restarted {
		t.Fatalf("after auto-resume: %q restarted=%v", ex.Text(), ex.Start.Restarted)
	}
	if sb, err := m.Get(ctx, sc, auto.ID); err != nil || sb.State != sandbox.StateRunning {
		t.Fatalf("auto-resumed sandbox: %v %s", err, sb.State)
	}
}
