package audit_test

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

func percentiles(b *testing.B, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds())/1e3, "p99-µs")
}

var benchModes = []struct {
	name string
	opt  testenv.AuditOptions
}{
	{"off", testenv.AuditOptions{Disable: true}},
	{"always", testenv.AuditOptions{Sync: audit.SyncAlways}},
	{"batch", testenv.AuditOptions{Sync: audit.SyncBatch}},
	{"interval", testenv.AuditOptions{Sync: audit.SyncInterval}},
}

// BenchmarkExecAudit measures what the audit log adds to one exec of
// `true` in a real sandbox, one at a time: through the manager (the
// Observer's exec intent and result) and through the REST API (plus the
// Auditor's request intent and result). Compare p50 with "off".
func BenchmarkExecAudit(b *testing.B) {
	for _, path := range []string{"manager", "api"} {
		for _, m := range benchModes {
			b.Run(path+"/"+m.name, func(b *testing.B) {
				e := testenv.New(b, testenv.Options{Audit: m.opt})
				sb := e.Create(sandbox.Spec{})
				ctx := context.Background()
				run := func() error {
					if path == "manager" {
						_, err := e.Manager.Exec(ctx, e.Scope, sb.ID, sandbox.ExecRequest{Cmd: []string{"true"}}, nil, discard{}, false)
						return err
					}
					_, err := e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"true"}})
					return err
				}
				for i := 0; i < 50; i++ { // warm up
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				ds := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					if err := run(); err != nil {
						b.Fatal(err)
					}
					ds = append(ds, time.Since(t0))
				}
				b.StopTimer()
				percentiles(b, ds)
			})
		}
	}
}

// BenchmarkExecAuditPaired alternates execs between a stack without the
// audit log and one with it, op by op, so that both see the same host
// load (this machine is shared); "added-p50-µs" is the difference of the
// medians.
func BenchmarkExecAuditPaired(b *testing.B) {
	for _, path := range []string{"manager", "api"} {
		for _, m := range benchModes { // "off" against "off" is the noise floor
			b.Run(path+"/"+m.name, func(b *testing.B) {
				envs := []*testenv.Env{testenv.New(b, testenv.Options{Audit: benchModes[0].opt}), testenv.New(b, testenv.Options{Audit: m.opt})}
				ids := []string{envs[0].Create(sandbox.Spec{}).ID, envs[1].Create(sandbox.Spec{}).ID}
				ctx := context.Background()
				run := func(k int) error {
					e := envs[k]
					if path == "manager" {
						_, err := e.Manager.Exec(ctx, e.Scope, ids[k], sandbox.ExecRequest{Cmd: []string{"true"}}, nil, discard{}, false)
						return err
					}
					_, err := e.Client.Exec(ctx, ids[k], client.ExecRequest{Cmd: []string{"true"}})
					return err
				}
				for i := 0; i < 50; i++ {
					if run(0) != nil || run(1) != nil {
						b.Fatal("warm-up exec failed")
					}
				}
				ds := [2][]time.Duration{}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for _, k := range []int{i % 2, 1 - i%2} {
						t0 := time.Now()
						if err := run(k); err != nil {
							b.Fatal(err)
						}
						ds[k] = append(ds[k], time.Since(t0))
					}
				}
				b.StopTimer()
				med := func(d []time.Duration) float64 {
					sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
					return float64(d[len(d)/2].Nanoseconds()) / 1e3
				}
				off, on := med(ds[0]), med(ds[1])
				b.ReportMetric(off, "off-p50-µs")
				b.ReportMetric(on, "audited-p50-µs")
				b.ReportMetric(on-off, "added-p50-µs")
			})
		}
	}
}

// BenchmarkExecThroughput is audited execs per second through the REST
// API from 16 concurrent clients over 4 sandboxes, end to end on this
// machine.
func BenchmarkExecThroughput(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			e := testenv.New(b, testenv.Options{Audit: m.opt})
			var sbs []string
			for i := 0; i < 4; i++ {
				sbs = append(sbs, e.Create(sandbox.Spec{}).ID)
			}
			ctx := context.Background()
			var n atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for n.Add(1) <= int64(b.N) {
						if _, err := e.Client.Exec(ctx, sbs[w%len(sbs)], client.ExecRequest{Cmd: []string{"true"}}); err != nil {
							b.Error(err)
							return
						}
					}
				}(w)
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "execs/s")
		})
	}
}
