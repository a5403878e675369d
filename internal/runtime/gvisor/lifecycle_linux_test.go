//go:build linux

package gvisor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
)

func TestCreateExecDelete(t *testing.T) {
	e := newEnv(t, nil)
	inst := e.create(e.config())
	res := run(t, inst, "echo", "hello")
	if res.ExitCode != 0 || res.Stdout != "hello\n" {
		t.Fatalf("exec: %+v", res)
	}
	// The sandbox's kernel is gVisor's.
	res = run(t, inst, "uname", "-r")
	if !strings.Contains(res.Stdout, "gvisor") {
		t.Fatalf("uname -r = %q, want gVisor's kernel", res.Stdout)
	}
	// Deleted, it leaves nothing: no sentry, no gofer, no runsc state or
	// control socket, no cgroup (the release does without runsc delete
	// once the sentry is seen to exit).
	if err := e.b.Destroy(t.Context(), inst); err != nil {
		t.Fatal(err)
	}
	_ = e.b.Close() // waits for the release
	e.assertNoTrace(t, inst.ID())
}

// TestReattachAfterRestart: a server that stops leaves its gVisor sandboxes
// running; the next one reattaches them from their records (the agent
// dials the new server's socket), and their processes carry on.
func TestReattachAfterRestart(t *testing.T) {
	e := newEnv(t, nil)
	inst := e.create(e.config())
	sh(t, inst, counterScript)
	before := waitCountAbove(t, inst, 3)
	rec := inst.Record()
	if err := e.b.Close(); err != nil {
		t.Fatal(err)
	}
	b2, err := gvisor.New(e.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.b = b2
	// A record that does not match (another pid) is refused.
	if _, err := b2.Reattach(t.Context(), inst.ID(), []byte(`{"pid":1,"start_time":1,"token":"`+strings.Repeat("0", 64)+`"}`)); err == nil {
		t.Fatal("reattached to pid 1")
	}
	again, err := b2.Reattach(t.Context(), inst.ID(), rec)
	if err != nil {
		t.Fatalf("reattach: %v", err)
	}
	e.track(again)
	waitCountAbove(t, again, before)
	if res := run(t, again, "echo", "back"); res.Stdout != "back\n" {
		t.Fatalf("exec after reattach: %+v", res)
	}
}

// TestSweepRemovesUnknownSandboxes: a sandbox the server has no record of
// (a crash between start and record) is killed and removed by Sweep, and
// leaves nothing: no directories, runsc state, cgroups or processes.
func TestSweepRemovesUnknownSandboxes(t *testing.T) {
	e := newEnv(t, nil)
	kept := e.create(e.config())
	lost := e.create(e.config())
	if err := e.b.Close(); err != nil {
		t.Fatal(err)
	}
	b2, err := gvisor.New(e.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.b = b2
	// A control socket runsc left without any state (its sandbox released
	// half-way) is found too.
	stray := newID()
	sock := filepath.Join(e.data, "gvisor", "state", "runsc-"+stray+".sock")
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := b2.Sweep(t.Context(), map[string]bool{kept.ID(): true})
	if err != nil || n != 2 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	e.assertNoTrace(t, lost.ID())
	e.assertNoTrace(t, stray)
	again, err := b2.Reattach(t.Context(), kept.ID(), kept.Record())
	if err != nil {
		t.Fatalf("the kept sandbox: %v", err)
	}
	e.track(again)
	// Destroy leaves nothing either.
	if err := b2.Destroy(t.Context(), again); err != nil {
		t.Fatal(err)
	}
	_ = b2.Close() // waits for the release
	e.assertNoTrace(t, kept.ID())
}

// TestFailedCreateLeavesNothing: a create cut short while runsc starts the
// sandbox (here by a start-up deadline it cannot meet) fails cleanly and
// leaves no directory, runsc state, cgroup (in any hierarchy: runsc makes
// its own in those Paddock does not use) or process.
func TestFailedCreateLeavesNothing(t *testing.T) {
	for _, d := range []time.Duration{50 * time.Millisecond, 400 * time.Millisecond, 1500 * time.Millisecond} {
		t.Run(d.String(), func(t *testing.T) {
			e := newEnv(t, func(o *gvisor.Options) { o.ReadyTimeout = d })
			cfg := e.config()
			inst, err := e.b.Create(t.Context(), cfg)
			if err == nil {
				e.track(inst)
				t.Skipf("the sandbox started within %s: nothing failed", d)
			}
			// Too slow a start is the host's load, not the sandbox's
			// fault: the caller is told to retry.
			if errs.CodeOf(err) != errs.CodeUnavailable || strings.Contains(errs.Public(err), "/") {
				t.Errorf("a start past its bound: %s %q, want unavailable without a host path", errs.CodeOf(err), errs.Public(err))
			}
			e.assertNoTrace(t, cfg.ID)
		})
	}
}
