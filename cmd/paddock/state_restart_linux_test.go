//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/wire"
)

// TestPauseSnapshotAcrossKill9: a process's in-memory counter survives
// pause → kill -9 of a real `paddock serve` → restart → resume, and a
// snapshot taken before the kill restores after it.
func TestPauseSnapshotAcrossKill9(t *testing.T) {
	s := newServeProc(t, "state")
	ctx := context.Background()
	s.start(0)
	sb, err := s.c.Create(ctx, client.Spec{TimeoutS: 600})
	if err != nil {
		t.Fatal(err)
	}
	// The counter lives in a shell variable: only memory holds it; the
	// file is its last reading.
	s.exec(sb.ID, "sh", "-c", `nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/c.new; mv /tmp/c.new /tmp/c; sleep 0.05; done' >/dev/null 2>&1 & sleep 0.3`)
	read := func() int {
		n, err := strconv.Atoi(strings.TrimSpace(s.exec(sb.ID, "cat", "/tmp/c").Stdout))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	s.exec(sb.ID, "sh", "-c", "echo before-kill > /workspace/f")
	if _, err := s.c.CreateSnapshot(ctx, sb.ID, "pre-kill"); err != nil {
		t.Fatal(err)
	}
	atPause := read()
	pausedAt := time.Now()
	if _, err := s.c.Pause(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	slack := int(time.Since(pausedAt)/(50*time.Millisecond)) + 2 // ticks between the read and the freeze
	s.kill9()
	time.Sleep(2 * time.Second) // 40 ticks, were it running
	s.start(0)
	got, err := s.c.Get(ctx, sb.ID)
	if err != nil || got.State != wire.StatePaused {
		t.Fatalf("after kill -9 and restart: %+v %v", got, err)
	}
	resumedAt := time.Now()
	if _, err := s.c.Resume(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	n := read()
	ran := int(time.Since(resumedAt)/(50*time.Millisecond)) + 2
	// From memory: not started over (below atPause), not run while the
	// server was dead (40 ticks past it).
	if n < atPause || n > atPause+slack+ran {
		t.Fatalf("counter after kill -9, restart and resume = %d; it was %d at the pause (at most %d ticks since)", n, atPause, slack+ran)
	}
	time.Sleep(300 * time.Millisecond)
	if n2 := read(); n2 <= n {
		t.Fatalf("the counter does not run after resume (%d then %d)", n, n2)
	}
	// The snapshot outlived the kill.
	fromSnap, err := s.c.Create(ctx, client.Spec{TimeoutS: 600, Snapshot: "pre-kill"})
	if err != nil {
		t.Fatal(err)
	}
	if out := s.exec(fromSnap.ID, "cat", "/workspace/f").Stdout; out != "before-kill\n" {
		t.Fatalf("file from the snapshot after kill -9: %q", out)
	}
	// The CLI, as users run it: snapshot ls, fork, inspect's fork tree.
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(s.bin, args...)
		cmd.Env = append(os.Environ(), "PADDOCK_URL=http://"+s.addr, "PADDOCK_API_KEY="+s.key)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("paddock %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := cli("snapshot", "ls"); !strings.Contains(out, "pre-kill") || !strings.Contains(out, sb.ID) {
		t.Fatalf("paddock snapshot ls:\n%s", out)
	}
	// The sandbox reattached after the kill forks like any (its agent
	// hands the new server its layer, docs/state.md).
	forked := strings.Fields(cli("fork", sb.ID, "-n", "2"))
	if len(forked) != 2 {
		t.Fatalf("paddock fork: %q", forked)
	}
	if out := s.exec(forked[1], "cat", "/workspace/f").Stdout; out != "before-kill\n" {
		t.Fatalf("file in a fork of the reattached sandbox: %q", out)
	}
	var tree wire.Sandbox
	if err := json.Unmarshal([]byte(cli("inspect", sb.ID)), &tree); err != nil || len(tree.Forks) != 2 {
		t.Fatalf("paddock inspect's forks: %+v %v", tree.Forks, err)
	}
	if err := json.Unmarshal([]byte(cli("inspect", forked[0])), &tree); err != nil || tree.Spec.ForkOf != sb.ID {
		t.Fatalf("paddock inspect of a fork: fork_of %q %v", tree.Spec.ForkOf, err)
	}
	cli("snapshot", "rm", "pre-kill")
	if out := cli("snapshot", "ls"); strings.Contains(out, "pre-kill") {
		t.Fatalf("after rm:\n%s", out)
	}
}
