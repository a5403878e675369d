package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/client"
)

// warmPhase measures create→exec→delete claiming from a full warm pool,
// and the claim alone. Before each iteration it waits, untimed, for the
// pool to be full again, so that every timed create really is a claim.
// Iterations that were nevertheless not served from the pool are left out
// of the numbers and counted in a note.
func (r *runner) warmPhase(ctx context.Context, st *Stack) {
	if r.sel[sWarm] || r.sel[sWarmClaim] {
		r.warmRun(ctx, st, sWarm, sWarmClaim, r.spec())
	}
	if r.sel[sWarmNet] && ctx.Err() == nil {
		if why := r.networkUnavailable(ctx, st); why != "" {
			r.set(r.result(sWarmNet).without(StatusUnavailable, why))
			return
		}
		spec := r.spec()
		spec.Network = netSpec()
		r.warmRun(ctx, st, sWarmNet, "", spec)
	}
}

// warmRun is the one-shot of spec claiming from the pool, reported as
// fullName, and its create call alone as claimName ("": not reported).
func (r *runner) warmRun(ctx context.Context, st *Stack, fullName, claimName string, spec client.Spec) {
	full := r.result(fullName)
	claim := r.result(cmp.Or(claimName, fullName))
	var whole, claims []time.Duration
	var errs, misses, waitTimeouts int
	var last error
	wait := 100 * time.Millisecond // a server without Live: adaptive settle
	iter := func(ctx context.Context) (bool, error) {
		t0 := time.Now()
		sb, err := r.create(ctx, st, spec)
		if err != nil {
			return false, fmt.Errorf("create: %w", err)
		}
		t1 := time.Now()
		eerr := execTrue(ctx, st.Client, sb.ID)
		derr := r.remove(ctx, st, sb.ID)
		t2 := time.Now()
		if err := errors.Join(eerr, derr); err != nil {
			return false, err
		}
		if !sb.FromPool {
			return false, nil
		}
		whole = append(whole, t2.Sub(t0))
		claims = append(claims, t1.Sub(t0))
		return true, nil
	}
	if err := r.waitPool(ctx, st, wait); err != nil {
		r.set(full.without(StatusFailed, err.Error()))
		if claimName != "" {
			r.set(claim.without(StatusFailed, err.Error()))
		}
		return
	}
	if _, err := iter(ctx); err != nil { // warm-up, untimed
		r.set(full.without(StatusFailed, "warm-up: "+err.Error()))
		if claimName != "" {
			r.set(claim.without(StatusFailed, "warm-up: "+err.Error()))
		}
		return
	}
	whole, claims = nil, nil
	r.prog.start(fullName, r.o.Runs)
	for i := 0; i < r.o.Runs && ctx.Err() == nil; i++ {
		if err := r.waitPool(ctx, st, wait); err != nil {
			waitTimeouts++
		}
		hit, err := iter(ctx)
		switch {
		case err != nil:
			errs, last = errs+1, err
		case !hit:
			misses++
			if st.Live == nil && wait < 2*time.Second {
				wait *= 2
			}
		}
		r.prog.step(1)
		if len(whole) == 0 && misses >= warmGiveUp {
			break // a server without a pool: no point waiting longer
		}
	}
	full = r.summarize(ctx, full, whole, Sum(whole), errs, last)
	claim = r.summarize(ctx, claim, claims, Sum(claims), errs, last)
	for _, res := range []*Result{&full, &claim} {
		if res.Status != StatusOK {
			continue
		}
		if st.Pool > 0 && st.Live != nil {
			res.note("warm pool of %d, refilled (waited for, untimed, with %s of grace for the newest member's start) before every iteration; the refill after each claim runs during the iteration's exec and delete, as it would for a user", st.Pool, r.poolGrace().Round(time.Millisecond))
		} else {
			res.note("the server's pool size is unknown here: waited %s (doubling after a miss) between iterations", wait)
		}
		if misses > 0 {
			res.note("%d iterations were not served from the pool and are not in the numbers", misses)
		}
		if waitTimeouts > 0 {
			res.note("the pool was not full within the wait %d times", waitTimeouts)
		}
	}
	if len(whole) == 0 && errs == 0 && misses > 0 {
		why := fmt.Sprintf("no create was served from the warm pool in %d tries (is the server's --pool 0?)", misses)
		full, claim = full.without(StatusUnavailable, why), claim.without(StatusUnavailable, why)
	}
	r.set(full)
	if claimName != "" {
		r.set(claim)
	}
}

// warmGiveUp is how many misses in a row, with no hit yet, end the warm
// scenario (a server whose --pool is 0).
const warmGiveUp = 5

// waitPool waits until the pool is full: st.Pool live sandboxes that the
// bench was never handed, each alive for at least the grace time (a
// sandbox's resources appear when its start begins; the grace, longer
// than a whole create takes, covers the start). Without Live it sleeps d.
func (r *runner) waitPool(ctx context.Context, st *Stack, d time.Duration) error {
	if st.Live == nil || st.Pool <= 0 {
		sleep(ctx, d)
		return ctx.Err()
	}
	grace := r.poolGrace()
	deadline := time.Now().Add(30 * time.Second)
	for ctx.Err() == nil {
		ids, err := st.Live()
		if err != nil {
			return fmt.Errorf("cannot observe the warm pool: %w", err)
		}
		now := time.Now()
		ready := 0
		for _, id := range ids {
			if r.track.wasSeen(id) {
				continue
			}
			first, ok := r.firstSeen[id]
			if !ok {
				r.firstSeen[id] = now
				continue
			}
			if now.Sub(first) >= grace {
				ready++
			}
		}
		if ready >= st.Pool {
			return nil
		}
		if now.After(deadline) {
			return fmt.Errorf("the warm pool did not fill (%d of %d) within 30s", ready, st.Pool)
		}
		sleep(ctx, time.Millisecond)
	}
	return ctx.Err()
}

// poolGrace is 1.5 times the slowest cold create of this run (at least
// 20 ms), or 200 ms when no cold create was measured.
func (r *runner) poolGrace() time.Duration {
	if res, ok := r.results[sOneShot]; ok {
		if p99, ok := res.Extra["create_p99_ms"]; ok && p99 > 0 {
			return max(20*time.Millisecond, time.Duration(p99*1.5*float64(time.Millisecond)))
		}
	}
	return 200 * time.Millisecond
}
