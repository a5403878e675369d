package audit

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"
)

// p50 reports the median of ds (and the 99th percentile) as metrics.
func reportPercentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkAppend is the log alone on this disk: one writer at a time
// (the latency an action waits) and 64 at once (group commit), for each
// sync mode, with intent records (fsync'd in always and batch).
func BenchmarkAppend(b *testing.B) {
	entry := Entry{Action: "exec", Phase: PhaseIntent, Actor: "k_abc", Tenant: "default", Sandbox: "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa",
		Request: "0123456789abcdef", Args: map[string]any{"argv": []string{"sh", "-c", "echo hello"}, "cwd": "", "user": ""}}
	for _, mode := range []SyncMode{SyncAlways, SyncBatch, SyncInterval} {
		for _, par := range []int{1, 64} {
			b.Run(string(mode)+"/writers="+itoa(par), func(b *testing.B) {
				l, err := Open(Options{Dir: b.TempDir(), Sync: mode})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				ctx := context.Background()
				ds := make([]time.Duration, b.N)
				var wg sync.WaitGroup
				next := make(chan int, b.N)
				for i := 0; i < b.N; i++ {
					next <- i
				}
				close(next)
				b.ResetTimer()
				start := time.Now()
				for w := 0; w < par; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range next {
							t0 := time.Now()
							if _, err := l.Append(ctx, entry); err != nil {
								b.Error(err)
								return
							}
							ds[i] = time.Since(t0)
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
				reportPercentiles(b, ds)
			})
		}
	}
}

func itoa(n int) string {
	if n == 1 {
		return "1"
	}
	return "64"
}

// BenchmarkObserverExec is the audit work on an exec's path, in process:
// the Observer's intent and result events (redaction, encoding, hash,
// write), as the manager calls them, and the API's request intent and
// result around them.
func BenchmarkObserverExec(b *testing.B) {
	for _, mode := range []SyncMode{SyncAlways, SyncBatch, SyncInterval} {
		for _, withAPI := range []bool{false, true} {
			name := string(mode) + "/manager"
			if withAPI {
				name = string(mode) + "/api"
			}
			b.Run(name, func(b *testing.B) {
				l, err := Open(Options{Dir: b.TempDir(), Sync: mode})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				rec := NewRecorder(l, RecorderOptions{})
				ctx := context.Background()
				ds := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					if withAPI {
						mustAppend(b, l, Entry{Action: ActionHTTP, Phase: PhaseIntent, Actor: "admin", Tenant: "default", Sandbox: "sb-x",
							Request: "0123456789abcdef", Args: map[string]any{"method": "POST", "route": "/v1/sandboxes/{id}/exec", "path": "/v1/sandboxes/sb-x/exec", "remote": "127.0.0.1"}})
					}
					if err := rec.Event(ctx, sandboxEvent("intent", map[string]any{"argv": []string{"true"}, "cwd": "", "user": ""})); err != nil {
						b.Fatal(err)
					}
					_ = rec.Event(ctx, sandboxEvent("result", map[string]any{"exit_code": 0, "signal": "", "oom_killed": false,
						"timed_out": false, "stdout_bytes": int64(0), "stderr_bytes": int64(0)}))
					if withAPI {
						mustAppend(b, l, Entry{Action: ActionHTTP, Phase: PhaseResult, Actor: "admin", Tenant: "default", Sandbox: "sb-x",
							Request: "0123456789abcdef", Status: 200, Duration: time.Millisecond, Result: map[string]string{"method": "POST", "route": "/v1/sandboxes/{id}/exec"}})
					}
					ds = append(ds, time.Since(t0))
				}
				b.StopTimer()
				reportPercentiles(b, ds)
			})
		}
	}
}
