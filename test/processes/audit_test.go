package processes

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// recorder is an Observer that keeps events and can refuse intents.
type recorder struct {
	mu     sync.Mutex
	events []sandbox.Event
	refuse string // intent kind to refuse
}

func (r *recorder) Event(_ context.Context, e sandbox.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Phase == "intent" && e.Kind == r.refuse {
		return errors.New("audit log unavailable")
	}
	r.events = append(r.events, e)
	return nil
}

func (r *recorder) kinds(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if strings.HasPrefix(e.Kind, prefix) {
			out = append(out, e.Kind+"/"+e.Phase)
		}
	}
	return out
}

// Every process action is recorded as intent then result; an intent that
// cannot be recorded stops the action.
func TestProcessAudit(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	rec := &recorder{}
	m := sandbox.New(sandbox.Config{Limits: sandbox.DefaultLimits(runtime.NumCPU())},
		sandbox.Deps{Store: e.Store, Backend: e.Backend, Templates: e.Templates, Observer: rec})
	ctx := context.Background()
	sb, err := m.Create(ctx, e.Scope, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Delete(ctx, e.Scope, sb.ID)
	p, err := m.StartProcess(ctx, e.Scope, sb.ID, sandbox.ProcessRequest{Cmd: []string{"cat"}, Stdin: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := p.ID
	if _, err := m.WriteStdin(ctx, e.Scope, sb.ID, ref, strings.NewReader("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SignalProcess(ctx, e.Scope, sb.ID, ref, "SIGCONT", false); err != nil {
		t.Fatal(err)
	}
	if err := m.CloseStdin(ctx, e.Scope, sb.ID, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WaitProcess(ctx, e.Scope, sb.ID, ref, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := m.KillProcess(ctx, e.Scope, sb.ID, ref); err != nil {
		t.Fatal(err)
	}
	term, err := m.OpenTerminal(ctx, e.Scope, sb.ID, sandbox.TerminalRequest{Cmd: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := term.Write([]byte("exit\r")); err != nil {
		t.Fatal(err)
	}
	if _, err := term.Receive(func(sandbox.OutputEvent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	term.Close()
	want := []string{
		"process.start/intent", "process.start/result",
		"process.stdin/intent", "process.stdin/result",
		"process.signal/intent", "process.signal/result",
		"process.close_stdin/intent", "process.close_stdin/result",
		"process.kill/intent", "process.kill/result",
		"process.start/intent", "process.start/result", // the terminal
		"process.attach/intent", "process.attach/result",
	}
	if got := rec.kinds("process."); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	rec.mu.Lock()
	for _, ev := range rec.events {
		if ev.Kind == "process.stdin" && ev.Phase == "result" && ev.Data["bytes"] != int64(3) {
			t.Errorf("stdin result %+v", ev.Data)
		}
		if ev.Kind == "process.attach" && ev.Phase == "result" && ev.Data["bytes_in"] != int64(5) {
			t.Errorf("attach result %+v", ev.Data)
		}
		if strings.HasPrefix(ev.Kind, "process.") && (ev.Tenant != e.Scope.Tenant || ev.Sandbox != sb.ID) {
			t.Errorf("event %s without its tenant or sandbox: %+v", ev.Kind, ev)
		}
	}
	rec.mu.Unlock()

	// Positive control above; now the refusal: no record, no process.
	rec.refuse = "process.start"
	before, _ := m.Processes(ctx, e.Scope, sb.ID)
	if _, err := m.StartProcess(ctx, e.Scope, sb.ID, sandbox.ProcessRequest{Cmd: []string{"sleep", "100"}}); err == nil {
		t.Fatal("started although the intent could not be recorded")
	}
	after, _ := m.Processes(ctx, e.Scope, sb.ID)
	if len(after) != len(before) {
		t.Fatalf("a process started anyway: %d → %d", len(before), len(after))
	}
}
