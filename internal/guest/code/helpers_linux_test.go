//go:build linux

package code_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// These tests run the code service in real sandboxes (the embedded guest:
// run make guest after changing guest code) through the guestapi client,
// as the server will. The host template lends the sandbox the host's /usr,
// so the kernels are the host's Debian packages.

func TestMain(m *testing.M) { testenv.Main(m) }

func needPython(t testing.TB) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel (Debian python3-ipykernel): %v", err)
	}
}

func needPythonData(t testing.TB) {
	t.Helper()
	needPython(t)
	if err := exec.Command("/usr/bin/python3", "-c", "import pandas, matplotlib, numpy").Run(); err != nil {
		t.Skipf("needs pandas, matplotlib and numpy (Debian python3-pandas python3-matplotlib): %v", err)
	}
}

func needNode(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/node"); err != nil {
		t.Skip("needs /usr/bin/node (Debian nodejs)")
	}
}

// box is one sandbox and its guest client.
type box struct {
	e  *testenv.Env
	id string
	g  *guestapi.Client
}

func newBox(t testing.TB, e *testenv.Env, spec sandbox.Spec) *box {
	t.Helper()
	sb := e.Create(spec)
	// The guest's socket directly, as the native runtime's own tests do:
	// the manager exports no guest client (issue 13), and these tests
	// exercise the guest's code service, not a surface.
	g := guestapi.NewClient(filepath.Join(e.Data, "run", "sandboxes", sb.ID, "guest.sock"))
	return &box{e: e, id: sb.ID, g: g}
}

// run is one execution's stream, collected.
type run struct {
	events []codewire.Event
	x      codewire.Execution
	err    error
}

func (r run) stdout() string { return r.x.Stdout }
func (r run) stderr() string { return r.x.Stderr }
func (r run) text() string   { return r.x.Text() }
func (r run) status() string {
	if r.x.End == nil {
		return ""
	}
	return r.x.End.Status
}

func (b *box) execCtx(ctx context.Context, req guestapi.CodeExecuteRequest) run {
	var r run
	r.err = b.g.ExecuteCode(ctx, req, func(ev codewire.Event) error {
		r.events = append(r.events, ev)
		r.x.Add(ev)
		return nil
	})
	return r
}

func (b *box) exec(t testing.TB, req guestapi.CodeExecuteRequest) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return b.execCtx(ctx, req)
}

// ok runs a cell and fails unless it ended ok.
func (b *box) ok(t testing.TB, req guestapi.CodeExecuteRequest) run {
	t.Helper()
	r := b.exec(t, req)
	if r.err != nil {
		t.Fatalf("execute %q: %v", clip(req.Code), r.err)
	}
	if r.status() != codewire.StatusOK {
		t.Fatalf("execute %q: end %+v, error %+v, stderr %q", clip(req.Code), r.x.End, r.x.Error, clip(r.stderr()))
	}
	return r
}

func (b *box) create(t testing.TB, req guestapi.CodeCreateRequest) guestapi.CodeContext {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := b.g.CreateCodeContext(ctx, req)
	if err != nil {
		t.Fatalf("create %+v: %v", req, err)
	}
	return c
}

func cell(ctxID, code string) guestapi.CodeExecuteRequest {
	return guestapi.CodeExecuteRequest{ExecuteRequest: codewire.ExecuteRequest{Context: ctxID, Code: code}}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// sh runs a shell command in the sandbox (an exec, unsandboxed from the
// kernels' point of view: the same sandbox, another workload).
func (b *box) sh(t testing.TB, script string) string {
	t.Helper()
	r := b.e.Sh(b.id, script)
	return strings.TrimSpace(r.Stdout)
}
