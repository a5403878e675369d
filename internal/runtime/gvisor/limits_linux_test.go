//go:build linux

package gvisor_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
)

func TestPidsLimit(t *testing.T) {
	e := newEnv(t, nil)
	cfg := e.config()
	cfg.Limits.Pids = 32
	inst := e.create(cfg)
	// Positive control: a few processes start.
	if res := sh(t, inst, "sleep 1 & sleep 1 & wait; echo ok"); res.Stdout != "ok\n" {
		t.Fatalf("control: %+v", res)
	}
	// 100 background sleeps in one exec: past 32 the forks fail inside
	// (gVisor's pids controller). Count the sandbox's processes while
	// they run: the agent, the shell, and at most the limit.
	res := sh(t, inst, `for i in $(seq 100); do sleep 3 & done 2>/dev/null; ls /proc | grep -c '^[0-9]'`)
	n, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil && res.ExitCode == 0 {
		t.Fatalf("fork flood: %+v", res)
	}
	if n > 34 {
		t.Fatalf("the process limit did not hold: %d processes", n)
	}
	// Once the sleeps end the sandbox runs commands again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var o outBuf
		r, err := inst.Guest().Exec(t.Context(), guestapi.ExecRequest{Argv: []string{"echo", "alive"}}, nil, &o)
		if err == nil && r.ExitCode == 0 && o.stdout.String() == "alive\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox after the fork flood: %+v %v", r, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestDiskLimit(t *testing.T) {
	e := newEnv(t, nil)
	cfg := e.config()
	cfg.Limits.DiskBytes = 64 << 20
	inst := e.create(cfg)
	// Positive control: 16 MiB fit.
	if res := sh(t, inst, "head -c 16M /dev/zero > /workspace/a && echo ok"); res.Stdout != "ok\n" {
		t.Fatalf("control: %+v", res)
	}
	res := sh(t, inst, "head -c 200M /dev/zero > /workspace/b; echo rc=$?")
	if !strings.Contains(res.Stderr, "No space left") {
		t.Fatalf("a 200 MiB write into a 64 MiB layer: %+v", res)
	}
	if res := sh(t, inst, "rm /workspace/b; echo alive"); res.Stdout != "alive\n" {
		t.Fatalf("sandbox after a full disk: %+v", res)
	}
}

// TestMemoryLimit: gVisor's kernel has no OOM killer of its own, so the
// memory limit holds for the sandbox as a whole (docs/gvisor.md): the
// sandbox sees its limit as its memory, work within it runs, and a
// sandbox whose processes go past it is stopped by the host's OOM killer
// — the sandbox alone, never its neighbours.
func TestMemoryLimit(t *testing.T) {
	e := newEnv(t, nil)
	cfg := e.config()
	cfg.Limits.MemoryBytes = 128 << 20
	inst := e.create(cfg)
	other := e.create(e.config())
	res := sh(t, inst, "head -1 /proc/meminfo")
	f := strings.Fields(res.Stdout)
	if len(f) < 2 {
		t.Fatalf("meminfo: %+v", res)
	}
	kb, _ := strconv.ParseInt(f[1], 10, 64)
	if kb<<10 > 512<<20 {
		t.Fatalf("MemTotal %d kB: the sandbox does not see its limit", kb)
	}
	// Positive control: 32 MiB held in memory fits.
	if res := sh(t, inst, "head -c 32M /dev/zero | tail > /dev/null && echo ok"); res.Stdout != "ok\n" {
		t.Fatalf("control: %+v", res)
	}
	// 400 MiB does not: the sandbox ends.
	var o outBuf
	_, err := inst.Guest().Exec(t.Context(), guestapi.ExecRequest{Argv: []string{"sh", "-c", "head -c 400M /dev/zero | tail > /dev/null"}}, nil, &o)
	select {
	case <-inst.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("a 400 MiB hog in a 128 MiB sandbox: still running (exec: %v, %q)", err, o.stderr.String())
	}
	st, serr := inst.Stats()
	if serr != nil || st.OOMKills < 1 {
		t.Fatalf("no OOM kill recorded: %+v %v", st, serr)
	}
	if res := sh(t, other, "echo alive"); res.Stdout != "alive\n" {
		t.Fatalf("the neighbour after the OOM: %+v", res)
	}
}
