package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/client"
)

// shot is one contender of the one-shot comparison: Paddock's cold
// create→exec→delete, the plain fork/exec floor and the peers. They run
// interleaved in rounds, so that load from elsewhere on a shared machine
// falls on all of them alike rather than on whichever ran last.
type shot struct {
	res     Result // pre-set to a final status when the shot cannot run
	ready   bool
	run     func(context.Context) error
	after   func(context.Context) // untimed, after each batch (teardown)
	close   func()
	samples []time.Duration
	errors  int
	lastErr error
	// phases of Paddock's one-shot (create, exec, delete).
	phases map[string][]time.Duration
	order  []string
	pooled int // Paddock creates served from a warm pool
}

func (s *shot) phase(name string, d time.Duration) {
	if s.phases == nil {
		s.phases = map[string][]time.Duration{}
	}
	if _, ok := s.phases[name]; !ok {
		s.order = append(s.order, name)
	}
	s.phases[name] = append(s.phases[name], d)
}

// trueCmd is the command every one-shot and exec scenario runs.
var trueCmd = []string{"/bin/true"}

const oneShotRound = 10

func (r *runner) oneShots(ctx context.Context, st *Stack) {
	var shots []*shot
	for _, n := range []string{sFloor, sOneShot, sBwrap, sBwrapDev, sRunc, sRunsc} {
		if !r.sel[n] {
			continue
		}
		var s *shot
		switch n {
		case sFloor:
			s = floorShot()
		case sOneShot:
			s = r.paddockShot(st, sOneShot, r.spec())
		default:
			s = r.peerShot(ctx, n)
		}
		shots = append(shots, s)
	}
	r.runShots(ctx, fmt.Sprintf("one-shots (%d contenders)", len(shotNames(shots))), shots)
	for _, s := range shots {
		if s.close != nil {
			s.close()
		}
		if s.res.Name == sOneShot && s.res.Status == StatusOK && !st.Embedded {
			s.res.note("against a server, its --pool setting decides whether these creates were cold")
		}
		r.set(s.res)
	}
}

func shotNames(shots []*shot) []string {
	var n []string
	for _, s := range shots {
		if s.ready {
			n = append(n, s.res.Name)
		}
	}
	return n
}

// runShots warms each ready shot up once (untimed; a failure there is
// the shot's reason), then runs Runs timed iterations of each in rounds
// of oneShotRound.
func (r *runner) runShots(ctx context.Context, label string, shots []*shot) {
	var active []*shot
	for _, s := range shots {
		if !s.ready {
			continue
		}
		if err := s.run(ctx); err != nil {
			s.res = s.res.without(StatusFailed, "first (warm-up) run failed: "+err.Error())
			s.ready = false
			continue
		}
		if s.after != nil {
			s.after(ctx)
		}
		s.phases, s.order, s.pooled = nil, nil, 0
		active = append(active, s)
	}
	r.prog.start(label, r.o.Runs*len(active))
	for done := 0; done < r.o.Runs && ctx.Err() == nil; {
		n := min(oneShotRound, r.o.Runs-done)
		for _, s := range active {
			for i := 0; i < n && ctx.Err() == nil; i++ {
				t := time.Now()
				err := s.run(ctx)
				d := time.Since(t)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					s.errors++
					s.lastErr = err
				} else {
					s.samples = append(s.samples, d)
				}
				r.prog.step(1)
			}
			if s.after != nil {
				s.after(ctx)
			}
		}
		done += n
	}
	for _, s := range active {
		s.finish(ctx)
	}
}

func (s *shot) finish(ctx context.Context) {
	if len(s.samples) == 0 {
		reason := "no successful iteration"
		if s.lastErr != nil {
			reason += ": " + s.lastErr.Error()
		}
		if ctx.Err() != nil {
			reason = "interrupted"
		}
		s.res = s.res.without(StatusFailed, reason)
		return
	}
	errs := s.errors
	notes := s.res.Notes
	s.res = s.res.withSummary(Summarize(s.samples, Sum(s.samples)))
	s.res.Notes = notes
	s.res.Errors = errs
	if s.lastErr != nil {
		s.res.note("last error: %v", s.lastErr)
	}
	for _, p := range s.order {
		sum := Summarize(s.phases[p], 0)
		s.res.extra(p+"_p50_ms", ms(sum.P50))
		s.res.extra(p+"_p99_ms", ms(sum.P99))
	}
}

// paddockShot is create → exec /bin/true → delete through the API.
func (r *runner) paddockShot(st *Stack, name string, spec client.Spec) *shot {
	s := &shot{res: r.result(name), ready: true}
	// Deletes return before the kernel's teardown ends; let it end before
	// the next contender's batch, so that it is not charged for it.
	s.after = func(ctx context.Context) { r.settle(ctx, st) }
	s.run = func(ctx context.Context) error {
		t0 := time.Now()
		sb, err := r.create(ctx, st, spec)
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		t1 := time.Now()
		res, err := st.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: trueCmd})
		t2 := time.Now()
		derr := r.remove(ctx, st, sb.ID)
		t3 := time.Now()
		switch {
		case err != nil:
			return fmt.Errorf("exec: %w", err)
		case res.ExitCode != 0:
			return fmt.Errorf("exec: /bin/true exited %d: %s", res.ExitCode, clip(res.Stderr, 200))
		case derr != nil:
			return fmt.Errorf("delete: %w", derr)
		}
		if sb.FromPool {
			s.pooled++
		}
		s.phase("create", t1.Sub(t0))
		s.phase("exec", t2.Sub(t1))
		s.phase("delete", t3.Sub(t2))
		return nil
	}
	s.close = func() {
		if s.pooled > 0 {
			s.res.note("%d of the timed creates were served from the server's warm pool", s.pooled)
		}
	}
	return s
}
