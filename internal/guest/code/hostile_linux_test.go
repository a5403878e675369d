//go:build linux

package code_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Code that misbehaves, in a sandbox: it never returns, kills its kernel,
// prints a gigabyte or bytes that are not UTF-8, or its caller goes away.
func TestMisbehavingCells(t *testing.T) {
	needPython(t)
	e := testenv.New(t, testenv.Options{})
	b := newBox(t, e, sandbox.Spec{})
	py := b.create(t, guestapi.CodeCreateRequest{})

	t.Run("timeout interrupts and keeps state", func(t *testing.T) {
		b.ok(t, cell(py.ID, "kept = 'yes'"))
		req := cell(py.ID, "import time\ntime.sleep(120)")
		req.TimeoutMS = 1500
		began := time.Now()
		r := b.exec(t, req)
		if r.err != nil || r.status() != codewire.StatusTimeout || r.x.End.StateLost {
			t.Fatalf("%v %+v", r.err, r.x.End)
		}
		if took := time.Since(began); took > 60*time.Second {
			t.Fatalf("the timeout took %v", took)
		}
		if r.x.Error == nil || r.x.Error.Name != "KeyboardInterrupt" {
			t.Errorf("the interrupt: %+v", r.x.Error)
		}
		if r := b.ok(t, cell(py.ID, "kept")); r.text() != "'yes'" || r.x.Start.StateLost {
			t.Fatalf("after the timeout: %q %+v", r.text(), r.x.Start)
		}
	})
	t.Run("the caller going away interrupts the cell", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- b.g.ExecuteCode(ctx, cell(py.ID, "import time\ntry:\n    time.sleep(120)\nexcept KeyboardInterrupt:\n    interrupted = True\n    raise"),
				func(ev codewire.Event) error {
					if ev.Type == codewire.EventStart {
						close(started)
					}
					return nil
				})
		}()
		select {
		case <-started:
		case <-time.After(time.Minute):
			t.Fatal("the cell did not start")
		}
		time.Sleep(300 * time.Millisecond) // let it reach the sleep
		cancel()
		if err := <-done; err == nil {
			t.Fatal("a cancelled execution returned nil")
		}
		// The next cell waits for the interrupted one, which stops at once.
		began := time.Now()
		r := b.ok(t, cell(py.ID, "interrupted"))
		if r.text() != "True" || time.Since(began) > 60*time.Second {
			t.Fatalf("after the caller left: %q after %v", r.text(), time.Since(began))
		}
	})
	t.Run("os._exit is reported and the next cell restarts", func(t *testing.T) {
		b.ok(t, cell(py.ID, "keep = 1"))
		r := b.exec(t, cell(py.ID, "import os\nos._exit(3)"))
		if r.err != nil || r.status() != codewire.StatusDied || !r.x.End.StateLost ||
			!strings.Contains(r.x.End.Message, "exited with status 3") {
			t.Fatalf("%v %+v", r.err, r.x.End)
		}
		if r.x.Error == nil || r.x.Error.Name != "KernelDied" {
			t.Errorf("error event %+v", r.x.Error)
		}
		r = b.ok(t, cell(py.ID, "'keep' in dir()"))
		if r.text() != "False" || !r.x.Start.StateLost || !r.x.Start.Restarted || !strings.Contains(r.x.Start.Reason, "status 3") {
			t.Fatalf("the cell after: %q %+v", r.text(), r.x.Start)
		}
		c, err := b.g.CodeContext(context.Background(), py.ID)
		if err != nil || c.Restarts != 1 || c.State != codewire.StateIdle {
			t.Fatalf("context after the restart: %+v %v", c, err)
		}
	})
	t.Run("non-UTF-8 output", func(t *testing.T) {
		r := b.ok(t, cell(py.ID, "import os\nos.write(1, b'ok \\xff\\xfe end\\n')\nos.system(\"printf 'x\\\\377y\\\\n'\")"))
		if r.stdout() != "ok \uFFFD\uFFFD end\nx\uFFFDy\n" {
			t.Fatalf("stdout %q", r.stdout())
		}
	})
	t.Run("a gigabyte print is capped", func(t *testing.T) {
		began := time.Now()
		r := b.ok(t, cell(py.ID, "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\nafter = 'still here'"))
		if !r.x.End.Truncated || len(r.stdout()) > 1<<20 || len(r.stdout()) < 1<<19 || !strings.Contains(r.stderr(), "was dropped") {
			t.Fatalf("truncated %v, %d bytes of stdout, stderr %q", r.x.End.Truncated, len(r.stdout()), clip(r.stderr()))
		}
		t.Logf("a 1 GiB print took %v", time.Since(began))
		if r := b.ok(t, cell(py.ID, "after")); r.text() != "'still here'" {
			t.Fatalf("after the gigabyte: %q", r.text())
		}
	})
	t.Run("two cells at once run in order", func(t *testing.T) {
		b.ok(t, cell(py.ID, "order = []"))
		first := make(chan run, 1)
		go func() { first <- b.exec(t, cell(py.ID, "import time\ntime.sleep(1)\norder.append(1)")) }()
		// The second is sent while the first runs; it waits its turn.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			c, err := b.g.CodeContext(context.Background(), py.ID)
			if err == nil && c.State == codewire.StateBusy {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the first cell never ran")
			}
		}
		second := b.ok(t, cell(py.ID, "order.append(2)\norder"))
		if r := <-first; r.status() != codewire.StatusOK {
			t.Fatalf("first: %+v", r.x.End)
		}
		if second.text() != "[1, 2]" {
			t.Fatalf("order %q", second.text())
		}
	})
}

// A cell that allocates past the sandbox's memory limit is reported as
// an OOM kill, and the context starts a new kernel on the next cell.
func TestOOMPastTheSandboxLimit(t *testing.T) {
	needPython(t)
	e := testenv.New(t, testenv.Options{})
	// With tmpfs layers the memory limit is memory plus disk: keep the
	// disk small so that a gigabyte is well past it.
	b := newBox(t, e, sandbox.Spec{MemoryMB: 256, DiskMB: 64})
	b.ok(t, cell("", "keep = 1"))
	r := b.exec(t, cell("", "hog = ' ' * (1 << 30)"))
	if r.err != nil || r.status() != codewire.StatusDied || !r.x.End.StateLost || !strings.Contains(r.x.End.Message, "out of memory") {
		t.Fatalf("the OOM cell: %v %+v", r.err, r.x.End)
	}
	r = b.ok(t, cell("", "'keep' in dir()"))
	if r.text() != "False" || !r.x.Start.StateLost || !strings.Contains(r.x.Start.Reason, "out of memory") {
		t.Fatalf("the cell after: %q %+v", r.text(), r.x.Start)
	}
	// The positive control: a kernel killed otherwise is not called OOM.
	r = b.exec(t, cell("", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"))
	if r.status() != codewire.StatusDied || strings.Contains(r.x.End.Message, "out of memory") || !strings.Contains(r.x.End.Message, "SIGKILL") {
		t.Fatalf("a kill -9: %+v", r.x.End)
	}
}

// A cell that forks a thousand processes meets the sandbox's pids limit:
// the forks fail inside the cell and the kernel survives (or its death is
// reported), and the next cell runs.
func TestForkBombMeetsThePidsLimit(t *testing.T) {
	needPython(t)
	e := testenv.New(t, testenv.Options{})
	b := newBox(t, e, sandbox.Spec{Pids: 128})
	b.ok(t, cell("", "survivor = 7"))
	r := b.exec(t, cell("", `
import subprocess
ps = []
try:
    for i in range(1000):
        ps.append(subprocess.Popen(["sleep", "60"]))
except OSError as e:
    print("stopped at", len(ps), type(e).__name__)
for p in ps:
    p.kill()
    p.wait()
`))
	if r.err != nil {
		t.Fatal(r.err)
	}
	switch r.status() {
	case codewire.StatusOK:
		if !strings.HasPrefix(r.stdout(), "stopped at ") {
			t.Fatalf("the limit did not stop the forks: %q", r.stdout())
		}
		t.Logf("inside the cell: %s", strings.TrimSpace(r.stdout()))
		if r := b.ok(t, cell("", "survivor * 6")); r.text() != "42" || r.x.Start.StateLost {
			t.Fatalf("the kernel did not survive: %q %+v", r.text(), r.x.Start)
		}
	case codewire.StatusDied:
		t.Logf("the kernel died under the limit, reported: %s", r.x.End.Message)
		if r := b.ok(t, cell("", "6 * 7")); r.text() != "42" || !r.x.Start.StateLost {
			t.Fatalf("the next cell: %q %+v", r.text(), r.x.Start)
		}
	default:
		t.Fatalf("end %+v, stdout %q, error %+v", r.x.End, r.stdout(), r.x.Error)
	}
}
