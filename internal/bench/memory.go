package bench

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/client"
)

// gVisor and memory scenarios (docs/gvisor.md, docs/state.md).
const (
	sGVOneShot  = "paddock/gvisor/create-exec-delete" // beside peer/runsc
	sGVExec     = "paddock/gvisor/exec"               // beside paddock/exec
	sHibernate  = "paddock/gvisor/hibernate-100mib"
	sWake       = "paddock/gvisor/resume-100mib"
	sMemFork1   = "paddock/gvisor/fork-memory-1"
	sMemFork4   = "paddock/gvisor/fork-memory-4"
	gvHoldMiB   = 100
	gvHoldShell = `nohup python3 -c '
import time
big = [7] * (100 * 1024 * 1024 // 8)
while True:
    time.sleep(1)
' >/dev/null 2>&1 & sleep 1`
)

var memoryScenarios = []scenario{
	{sGVOneShot, "create → exec /bin/true → delete with runtime gvisor, cold (ratio to peer/runsc when measured)"},
	{sGVExec, "exec /bin/true in an existing gVisor sandbox, one client (ratio to paddock/exec when measured)"},
	{sHibernate, "POST hibernate of a gVisor sandbox whose Python process holds a 100 MiB list (checkpoint to disk, instance destroyed)"},
	{sWake, "POST resume of that hibernated sandbox (restore from the image, agent re-dialled)"},
	{sMemFork1, "POST fork {count: 1, memory: true} of that sandbox, running (the fork deleted after)"},
	{sMemFork4, "POST fork {count: 4, memory: true} of that sandbox (the forks deleted after)"},
}

func init() { scenarios = append(scenarios, memoryScenarios...) }

var memoryNames = []string{sGVOneShot, sGVExec, sHibernate, sWake, sMemFork1, sMemFork4}

func (r *runner) gvSpec() client.Spec {
	s := r.spec()
	s.Runtime = "gvisor"
	return s
}

// memory runs the gVisor scenarios; without gVisor on the server they are
// unavailable with the server's reason.
func (r *runner) memory(ctx context.Context, st *Stack) {
	probe, err := r.create(ctx, st, r.gvSpec())
	if err != nil {
		for _, n := range memoryNames {
			r.set(r.result(n).without(StatusUnavailable, "gVisor: "+err.Error()))
		}
		return
	}
	// Exec round trip.
	if r.sel[sGVExec] {
		res := r.result(sGVExec)
		r.prog.start(sGVExec, r.o.Runs)
		samples, busy, errs, last := r.sequential(ctx, r.o.Runs, func(ctx context.Context) error { return execTrue(ctx, st.Client, probe.ID) })
		out := r.summarize(ctx, res, samples, busy, errs, last)
		if base, ok := r.results[sExec]; ok && base.P50ms != nil && out.P50ms != nil && *base.P50ms > 0 {
			out.extra("ratio_to_native_exec", *out.P50ms / *base.P50ms)
		}
		r.set(out)
	}
	_ = r.remove(ctx, st, probe.ID)
	r.settle(ctx, st)
	if r.sel[sGVOneShot] {
		res := r.result(sGVOneShot)
		r.prog.start(sGVOneShot, r.o.Runs)
		samples, busy, errs, last := r.sequential(ctx, r.o.Runs, func(ctx context.Context) error {
			sb, err := r.create(ctx, st, r.gvSpec())
			if err != nil {
				return err
			}
			err = execTrue(ctx, st.Client, sb.ID)
			if derr := r.remove(ctx, st, sb.ID); err == nil {
				err = derr
			}
			return err
		})
		out := r.summarize(ctx, res, samples, busy, errs, last)
		if peer, ok := r.results[sRunsc]; ok && peer.P50ms != nil && out.P50ms != nil && *peer.P50ms > 0 {
			out.extra("ratio_to_runsc", *out.P50ms / *peer.P50ms)
		}
		r.set(out)
		r.settle(ctx, st)
	}
	if !r.sel[sHibernate] && !r.sel[sWake] && !r.sel[sMemFork1] && !r.sel[sMemFork4] {
		return
	}
	spec := r.gvSpec()
	spec.MemoryMB = 1024
	big, err := r.create(ctx, st, spec)
	if err == nil {
		_, err = st.Client.Exec(ctx, big.ID, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", gvHoldShell}})
	}
	if err != nil {
		for _, n := range []string{sHibernate, sWake, sMemFork1, sMemFork4} {
			r.set(r.result(n).without(StatusFailed, "prepare the 100 MiB sandbox: "+err.Error()))
		}
		return
	}
	defer func() { _ = r.remove(ctx, st, big.ID) }()
	n := r.heavyRuns()
	var hs, ws []time.Duration
	var herrs, werrs int
	var hlast, wlast error
	r.prog.start(sHibernate, n)
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t := time.Now()
		if _, err := st.Client.Hibernate(ctx, big.ID); err != nil {
			herrs, hlast = herrs+1, err
		} else {
			hs = append(hs, time.Since(t))
		}
		t = time.Now()
		if _, err := st.Client.Resume(ctx, big.ID); err != nil {
			werrs, wlast = werrs+1, err
		} else {
			ws = append(ws, time.Since(t))
		}
		r.prog.step(1)
	}
	busy := time.Since(start)
	h := r.summarize(ctx, r.result(sHibernate), hs, busy, herrs, hlast)
	h.extra("held_mib", gvHoldMiB)
	r.set(h)
	r.set(r.summarize(ctx, r.result(sWake), ws, busy, werrs, wlast))
	for _, f := range []struct {
		name  string
		count int
	}{{sMemFork1, 1}, {sMemFork4, 4}} {
		if !r.sel[f.name] {
			continue
		}
		var samples []time.Duration
		var errs int
		var last error
		r.prog.start(f.name, n)
		start := time.Now()
		for i := 0; i < n && ctx.Err() == nil; i++ {
			t := time.Now()
			forks, err := st.Client.ForkMemory(ctx, big.ID, f.count)
			if err != nil {
				errs, last = errs+1, err
			} else {
				samples = append(samples, time.Since(t))
			}
			for _, fk := range forks {
				r.track.add(fk.ID)
				_ = r.remove(ctx, st, fk.ID)
			}
			r.settle(ctx, st)
			r.prog.step(1)
		}
		r.set(r.summarize(ctx, r.result(f.name), samples, time.Since(start), errs, last))
	}
}
