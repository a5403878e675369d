package bench

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/client"
)

// pausedWatch is how long the paused-CPU scenario watches a paused sandbox.
const pausedWatch = 10 * time.Second

// pause measures POST pause and POST resume of one sandbox (each a cgroup
// freeze or thaw plus the API and the state store), then what a paused
// sandbox costs: its CPU over pausedWatch and its memory before and after.
func (r *runner) pause(ctx context.Context, st *Stack) {
	p, s, c := r.result(sPause), r.result(sResume), r.result(sPausedCPU)
	if why := r.caps.lacks("/pause", "pause and resume"); why != "" {
		for _, res := range []Result{p, s, c} {
			r.set(res.without(StatusUnavailable, why))
		}
		return
	}
	fail := func(why string) {
		for _, res := range []Result{p, s, c} {
			r.set(res.without(StatusFailed, why))
		}
	}
	sb, err := r.create(ctx, st, r.spec())
	if err != nil {
		fail("create: " + err.Error())
		return
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	n := r.o.Runs
	r.prog.start(sPause, n)
	var ps, rs []time.Duration
	var perrs, rerrs int
	var plast, rlast error
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t := time.Now()
		if _, err := st.Client.Pause(ctx, sb.ID); err != nil {
			perrs, plast = perrs+1, err
		} else {
			ps = append(ps, time.Since(t))
		}
		t = time.Now()
		if _, err := st.Client.Resume(ctx, sb.ID); err != nil {
			rerrs, rlast = rerrs+1, err
		} else {
			rs = append(rs, time.Since(t))
		}
		r.prog.step(1)
	}
	busy := time.Since(start)
	r.set(r.summarize(ctx, p, ps, busy, perrs, plast))
	r.set(r.summarize(ctx, s, rs, busy, rerrs, rlast))

	// A paused sandbox's cost, with a busy loop running inside it.
	if _, err := st.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", "nohup sh -c 'while :; do :; done' >/dev/null 2>&1 &"}}); err != nil {
		r.set(c.without(StatusFailed, "start the busy loop: "+err.Error()))
		return
	}
	time.Sleep(200 * time.Millisecond)
	before, err := st.Client.Stats(ctx, sb.ID)
	if err != nil {
		r.set(c.without(StatusFailed, "stats: "+err.Error()))
		return
	}
	if _, err := st.Client.Pause(ctx, sb.ID); err != nil {
		r.set(c.without(StatusFailed, "pause: "+err.Error()))
		return
	}
	at, err := st.Client.Stats(ctx, sb.ID)
	if err != nil {
		r.set(c.without(StatusFailed, "stats: "+err.Error()))
		return
	}
	r.prog.start(sPausedCPU, 1)
	select {
	case <-ctx.Done():
		return
	case <-time.After(pausedWatch):
	}
	r.prog.step(1)
	after, err := st.Client.Stats(ctx, sb.ID)
	if err != nil {
		r.set(c.without(StatusFailed, "stats: "+err.Error()))
		return
	}
	out := r.summarize(ctx, c, []time.Duration{after.CPUUsage - at.CPUUsage}, pausedWatch, 0, nil)
	out.extra("watched_s", pausedWatch.Seconds())
	out.extra("cpu_ms_while_paused", float64(after.CPUUsage-at.CPUUsage)/float64(time.Millisecond))
	out.extra("memory_mib_before", float64(before.MemoryBytes)/mib)
	out.extra("memory_mib_paused_end", float64(after.MemoryBytes)/mib)
	r.set(out)
}
