//go:build linux

package gvisor_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
)

// counterScript starts a background counter that writes its value to a
// file every 50 ms: the value lives in the process's memory only.
const counterScript = `nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/count; sleep 0.05; done' >/dev/null 2>&1 &`

// readCount reads the counter; -1 while it has not written yet.
func readCount(t *testing.T, inst runtime.Instance) int {
	t.Helper()
	res := sh(t, inst, "cat /tmp/count 2>/dev/null")
	n, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil {
		return -1
	}
	return n
}

// waitCountAbove waits until the counter passes n.
func waitCountAbove(t *testing.T, inst runtime.Instance, n int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := readCount(t, inst)
		if c > n {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("counter stuck at %d (want > %d)", c, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCheckpointRestoreContinuesTwice(t *testing.T) {
	e := newEnv(t, nil)
	src := e.create(e.config())
	sh(t, src, counterScript)
	before := waitCountAbove(t, src, 5)
	img := filepath.Join(e.data, "images", "one")
	mustMkdir(t, filepath.Dir(img))
	m, err := e.b.Checkpoint(t.Context(), src, gvisorCheckpoint(img, false))
	if err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	if m.Bytes() == 0 {
		t.Fatal("empty image")
	}
	<-src.Done() // not left running: the sentry exits
	_ = e.b.Destroy(t.Context(), src)

	// Two restores of one image run side by side (a fork), each carrying
	// on from the checkpointed counter.
	var forks []runtime.Instance
	for range 2 {
		cfg := e.config()
		inst, err := e.b.Restore(t.Context(), cfg, img)
		if err != nil {
			t.Fatalf("restore: %v", err)
		}
		e.track(inst)
		forks = append(forks, inst)
	}
	for i, f := range forks {
		c := readCount(t, f)
		if c < before {
			t.Fatalf("fork %d restarted its counter: %d < %d", i, c, before)
		}
		waitCountAbove(t, f, c)
	}
	// Independent: a file written in one is not in the other.
	sh(t, forks[0], "echo zero > /tmp/mine")
	if res := sh(t, forks[1], "cat /tmp/mine"); res.ExitCode == 0 {
		t.Fatalf("fork 1 sees fork 0's file: %+v", res)
	}
}
