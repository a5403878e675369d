//go:build linux

package kernel

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// Every language keeps its state, is interrupted at its timeout without
// losing it, and reports a kernel that kills itself; the next cell then
// runs in a new kernel and says the state was lost.
func TestLifecycle(t *testing.T) {
	type lang struct {
		name, set, get, want, sleep, exit string
		need                              func(testing.TB)
	}
	langs := []lang{
		{"python", "v = 7", "v", `"7"`, "import time\ntime.sleep(60)", "import os\nos._exit(3)", needPython},
		{"javascript", "let v = 7", "v", `"7"`, "await new Promise(r => setTimeout(r, 60000))", "process.exit(3)", needNode},
		{"javascript-sync", "var v = 7", "v", `"7"`, "while (true) {}", "process.kill(process.pid, 'SIGKILL')", needNode},
		{"bash", "v=7; cd /tmp", "echo $v $PWD", "7 /tmp\n", "sleep 60", "exit 3", needBash},
	}
	for _, l := range langs {
		t.Run(l.name, func(t *testing.T) {
			l.need(t)
			s := newSup(t, func(c *Config) { c.InterruptGrace = 3 * time.Second })
			language, _, _ := strings.Cut(l.name, "-")
			id := newCtx(t, s, language)
			mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: l.set})
			check := func(when string) {
				t.Helper()
				r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: l.get})
				got := r.mainText()
				if language == "bash" {
					got = r.stdout()
				}
				if got != l.want {
					t.Fatalf("%s: got %q, want %q", when, got, l.want)
				}
			}
			check("state")

			began := time.Now()
			r := execute(t, s, codewire.ExecuteRequest{Context: id, Code: l.sleep, TimeoutMS: 500})
			if r.err != nil || r.end.Status != codewire.StatusTimeout || r.end.StateLost {
				t.Fatalf("timeout: %v %+v", r.err, r.end)
			}
			if d := time.Since(began); d > 20*time.Second {
				t.Errorf("the interrupt took %v", d)
			}
			if language != "bash" {
				if e := r.errEvent(); e == nil || e.Name != "KeyboardInterrupt" {
					t.Errorf("timeout error event %+v", e)
				}
			} else if r.end.ExitCode == nil || *r.end.ExitCode != 130 {
				t.Errorf("bash exit code after interrupt: %v", r.end.ExitCode)
			}
			check("after the timeout")

			r = execute(t, s, codewire.ExecuteRequest{Context: id, Code: l.exit})
			if r.err != nil || r.end.Status != codewire.StatusDied || !r.end.StateLost || r.end.Message == "" {
				t.Fatalf("death: %v %+v", r.err, r.end)
			}
			if e := r.errEvent(); e == nil || e.Name != "KernelDied" {
				t.Errorf("death error event %+v", e)
			}
			info, _ := s.Get(context.Background(), id)
			if info.State != codewire.StateDead || info.Restarts != 1 {
				t.Errorf("after the death: %+v", info)
			}
			r = execute(t, s, codewire.ExecuteRequest{Context: id, Code: l.get})
			if r.err != nil || r.start == nil || !r.start.Restarted || !r.start.StateLost || r.start.Reason == "" {
				t.Fatalf("the cell after the death: %v start %+v", r.err, r.start)
			}
			// ...and only that cell says so.
			r = execute(t, s, codewire.ExecuteRequest{Context: id, Code: l.set})
			if r.start.Restarted {
				t.Errorf("a second cell also says restarted: %+v", r.start)
			}
			check("after the restart")
		})
	}
}

func TestContextsIsolatedAndManaged(t *testing.T) {
	needPython(t)
	s := newSup(t, nil)
	a, b := newCtx(t, s, "python"), newCtx(t, s, "python")
	mustOK(t, s, codewire.ExecuteRequest{Context: a, Code: "owner = 'a'"})
	mustOK(t, s, codewire.ExecuteRequest{Context: b, Code: "owner = 'b'"})
	if r := mustOK(t, s, codewire.ExecuteRequest{Context: a, Code: "owner"}); r.mainText() != `"'a'"` {
		t.Errorf("context a sees %s", r.mainText())
	}
	if r := mustOK(t, s, codewire.ExecuteRequest{Context: b, Code: "owner"}); r.mainText() != `"'b'"` {
		t.Errorf("context b sees %s", r.mainText())
	}
	list, _ := s.List(context.Background())
	if len(list) != 2 || list[0].ID != a || list[1].ID != b || list[0].Language != "python" || list[0].ExecutionCount != 2 {
		t.Fatalf("list %+v", list)
	}

	// Restart: the state is gone, the context stays.
	if _, err := s.Restart(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	r := execute(t, s, codewire.ExecuteRequest{Context: a, Code: "owner"})
	if e := r.errEvent(); e == nil || e.Name != "NameError" {
		t.Errorf("after restart: %+v", e)
	}
	if info, _ := s.Get(context.Background(), a); info.Restarts != 1 {
		t.Errorf("restarts %d", info.Restarts)
	}

	// Delete: gone, and answers not found.
	if err := s.Delete(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	r = execute(t, s, codewire.ExecuteRequest{Context: b, Code: "1"})
	if !errors.Is(r.err, errs.ErrNotFound) {
		t.Errorf("deleted context: %v", r.err)
	}
	if len(mustList(t, s)) != 1 {
		t.Errorf("list after delete %+v", mustList(t, s))
	}

	// A context's cwd and env, and a cell's env (restored afterwards).
	dir := t.TempDir()
	c, err := s.Create(context.Background(), codewire.CreateContextRequest{Cwd: dir, Env: map[string]string{"CTX_VAR": "ctx"}})
	if err != nil {
		t.Fatal(err)
	}
	r = mustOK(t, s, codewire.ExecuteRequest{Context: c.ID, Code: "import os\nprint(os.getcwd(), os.environ['CTX_VAR'], os.environ.get('CELL_VAR'))",
		Env: map[string]string{"CELL_VAR": "cell"}})
	if got := r.stdout(); got != dir+" ctx cell\n" {
		t.Errorf("cwd/env: %q", got)
	}
	r = mustOK(t, s, codewire.ExecuteRequest{Context: c.ID, Code: "print(os.environ.get('CELL_VAR'))"})
	if got := r.stdout(); got != "None\n" {
		t.Errorf("cell env leaked into the next cell: %q", got)
	}
}

func TestDefaultContexts(t *testing.T) {
	needPython(t)
	needBash(t)
	s := newSup(t, nil)
	mustOK(t, s, codewire.ExecuteRequest{Code: "d = 1"})
	r := mustOK(t, s, codewire.ExecuteRequest{Language: "python", Code: "d"})
	if r.mainText() != `"1"` {
		t.Errorf("default python context lost d: %s", r.mainText())
	}
	r = mustOK(t, s, codewire.ExecuteRequest{Language: "sh", Code: "echo $BASH_VERSION"})
	if r.start.Language != "bash" || r.stdout() == "\n" {
		t.Errorf("bash default: %+v %q", r.start, r.stdout())
	}
	n := 0
	for _, c := range mustList(t, s) {
		if c.Default {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d default contexts: %+v", n, mustList(t, s))
	}
}

func TestBadInput(t *testing.T) {
	needPython(t)
	s := newSup(t, nil)
	cases := []struct {
		name string
		req  codewire.ExecuteRequest
		code errs.Code
	}{
		{"unknown language", codewire.ExecuteRequest{Language: "cobol", Code: "1"}, errs.CodeInvalid},
		{"unknown context", codewire.ExecuteRequest{Context: "nope", Code: "1"}, errs.CodeNotFound},
		{"both", codewire.ExecuteRequest{Context: "x", Language: "python", Code: "1"}, errs.CodeInvalid},
		{"bad env name", codewire.ExecuteRequest{Code: "1", Env: map[string]string{"A;rm -rf /": "x"}}, errs.CodeInvalid},
		{"negative timeout", codewire.ExecuteRequest{Code: "1", TimeoutMS: -1}, errs.CodeInvalid},
		{"huge code", codewire.ExecuteRequest{Code: strings.Repeat("#", 2<<20)}, errs.CodeTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := execute(t, s, c.req)
			if errs.CodeOf(r.err) != c.code || len(r.events) != 0 {
				t.Fatalf("got %v (%s), %d events", r.err, errs.CodeOf(r.err), len(r.events))
			}
			if msg := errs.Public(r.err); msg == "" || strings.Contains(msg, "/tmp/") {
				t.Errorf("public message %q", msg)
			}
		})
	}
	for _, req := range []codewire.CreateContextRequest{
		{Language: "fortran"}, {Cwd: "relative"}, {Cwd: "/does/not/exist"}, {Env: map[string]string{"1X": "y"}},
	} {
		if _, err := s.Create(context.Background(), req); errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("create %+v: %v", req, err)
		}
	}
	if _, err := s.Restart(context.Background(), "nope"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("restart unknown: %v", err)
	}
	if err := s.Delete(context.Background(), "nope"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("delete unknown: %v", err)
	}
}

// Two cells sent to one context at once run one after the other, in the
// order they arrived.
func TestQueueInOrder(t *testing.T) {
	needPython(t)
	s := newSup(t, nil)
	id := newCtx(t, s, "python")
	mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "log = []"})
	var wg sync.WaitGroup
	first := make(chan struct{})
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := "import time\ntime.sleep(0.3)\nlog.append(" + string(rune('0'+i)) + ")"
			if i == 0 {
				execute(t, s, codewire.ExecuteRequest{Context: id, Code: code})
				return
			}
			<-first
			time.Sleep(time.Duration(i) * 50 * time.Millisecond)
			execute(t, s, codewire.ExecuteRequest{Context: id, Code: "log.append(" + string(rune('0'+i)) + ")"})
		}()
		if i == 0 {
			time.Sleep(100 * time.Millisecond)
			if info, _ := s.Get(context.Background(), id); info.State != codewire.StateBusy {
				t.Errorf("state while running: %s", info.State)
			}
			close(first)
		}
	}
	wg.Wait()
	if r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "log"}); r.mainText() != `"[0, 1, 2, 3]"` {
		t.Errorf("order: %s", r.mainText())
	}
}

// A caller that goes away interrupts its cell; the context survives.
func TestCancelWhenCallerGoes(t *testing.T) {
	needPython(t)
	s := newSup(t, nil)
	id := newCtx(t, s, "python")
	mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "keep = 5"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(500 * time.Millisecond); cancel() }()
	r := executeCtx(ctx, s, codewire.ExecuteRequest{Context: id, Code: "import time\ntime.sleep(60)"})
	if r.end == nil || r.end.Status != codewire.StatusCancelled {
		t.Fatalf("cancelled cell: %v %+v", r.err, r.end)
	}
	// A sink that fails (a client whose connection broke) also interrupts.
	var seen []codewire.Event
	err := s.Execute(context.Background(), codewire.ExecuteRequest{Context: id,
		Code: "import time\nfor i in range(600):\n    print(i, flush=True)\n    time.sleep(0.1)"},
		func(e codewire.Event) error {
			seen = append(seen, e)
			if e.Type == codewire.EventStdout {
				return errors.New("broken pipe")
			}
			return nil
		})
	if err == nil {
		for _, e := range seen {
			t.Logf("event %+v end %+v error %+v", e, e.End, e.Error)
		}
		t.Error("Execute did not report the failed sink")
	}
	if r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "keep"}); r.mainText() != `"5"` {
		t.Errorf("state after cancel: %s", r.mainText())
	}
}
