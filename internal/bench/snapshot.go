package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/client"
)

// Snapshot and fork scenarios (docs/state.md).
const (
	sSnap100      = "paddock/snapshot/100mib"          // POST snapshots of a sandbox that wrote 100 MiB
	sSnapCreate   = "paddock/snapshot/create"          // create from that snapshot
	sSnapTemplate = "paddock/snapshot/create-template" // create from its template, same spec
	sFork10       = "paddock/fork/10"                  // POST fork {count: 10}
	sForkOne      = "paddock/fork/create-one"          // one create of the same spec, for the ratio
	sFork1Big     = "paddock/fork/1-100mib"            // POST fork {count: 1} of the 100 MiB sandbox
)

var snapshotScenarios = []scenario{
	{sSnap100, "POST snapshots of a sandbox that wrote 100 MiB (frozen, copied into the store, thawed)"},
	{sSnapCreate, "create from that 100 MiB snapshot (restored into the new layer), then deleted"},
	{sSnapTemplate, "create from the snapshot's template with the same spec, then deleted"},
	{sFork10, "POST fork {count: 10} of an idle sandbox (one capture, 10 creates), then the forks deleted"},
	{sForkOne, "one create of the same spec, for fork/10's ratio"},
	{sFork1Big, "POST fork {count: 1} of a sandbox that wrote 100 MiB, then the fork deleted"},
}

// heavyRuns bounds the samples of the 100 MiB scenarios.
func (r *runner) heavyRuns() int { return max(1, min(r.o.Runs, 5)) }

func (r *runner) snapshots(ctx context.Context, st *Stack) {
	names := []string{sSnap100, sSnapCreate, sSnapTemplate, sFork10, sForkOne, sFork1Big}
	if why := r.caps.lacks("/snapshots", "snapshots"); why != "" {
		for _, n := range names {
			r.set(r.result(n).without(StatusUnavailable, why))
		}
		return
	}
	spec := r.spec()
	spec.DiskMB, spec.MemoryMB = 512, 1024
	big, err := r.create(ctx, st, spec)
	if err == nil {
		_, err = st.Client.Exec(ctx, big.ID, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", "head -c 104857600 /dev/urandom > /workspace/big"}})
	}
	if err != nil {
		for _, n := range names {
			r.set(r.result(n).without(StatusFailed, "prepare the 100 MiB sandbox: "+err.Error()))
		}
		return
	}
	defer func() { _ = r.remove(ctx, st, big.ID) }()

	// Snapshot of 100 MiB.
	n := r.heavyRuns()
	var samples []time.Duration
	var errs int
	var last error
	keep := ""
	r.prog.start(sSnap100, n)
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		name := fmt.Sprintf("bench-%s-%d", r.runID, i)
		t := time.Now()
		if _, err := st.Client.CreateSnapshot(ctx, big.ID, name); err != nil {
			errs, last = errs+1, err
		} else {
			samples = append(samples, time.Since(t))
			if keep == "" {
				keep = name
			} else {
				_ = st.Client.DeleteSnapshot(ctx, name)
			}
		}
		r.prog.step(1)
	}
	r.set(r.summarize(ctx, r.result(sSnap100), samples, time.Since(start), errs, last))
	if keep != "" {
		defer func() { _ = st.Client.DeleteSnapshot(context.WithoutCancel(ctx), keep) }()
		from := spec
		from.Snapshot = keep
		r.createDelete(ctx, st, sSnapCreate, from, n)
	} else {
		r.set(r.result(sSnapCreate).without(StatusFailed, "no snapshot to create from"))
	}
	r.createDelete(ctx, st, sSnapTemplate, spec, n)

	// Fork of 1 from the 100 MiB sandbox.
	r.forkScenario(ctx, st, sFork1Big, big.ID, 1, n)
	// Fork of 10 vs one create, from an idle sandbox.
	small, err := r.create(ctx, st, r.spec())
	if err != nil {
		r.set(r.result(sFork10).without(StatusFailed, "create: "+err.Error()))
		return
	}
	defer func() { _ = r.remove(ctx, st, small.ID) }()
	r.forkScenario(ctx, st, sFork10, small.ID, 10, r.heavyRuns())
	r.createDelete(ctx, st, sForkOne, r.spec(), r.heavyRuns())
}

// createDelete times n creates of spec (each deleted after, untimed).
func (r *runner) createDelete(ctx context.Context, st *Stack, name string, spec client.Spec, n int) {
	var samples []time.Duration
	var errs int
	var last error
	r.prog.start(name, n)
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t := time.Now()
		sb, err := r.create(ctx, st, spec)
		if err != nil {
			errs, last = errs+1, err
		} else {
			samples = append(samples, time.Since(t))
			_ = r.remove(ctx, st, sb.ID)
			r.settle(ctx, st)
		}
		r.prog.step(1)
	}
	r.set(r.summarize(ctx, r.result(name), samples, time.Since(start), errs, last))
}

// forkScenario times n forks of count from id (the forks deleted after).
func (r *runner) forkScenario(ctx context.Context, st *Stack, name, id string, count, n int) {
	var samples []time.Duration
	var errs int
	var last error
	r.prog.start(name, n)
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t := time.Now()
		forks, err := st.Client.Fork(ctx, id, count)
		if err != nil {
			errs, last = errs+1, err
		} else {
			samples = append(samples, time.Since(t))
		}
		for _, f := range forks {
			r.track.add(f.ID)
			_ = r.remove(ctx, st, f.ID)
		}
		r.settle(ctx, st)
		r.prog.step(1)
	}
	r.set(r.summarize(ctx, r.result(name), samples, time.Since(start), errs, last))
}
