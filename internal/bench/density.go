package bench

import (
	"context"
	"math/rand/v2"
	"time"
)

const mib = 1 << 20

// densityIdle is how long the sandboxes sit idle before memory is read:
// long enough for the guests' start-up allocations to settle.
const densityIdle = 2 * time.Second

// density keeps N idle sandboxes alive: how long reaching N takes, what
// each costs in host memory (two ways: the host's MemAvailable drop, and
// the sum of the sandboxes' own cgroup memory), the server's RSS, and
// whether the server still answers promptly (health check, exec).
func (r *runner) density(ctx context.Context, st *Stack) {
	n, c := r.o.Density, r.o.Concurrency
	res := r.result(sDensity)
	res.Concurrency = c
	memBefore, rssBefore := MemAvailable(), RSS(st.PID)
	ids := make([]string, n)
	r.prog.start(sDensity, n)
	samples, wall, errs, last := r.parallel(ctx, c, n, func(ctx context.Context, i int) error {
		spec := r.spec()
		sb, err := r.create(ctx, st, spec)
		if err != nil {
			return err
		}
		ids[i] = sb.ID
		return nil
	})
	var alive []string
	for _, id := range ids {
		if id != "" {
			alive = append(alive, id)
		}
	}
	defer r.deleteAll(ctx, st, alive)
	out := r.summarize(ctx, res, samples, wall, errs, last)
	if out.Status != StatusOK {
		r.set(out)
		r.set(r.result(sDensityExec).without(StatusFailed, "no sandboxes were created"))
		r.set(r.result(sDensityHC).without(StatusFailed, "no sandboxes were created"))
		return
	}
	out.note("p50..max are the create latencies while ramping up; ops/s is creates per second")
	out.extra("alive", float64(len(alive)))
	out.extra("time_to_n_s", wall.Seconds())
	sleep(ctx, densityIdle)
	memAfter, rssAfter := MemAvailable(), RSS(st.PID)
	k := float64(len(alive))
	if memBefore > 0 && memAfter > 0 {
		out.extra("host_memavailable_drop_per_sandbox_mib", float64(memBefore-memAfter)/k/mib)
	}
	var cgSum int64
	var cgN int
	for _, id := range alive {
		if ctx.Err() != nil {
			break
		}
		stats, err := st.Client.Stats(ctx, id)
		if err != nil {
			continue
		}
		if v := stats.MemoryBytes; v >= 0 {
			cgSum += v
			cgN++
		}
	}
	if cgN > 0 {
		out.extra("cgroup_memory_per_sandbox_mib", float64(cgSum)/float64(cgN)/mib)
		out.extra("cgroup_memory_total_mib", float64(cgSum)/mib)
	}
	if rssBefore > 0 && rssAfter > 0 {
		out.extra("server_rss_before_mib", float64(rssBefore)/mib)
		out.extra("server_rss_at_n_mib", float64(rssAfter)/mib)
		out.extra("server_rss_per_sandbox_kib", float64(rssAfter-rssBefore)/k/1024)
		if st.Embedded {
			out.note("embedded: the server's RSS is this process's, bench client included")
		}
	} else {
		out.note("server RSS unknown (the server is not a process on this host that the bench can see)")
	}
	out.note("the host's MemAvailable also moves with everything else running on the machine")
	r.set(out)

	// The server under density.
	runs := r.o.Runs
	hres := r.result(sDensityHC)
	r.prog.start(sDensityHC, runs)
	hs, hbusy, herrs, hlast := r.sequential(ctx, runs, func(ctx context.Context) error {
		_, err := healthVersion(ctx, st.Client)
		return err
	})
	hres = r.summarize(ctx, hres, hs, hbusy, herrs, hlast)
	if hres.Status == StatusOK {
		hres.extra("alive", k)
	}
	r.set(hres)

	eres := r.result(sDensityExec)
	r.prog.start(sDensityExec, runs)
	es, ebusy, eerrs, elast := r.sequential(ctx, runs, func(ctx context.Context) error {
		return execTrue(ctx, st.Client, alive[rand.IntN(len(alive))])
	})
	eres = r.summarize(ctx, eres, es, ebusy, eerrs, elast)
	if eres.Status == StatusOK {
		eres.extra("alive", k)
	}
	if base, ok := r.results[sExec]; ok && base.P50ms != nil && eres.P50ms != nil {
		eres.extra("minus_idle_server_exec_p50_ms", *eres.P50ms-*base.P50ms)
	}
	r.set(eres)
}

// deleteAll deletes ids with C deleters, even after ctx is cancelled.
func (r *runner) deleteAll(ctx context.Context, st *Stack, ids []string) {
	if len(ids) == 0 {
		return
	}
	dctx := context.WithoutCancel(ctx)
	r.prog.start("deleting", len(ids))
	start := time.Now()
	_, _, errs, last := r.parallel(dctx, r.o.Concurrency, len(ids), func(ctx context.Context, i int) error {
		return r.remove(ctx, st, ids[i])
	})
	if out, ok := r.results[sDensity]; ok && out.Status == StatusOK {
		out.extra("delete_per_s", float64(len(ids)-errs)/time.Since(start).Seconds())
		if errs > 0 {
			out.note("%d deletes failed (last: %v); cleanup retries them", errs, last)
		}
		r.set(out)
	}
}
