//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/wire"
)

// pyCounter holds a 100 MiB list and counts in memory, writing each value
// to /tmp/c (atomically).
const pyCounter = `nohup python3 -c '
import os, time
big = [7] * (100 * 1024 * 1024 // 8)
i = 0
while True:
    i += 1
    with open("/tmp/c.new", "w") as f:
        f.write(str(i))
    os.replace("/tmp/c.new", "/tmp/c")
    time.sleep(0.05)
' >/dev/null 2>&1 &`

// sentryRSS sums the resident memory of the runsc processes of sandbox id
// (its sentry and gofer: a gVisor sandbox's memory on the host).
func sentryRSS(id string) (int64, int) {
	var total int64
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("runsc")) || !bytes.Contains(b, []byte(id)) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "statm"))
		if f := strings.Fields(string(st)); err == nil && len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			total += pages * int64(os.Getpagesize())
			n++
		}
	}
	return total, n
}

// TestHibernateAcrossKill9: a Python process holding a 100 MiB list and a
// counter, in a gVisor sandbox of a real `paddock serve`: hibernate →
// kill -9 of the server → restart → resume, and the counter carries on;
// while hibernated the sandbox holds no memory on the host (its sentry is
// gone). Then fork 3 of the running interpreter: each continues from the
// same state on its own.
func TestHibernateAcrossKill9(t *testing.T) {
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
	s := newServeProc(t, "hib")
	ctx := context.Background()
	s.start(0)
	sb, err := s.c.Create(ctx, client.Spec{Runtime: "gvisor", TimeoutS: 600, MemoryMB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	s.exec(sb.ID, "sh", "-c", pyCounter)
	read := func(id string) int {
		for range 100 {
			if n, err := strconv.Atoi(strings.TrimSpace(s.exec(id, "cat", "/tmp/c").Stdout)); err == nil {
				return n
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("no counter in %s", id)
		return 0
	}
	read(sb.ID)
	// gVisor's application memory is a memory file the sentry maps: the
	// sandbox's cgroup (its stats) charges it, the processes' RSS only
	// in part.
	st, err := s.c.Stats(ctx, sb.ID)
	rssBefore, nproc := sentryRSS(sb.ID)
	if err != nil || nproc == 0 || st.MemoryBytes < 100<<20 {
		t.Fatalf("before hibernation: cgroup %d MiB (%v), %d MiB RSS in %d runsc processes; want over 100 MiB", st.MemoryBytes>>20, err, rssBefore>>20, nproc)
	}
	atHib := read(sb.ID)
	h, err := s.c.Hibernate(ctx, sb.ID)
	if err != nil || h.State != wire.StateHibernated {
		t.Fatalf("hibernate: %+v %v", h, err)
	}
	rssAsleep, nAsleep := sentryRSS(sb.ID)
	cgs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", s.prefix, sb.ID))
	cg2, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", s.prefix, sb.ID))
	t.Logf("host memory of the sandbox: cgroup %d MiB and RSS %d MiB running; hibernated RSS %d MiB in %d processes, %d cgroups",
		st.MemoryBytes>>20, rssBefore>>20, rssAsleep>>20, nAsleep, len(cgs)+len(cg2))
	if nAsleep != 0 || len(cgs)+len(cg2) != 0 {
		t.Fatalf("hibernated, the sandbox still holds %d MiB in %d processes and %d cgroups", rssAsleep>>20, nAsleep, len(cgs)+len(cg2))
	}
	s.kill9()
	time.Sleep(time.Second)
	s.start(0)
	if got, err := s.c.Get(ctx, sb.ID); err != nil || got.State != wire.StateHibernated {
		t.Fatalf("after kill -9 and restart: %+v %v", got, err)
	}
	if _, err := s.c.Resume(ctx, sb.ID); err != nil {
		t.Fatalf("resume: %v", err)
	}
	n := read(sb.ID)
	if n < atHib || n > atHib+40 {
		t.Fatalf("counter after hibernate, kill -9, restart and resume = %d; it was %d at hibernation", n, atHib)
	}
	time.Sleep(300 * time.Millisecond)
	if n2 := read(sb.ID); n2 <= n {
		t.Fatalf("the counter does not run after resume (%d then %d)", n, n2)
	}

	// Fork 3 of the running interpreter.
	atFork := read(sb.ID)
	forks, err := s.c.ForkMemory(ctx, sb.ID, 3)
	if err != nil || len(forks) != 3 {
		t.Fatalf("fork 3 with memory: %v %v", forks, err)
	}
	for i, f := range forks {
		c := read(f.ID)
		if c < atFork {
			t.Fatalf("fork %d started its counter over: %d < %d", i, c, atFork)
		}
		s.exec(f.ID, "sh", "-c", "echo "+strconv.Itoa(i)+" > /tmp/who")
	}
	time.Sleep(300 * time.Millisecond)
	for i, f := range forks {
		if who := strings.TrimSpace(s.exec(f.ID, "cat", "/tmp/who").Stdout); who != strconv.Itoa(i) {
			t.Fatalf("fork %d sees %q in its own file", i, who)
		}
		if c := read(f.ID); c <= atFork {
			t.Fatalf("fork %d's counter is not running: %d", i, c)
		}
	}
}
