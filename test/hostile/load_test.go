//go:build linux

package hostile

// Load: many sandboxes each running an exec loop while others are created
// and deleted. Zero errors; latency reported; no growth of the server's
// memory or descriptors afterwards.
//
// Duration: PADDOCK_LOAD_SECONDS (default 15 s, what CI runs; the full
// benchmark is PADDOCK_LOAD_SECONDS=60). Sandboxes: PADDOCK_LOAD_SANDBOXES
// (default 100; 20 on gVisor, see TestLoad). PADDOCK_LOAD_REPORT names a file to copy the JSON report
// to (it is always written under the test's temp dir and logged).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/testenv"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// latencies collects durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// summary is one scenario of the report.
type summary struct {
	Count int     `json:"count"`
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
	Maxms float64 `json:"max_ms"`
}

func (l *latencies) summary() summary {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return summary{}
	}
	s := append([]time.Duration(nil), l.d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return summary{Count: len(s), P50ms: ms(s[len(s)/2]), P99ms: ms(s[len(s)*99/100]), Maxms: ms(s[len(s)-1])}
}

// usage is what the server (this process) holds.
type usage struct {
	HeapMiB    float64 `json:"heap_inuse_mib"`
	RSSMiB     float64 `json:"rss_mib"`
	FDs        int     `json:"open_fds"`
	Goroutines int     `json:"goroutines"`
}

func measure(t testing.TB) usage {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	u := usage{HeapMiB: float64(m.HeapInuse) / (1 << 20), FDs: openFDs(t), Goroutines: runtime.NumGoroutine()}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				u.RSSMiB = kb / 1024
			}
		}
	}
	return u
}

// loadReport is the JSON report.
type loadReport struct {
	Seconds    int     `json:"seconds"`
	Sandboxes  int     `json:"sandboxes"`
	Exec       summary `json:"exec"`
	Create     summary `json:"create"`
	Delete     summary `json:"delete"`
	ExecPerSec float64 `json:"exec_per_s"`
	Errors     int64   `json:"errors"`
	Before     usage   `json:"before"`
	After      usage   `json:"after"`
	FirstError string  `json:"first_error,omitempty"`
}

// Tolerances of the after/before comparison (the server is this process:
// what it holds after the load, once every sandbox is gone and the
// garbage collector ran, against what it held before).
const (
	tolHeapMiB    = 32
	tolRSSMiB     = 128
	tolFDs        = 16
	tolGoroutines = 32
)

// within reports whether after's descriptors and goroutines are within the
// tolerances of before's.
func within(before, after usage) bool {
	return after.FDs <= before.FDs+tolFDs && after.Goroutines <= before.Goroutines+tolGoroutines
}

func TestLoad(t *testing.T) {
	seconds := envInt("PADDOCK_LOAD_SECONDS", 15)
	// On gVisor every sandbox is a user-space kernel whose execs cost
	// tens of milliseconds of CPU each: 100 of them looping on a 2-core
	// host is no longer load but overload (1.4 execs/s in all, load 270,
	// runsc starts past their 30 s bound). 20 is what this machine kind
	// serves there; the case still asserts zero errors.
	def := 100
	if onGVisor(t) {
		def = 20
	}
	n := envInt("PADDOCK_LOAD_SANDBOXES", def)
	e := newEnv(t, testenv.Options{Slots: n + 64})
	tr := &http.Transport{MaxIdleConnsPerHost: n + 16, MaxConnsPerHost: 0}
	c := client.New(e.Server.URL, e.AdminKey).WithHTTPClient(&http.Client{Transport: tr})
	ctx := context.Background()
	var errCount atomic.Int64
	var firstErr atomic.Value
	fail := func(what string, err error) {
		if errCount.Add(1) == 1 {
			firstErr.Store(fmt.Sprintf("%s: %v", what, err))
		}
	}
	// Small disks: where layers are tmpfs every sandbox's disk is reserved
	// from the host's RAM (issue 14 item 7), and 100 default disks do not
	// fit in this machine kind's 24 GiB.
	// Warm up (templates, pools of buffers, connections), then the baseline.
	for i := 0; i < 3; i++ {
		sb, err := c.Create(ctx, client.Spec{DiskMB: 64})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"true"}})
		_ = c.Delete(ctx, sb.ID)
	}
	tr.CloseIdleConnections()
	time.Sleep(time.Second)
	before := measure(t)

	var create, del, execs latencies
	ids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t0 := time.Now()
			sb, err := c.Create(ctx, client.Spec{DiskMB: 64, Labels: map[string]string{"load": strconv.Itoa(i)}})
			if err != nil {
				fail("create", err)
				return
			}
			create.add(time.Since(t0))
			ids[i] = sb.ID
		}(i)
	}
	wg.Wait()
	if errCount.Load() > 0 {
		t.Fatalf("creating %d sandboxes: %d errors, first: %v", n, errCount.Load(), firstErr.Load())
	}
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	start := time.Now()
	for _, id := range ids {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				res, err := c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"true"}})
				if err != nil || res.ExitCode != 0 {
					fail("exec in "+id, fmt.Errorf("%v (exit %d)", err, res.ExitCode))
					continue
				}
				execs.add(time.Since(t0))
			}
		}(id)
	}
	// Churn: sandboxes created, used and deleted alongside.
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				sb, err := c.Create(ctx, client.Spec{DiskMB: 64, Labels: map[string]string{"churn": "1"}})
				if err != nil {
					fail("churn create", err)
					continue
				}
				create.add(time.Since(t0))
				if res, err := c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"echo", "churn"}}); err != nil || res.Stdout != "churn\n" {
					fail("churn exec", fmt.Errorf("%v %q", err, res.Stdout))
				}
				t0 = time.Now()
				if err := c.Delete(ctx, sb.ID); err != nil {
					fail("churn delete", err)
					continue
				}
				del.add(time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, id := range ids {
		if id == "" {
			continue
		}
		t0 := time.Now()
		if err := c.Delete(ctx, id); err != nil {
			fail("delete", err)
		}
		del.add(time.Since(t0))
	}
	tr.CloseIdleConnections()
	// Let asynchronous teardown (guest exits, cgroup removal) finish.
	waitFor(30*time.Second, func() bool { list, _ := e.Client.List(ctx, nil); return len(list) == 1 }) // the witness
	time.Sleep(2 * time.Second)
	after := measure(t)
	// A deleted sandbox is gone from the API at once; its host side is
	// released after the answer (native and gVisor alike): on gVisor each
	// waits for its sentry — a 100 MB process of many threads — to exit
	// after SIGKILL, holding its pidfds, its agent link's sockets and a
	// few goroutines meanwhile. On a loaded host (the full gVisor pass,
	// load average 25–50) that took longer than 2 s for 20 sandboxes (seen:
	// 79 descriptors and 61 goroutines against 30 and 17). What is still
	// being released comes back; a leak never does: wait (bounded) for
	// both to return within the tolerances, and report how long it took.
	t0 := time.Now()
	first := after
	for !within(before, after) && time.Since(t0) < 60*time.Second {
		time.Sleep(time.Second)
		after = measure(t)
	}
	if !within(before, first) {
		t.Logf("teardown in flight 2 s after the last delete: %d descriptors and %d goroutines; back to %d and %d %.1f s later",
			first.FDs, first.Goroutines, after.FDs, after.Goroutines, time.Since(t0).Seconds())
	}

	rep := loadReport{Seconds: seconds, Sandboxes: n, Exec: execs.summary(), Create: create.summary(), Delete: del.summary(),
		ExecPerSec: float64(execs.summary().Count) / elapsed.Seconds(), Errors: errCount.Load(), Before: before, After: after}
	if v, ok := firstErr.Load().(string); ok {
		rep.FirstError = v
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	out := filepath.Join(t.TempDir(), "load.json")
	_ = os.WriteFile(out, b, 0o644)
	if p := os.Getenv("PADDOCK_LOAD_REPORT"); p != "" {
		_ = os.WriteFile(p, b, 0o644)
	}
	t.Logf("load report (%s):\n%s", out, b)
	if rep.Errors > 0 {
		t.Errorf("%d errors under load; first: %s", rep.Errors, rep.FirstError)
	}
	if rep.Exec.Count == 0 {
		t.Fatal("no exec completed")
	}
	if after.HeapMiB > before.HeapMiB+tolHeapMiB {
		t.Errorf("heap grew: %.1f → %.1f MiB (tolerance %d MiB)", before.HeapMiB, after.HeapMiB, tolHeapMiB)
	}
	if after.RSSMiB > before.RSSMiB+tolRSSMiB {
		t.Errorf("RSS grew: %.1f → %.1f MiB (tolerance %d MiB)", before.RSSMiB, after.RSSMiB, tolRSSMiB)
	}
	if after.FDs > before.FDs+tolFDs {
		t.Errorf("open descriptors grew: %d → %d (tolerance %d); held now:\n%s", before.FDs, after.FDs, tolFDs, fdTargets())
	}
	if after.Goroutines > before.Goroutines+tolGoroutines {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Errorf("goroutines grew: %d → %d (tolerance %d); running now:\n%s", before.Goroutines, after.Goroutines, tolGoroutines, b.String())
	}
	e.stillServes()
}

// fdTargets lists what this process's descriptors refer to, counted by
// target, so that a growth failure names what was left open.
func fdTargets() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	n := map[string]int{}
	for _, e := range ents {
		dst, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue
		}
		if i := strings.Index(dst, ":["); i > 0 {
			dst = dst[:i] // socket:[123] → socket
		}
		n[dst]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%5d %s\n", n[k], k)
	}
	return b.String()
}
