//go:build linux

package kube_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/template"
)

// reportP50 adds p50 and p90 of ds (ms) to b's results.
func reportP50(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*9/10].Microseconds())/1000, "p90-ms")
}

type discard struct{}

func (discard) Stdout([]byte) error { return nil }
func (discard) Stderr([]byte) error { return nil }

// BenchmarkCreateExecDeleteCold: a new Pod per iteration, ready when its
// guest answers; one exec; delete (the Pod's deletion is asynchronous, as
// the native backend's teardown is).
func BenchmarkCreateExecDeleteCold(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	tpl := &template.Template{Name: "busybox"}
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		inst, err := e.b.Create(ctx, runtime.Config{ID: randName("sb-bench-"), Template: tpl,
			Limits: runtime.Limits{CPU: 0.5, MemoryBytes: 128 << 20}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inst.Guest().Exec(ctx, guestapi.ExecRequest{Argv: []string{"true"}}, nil, discard{}); err != nil {
			b.Fatal(err)
		}
		if err := e.b.Destroy(ctx, inst); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	reportP50(b, ds)
}

// BenchmarkExecRoundTrip: `true` in a running sandbox, over mutual TLS
// on the Pod network (compare native's BenchmarkExecRoundTrip).
func BenchmarkExecRoundTrip(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	inst, err := e.b.Create(ctx, runtime.Config{ID: randName("sb-bench-"), Template: &template.Template{Name: "busybox"},
		Limits: runtime.Limits{CPU: 1, MemoryBytes: 128 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.b.Destroy(ctx, inst)
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := inst.Guest().Exec(ctx, guestapi.ExecRequest{Argv: []string{"true"}}, nil, discard{}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	reportP50(b, ds)
}

// BenchmarkKubectlRunExecDelete is the peer: `kubectl run` of the same
// image, wait for it, `kubectl exec true`, `kubectl delete --wait=false`.
func BenchmarkKubectlRunExecDelete(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := randName("peer-")
		t0 := time.Now()
		if _, err := e.c.Kubectl(ctx, "-n", e.ns, "run", name, "--image="+e.c.BusyboxImage, "--restart=Never",
			"--command", "--", "sleep", "3600"); err != nil {
			b.Fatal(err)
		}
		if _, err := e.c.Kubectl(ctx, "-n", e.ns, "wait", "--for=condition=Ready", "--timeout=120s", "pod/"+name); err != nil {
			b.Fatal(err)
		}
		if _, err := e.c.Kubectl(ctx, "-n", e.ns, "exec", name, "--", "true"); err != nil {
			b.Fatal(err)
		}
		if _, err := e.c.Kubectl(ctx, "-n", e.ns, "delete", "pod", name, "--wait=false"); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	reportP50(b, ds)
}

// BenchmarkKubectlExec is the peer of BenchmarkExecRoundTrip.
func BenchmarkKubectlExec(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	p, err := e.c.RunPod(ctx, e.ns, "peer", nil, "sleep", "3600")
	if err != nil {
		b.Fatal(err)
	}
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if out, err := e.c.ExecPod(ctx, e.ns, p.Name, "true"); err != nil {
			b.Fatal(fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out))))
		}
		ds = append(ds, time.Since(t0))
	}
	reportP50(b, ds)
}
