//go:build linux

package native_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// neighbour runs execs in another sandbox while f runs, and fails the test
// if any of them errors: a limit hit in one sandbox must not stall others.
func neighbour(t *testing.T, e *testenv.Env, f func()) {
	t.Helper()
	other := e.Create(sandbox.Spec{})
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var n int
	var fail error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			res, err := e.Client.Exec(context.Background(), other.ID, client.ExecRequest{Cmd: []string{"echo", "ok"}, TimeoutMs: 10000})
			if err != nil || res.Stdout != "ok\n" {
				fail = err
				if fail == nil {
					fail = os.ErrInvalid
				}
				return
			}
			n++
			time.Sleep(20 * time.Millisecond)
		}
	}()
	f()
	cancel()
	wg.Wait()
	if fail != nil {
		t.Fatalf("the neighbouring sandbox stopped answering: %v", fail)
	}
	if n == 0 {
		t.Fatal("the neighbouring sandbox answered no exec at all")
	}
}

func TestMemoryHogIsOOMKilledInItsSandboxOnly(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{MemoryMB: 64, DiskMB: 16})
	neighbour(t, e, func() {
		res, err := e.Client.Exec(t.Context(), sb.ID, client.ExecRequest{
			Cmd: []string{"sh", "-c", "head -c 400M /dev/zero | tail > /dev/null"}, TimeoutMs: 60000})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OOMKilled && !strings.Contains(res.Stderr, "Killed") && res.ExitCode == 0 {
			t.Fatalf("the hog was not stopped: %+v", res)
		}
	})
	st, err := e.Manager.Stats(t.Context(), e.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.OOMKills < 1 {
		t.Fatalf("no OOM kill recorded: %+v", st)
	}
	// The sandbox itself survives its workload's OOM.
	if res := e.Exec(sb.ID, "echo", "alive"); res.Stdout != "alive\n" {
		t.Fatalf("sandbox dead after OOM: %+v", res)
	}
	// The hog is distinguishable: an exec whose main process is OOM-killed
	// reports it.
	res, err := e.Client.Exec(t.Context(), sb.ID, client.ExecRequest{
		Cmd: []string{"python3", "-c", "b = bytearray(300 << 20); print(len(b))"}, TimeoutMs: 60000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OOMKilled || res.Signal != "SIGKILL" {
		t.Fatalf("want oom_killed + SIGKILL, got %+v", res)
	}
}

func TestForkBombIsCapped(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{Pids: 64})
	neighbour(t, e, func() {
		res, err := e.Client.Exec(t.Context(), sb.ID, client.ExecRequest{
			// The main process blocks on a FIFO (no fork needed) so that
			// the exec ends by its timeout, which kills the whole tree.
			Cmd: []string{"bash", "-c", "mkfifo /tmp/f; bomb() { bomb | bomb & }; bomb; read < /tmp/f"}, TimeoutMs: 3000})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut {
			t.Fatalf("the bomb's exec did not time out: %+v", res.ExecResult)
		}
	})
	st, err := e.Manager.Stats(t.Context(), e.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pids > 64 {
		t.Fatalf("pids %d over the limit of 64", st.Pids)
	}
	// The exec timeout killed the bomb's whole tree: the sandbox is usable.
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := e.Client.Exec(t.Context(), sb.ID, client.ExecRequest{Cmd: []string{"echo", "ok"}})
		if err == nil && res.Stdout == "ok\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox unusable after the bomb: %v %+v", err, res)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCPUSpinnerIsThrottled(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{CPU: 0.2})
	neighbour(t, e, func() {
		res, err := e.Client.Exec(t.Context(), sb.ID, client.ExecRequest{
			Cmd: []string{"sh", "-c", "timeout 2 sh -c 'while :; do :; done'; true"}, TimeoutMs: 20000})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("spinner: %v %+v", err, res)
		}
	})
	st, err := e.Manager.Stats(t.Context(), e.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.CPUThrottled <= 0 {
		t.Fatalf("a CPU spinner under a 0.2-core limit was never throttled: %+v", st)
	}
	// 2 s at 0.2 cores is about 0.4 s of CPU; allow slack but not a full core.
	if st.CPUUsage > 1500*time.Millisecond {
		t.Fatalf("spinner used %s of CPU in 2 s under a 0.2-core limit", st.CPUUsage)
	}
}

func TestDiskFillerGetsENOSPC(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{DiskMB: 32})
	neighbour(t, e, func() {
		res, err := e.Client.Exec(t.Context(), sb.ID, client.ExecRequest{
			Cmd: []string{"dd", "if=/dev/zero", "of=/workspace/fill", "bs=1M", "count=200"}, TimeoutMs: 60000})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "No space left on device") {
			t.Fatalf("want ENOSPC, got %+v", res)
		}
		if res.OOMKilled {
			t.Fatal("a full disk ended in an OOM kill")
		}
	})
	// Inodes run out too, with ENOSPC, not by exhausting the host.
	res := e.Sh(sb.ID, "rm -f /workspace/fill; mkdir /workspace/i && cd /workspace/i && i=0; while [ $i -lt 100000 ]; do : > f$i || break; i=$((i+1)); done; echo $i")
	if !strings.Contains(res.Stderr, "No space left on device") {
		t.Fatalf("inode exhaustion: %+v", res)
	}
	if res := e.Exec(sb.ID, "echo", "alive"); res.Stdout != "alive\n" {
		t.Fatalf("sandbox unusable after filling its disk: %+v", res)
	}
}

func TestSandboxTimeoutDestroys(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{TimeoutS: 1})
	cg := "/sys/fs/cgroup/pids/" + e.Prefix + "/" + sb.ID
	if _, err := os.Stat(cg); err != nil {
		t.Skipf("no v1 pids cgroup to watch: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := e.Client.Get(t.Context(), sb.ID)
		if client.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox still there after its timeout: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		if _, err := os.Stat(cg); os.IsNotExist(err) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the expired sandbox's cgroup was not removed")
}

func TestExecTimeoutKillsDoubleForkedChild(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	res, err := e.Client.Exec(t.Context(), sb.ID, client.ExecRequest{
		Cmd: []string{"sh", "-c", "(setsid sleep 1000 &); (nohup sleep 1001 >/dev/null 2>&1 &); sleep 1002"}, TimeoutMs: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal != "SIGKILL" {
		t.Fatalf("want a timed-out, killed exec: %+v", res)
	}
	out := e.Sh(sb.ID, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '")
	if strings.Contains(out.Stdout, "sleep 100") {
		t.Fatalf("a child of the timed-out exec survived: %q", out.Stdout)
	}
	// Positive control: without a timeout a double-forked child does
	// outlive its exec (daemons are allowed).
	e.Sh(sb.ID, "(setsid sleep 1003 >/dev/null 2>&1 &); true")
	out = e.Sh(sb.ID, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '")
	if !strings.Contains(out.Stdout, "sleep 1003") {
		t.Fatalf("positive control: the daemon did not outlive its exec: %q", out.Stdout)
	}
}
