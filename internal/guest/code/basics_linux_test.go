//go:build linux

package code_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Python in a sandbox: state across cells, an error's name and traceback,
// two contexts isolated, streaming order, and the kernel a sandbox
// workload as the user asked.
func TestPython(t *testing.T) {
	needPython(t)
	e := testenv.New(t, testenv.Options{})
	b := newBox(t, e, sandbox.Spec{})

	t.Run("state across cells", func(t *testing.T) {
		b.ok(t, cell("", "x = 41\ndef inc(v):\n    return v + 1"))
		r := b.ok(t, cell("", "inc(x)"))
		if r.text() != "42" {
			t.Fatalf("inc(x) = %q", r.text())
		}
		if r.x.Start == nil || r.x.Start.Language != codewire.Python || r.x.Start.Context == "" || r.x.Start.StateLost {
			t.Fatalf("start %+v", r.x.Start)
		}
	})
	t.Run("error name and traceback", func(t *testing.T) {
		r := b.exec(t, cell("", "def f():\n    return 1/0\nf()"))
		if r.err != nil || r.status() != codewire.StatusError || r.x.Error == nil {
			t.Fatalf("%v %+v %+v", r.err, r.x.End, r.x.Error)
		}
		if r.x.Error.Name != "ZeroDivisionError" || r.x.Error.Value != "division by zero" ||
			!strings.Contains(r.x.Error.Traceback, "return 1/0") || strings.Contains(r.x.Error.Traceback, "\x1b[") {
			t.Fatalf("error %+v", r.x.Error)
		}
		// The context goes on.
		if r := b.ok(t, cell("", "x")); r.text() != "41" {
			t.Fatalf("after the error: %q", r.text())
		}
	})
	t.Run("two contexts are isolated", func(t *testing.T) {
		c1 := b.create(t, guestapi.CodeCreateRequest{})
		c2 := b.create(t, guestapi.CodeCreateRequest{CreateContextRequest: codewire.CreateContextRequest{
			Cwd: "/tmp", Env: map[string]string{"ONLY_HERE": "two"}}})
		b.ok(t, cell(c1.ID, "secret = 'one'"))
		r := b.exec(t, cell(c2.ID, "secret"))
		if r.x.Error == nil || r.x.Error.Name != "NameError" {
			t.Fatalf("a variable leaked across contexts: %+v %q", r.x.Error, r.text())
		}
		r = b.ok(t, cell(c2.ID, "import os\n(os.getcwd(), os.environ.get('ONLY_HERE'))"))
		if r.text() != "('/tmp', 'two')" {
			t.Fatalf("context cwd and env: %s", r.text())
		}
		if r := b.ok(t, cell(c1.ID, "import os\nos.environ.get('ONLY_HERE'), os.getcwd()")); r.text() != "(None, '/root')" {
			t.Fatalf("the other context: %s", r.text())
		}
	})
	t.Run("streaming order", func(t *testing.T) {
		r := b.ok(t, cell("", `
import sys, time
print("a", flush=True)
sys.stderr.write("b\n"); sys.stderr.flush()
display("c")
print("d", flush=True)
"e"`))
		var seq []string
		for _, ev := range r.events {
			switch ev.Type {
			case codewire.EventStdout, codewire.EventStderr:
				seq = append(seq, ev.Type+":"+strings.TrimSpace(ev.Text))
			case codewire.EventResult:
				seq = append(seq, "result:"+string(ev.Result.Bundle["text/plain"]))
			default:
				seq = append(seq, ev.Type)
			}
		}
		want := `start stdout:a stderr:b result:"'c'" stdout:d result:"'e'" end`
		if got := strings.Join(seq, " "); got != want {
			t.Fatalf("order:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("a sandbox workload as the user asked", func(t *testing.T) {
		// As root (the default, as for exec): uid 0 without capabilities.
		r := b.ok(t, cell("", "print(open('/proc/self/status').read())"))
		for _, want := range []string{"Uid:\t0\t0\t0\t0", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000",
			"NoNewPrivs:\t1", "Seccomp:\t2"} {
			if !strings.Contains(r.stdout(), want) {
				t.Errorf("root kernel: no %q in\n%s", want, r.stdout())
			}
		}
		u := b.create(t, guestapi.CodeCreateRequest{User: guestapi.UserUser})
		if u.User != guestapi.UserUser || u.Cwd != "/home/user" {
			t.Fatalf("user context %+v", u)
		}
		r = b.ok(t, cell(u.ID, "import os\nos.getuid(), os.getgid(), os.getcwd(), os.environ['HOME'], os.environ['USER']"))
		if r.text() != "(1000, 1000, '/home/user', '/home/user', 'user')" {
			t.Fatalf("user kernel: %s", r.text())
		}
		// The kernel is in a cgroup sub-group of its own, as execs are.
		r = b.ok(t, cell(u.ID, "print(open('/proc/self/cgroup').read())"))
		if !strings.Contains(r.stdout(), "/e") {
			t.Errorf("the kernel is not in a workload sub-group:\n%s", r.stdout())
		}
		// The listing says who runs what.
		list, err := b.g.CodeContexts(context.Background(), guestapi.UserUser)
		if err != nil || len(list) != 1 || list[0].ID != u.ID || list[0].User != guestapi.UserUser {
			t.Fatalf("user's contexts: %+v %v", list, err)
		}
		all, err := b.g.CodeContexts(context.Background(), "")
		if err != nil || len(all) < 4 {
			t.Fatalf("all contexts: %+v %v", all, err)
		}
		// A context named with another user is refused.
		r = b.exec(t, guestapi.CodeExecuteRequest{ExecuteRequest: codewire.ExecuteRequest{Context: u.ID, Code: "1"}, User: "root"})
		if errs.CodeOf(r.err) != errs.CodeInvalid || len(r.events) != 0 {
			t.Fatalf("a user context run as root: %v %d events", r.err, len(r.events))
		}
		// A user's kernel cannot read root's state directory (the keys
		// of root's kernels are in it); root's kernel can (the control).
		r = b.ok(t, cell("", "import os\nd = '/run/paddock-code/' + [n for n in os.listdir('/run/paddock-code') if n.startswith('root-')][0]\nos.listdir(d) is not None, d"))
		if !strings.HasPrefix(r.text(), "(True, '/run/paddock-code/root-") {
			t.Fatalf("root's state directory from root's kernel: %s", r.text())
		}
		dir := strings.TrimSuffix(strings.SplitN(r.text(), "'", 3)[1], "'")
		r = b.ok(t, cell(u.ID, "import os\ntry:\n    os.listdir('"+dir+"')\n    print('read')\nexcept PermissionError:\n    print('denied')"))
		if r.stdout() != "denied\n" {
			t.Fatalf("root's state directory from a user kernel: %q", r.stdout())
		}
	})
}
