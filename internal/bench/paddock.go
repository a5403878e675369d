package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/client"
)

// coldPhase runs every scenario that needs no warm pool, heaviest last.
func (r *runner) coldPhase(ctx context.Context, st *Stack) {
	r.caps = probeCapabilities(ctx, st.Client)
	steps := []struct {
		names []string
		run   func(context.Context, *Stack)
	}{
		{[]string{sFloor, sOneShot, sBwrap, sBwrapDev, sRunc, sRunsc}, r.oneShots},
		{[]string{sNet}, r.network},
		{[]string{sExec}, r.execSerial},
		{[]string{sExecConc}, r.execConcurrent},
		{[]string{sExecAcross}, r.execAcross},
		{[]string{sMCP}, r.mcpExec},
		{[]string{sFilesUp, sFilesDown}, r.files},
		{[]string{sE2BExec, sE2BFiles}, r.e2b}, // e2b.go
		{[]string{sEgress}, r.egress},
		{[]string{sBrowserNav, sBrowserShot}, r.browser},
		{[]string{sCreateConc}, r.createConcurrent},
		{[]string{sDensity, sDensityExec, sDensityHC}, r.density},
		{[]string{sPause, sResume, sPausedCPU}, r.pause},                                            // pause.go
		{[]string{sCodeREST, sCodeE2B, sCodeFirst, sCodeIdle}, r.code},                              // code.go
		{[]string{sSnap100, sSnapCreate, sSnapTemplate, sFork10, sForkOne, sFork1Big}, r.snapshots}, // snapshot.go
		{memoryNames, r.memory},                                                                     // memory.go
	}
	for _, step := range steps {
		want := false
		for _, n := range step.names {
			want = want || r.sel[n]
		}
		if !want {
			continue
		}
		if ctx.Err() == nil {
			step.run(ctx, st)
			// Deleted sandboxes are torn down after delete answers;
			// let that finish before the next measurement.
			r.settle(ctx, st)
		}
		for _, n := range step.names {
			if r.sel[n] {
				r.interrupted(ctx, n)
			}
		}
	}
}

// execTrue runs /bin/true in sandbox id and checks it succeeded.
func execTrue(ctx context.Context, c *client.Client, id string) error {
	res, err := c.Exec(ctx, id, client.ExecRequest{Cmd: trueCmd})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("/bin/true exited %d: %s", res.ExitCode, clip(res.Stderr, 200))
	}
	return nil
}

// network is the one-shot with an allowlist network — only if the server
// really gives the sandbox an interface (a server may accept the mode in
// the spec before its backend can attach networks).
func (r *runner) network(ctx context.Context, st *Stack) {
	res := r.result(sNet)
	if why := r.networkUnavailable(ctx, st); why != "" {
		r.set(res.without(StatusUnavailable, why))
		return
	}
	spec := r.spec()
	spec.Network = netSpec()
	s := r.paddockShot(st, sNet, spec)
	r.runShots(ctx, sNet, []*shot{s})
	s.close()
	if base, ok := r.results[sOneShot]; ok && base.P50ms != nil && s.res.P50ms != nil {
		s.res.extra("minus_network_none_p50_ms", *s.res.P50ms-*base.P50ms)
	}
	r.set(s.res)
}

func netSpec() *client.Network {
	return &client.Network{Mode: "allowlist", Allow: []string{"example.com"}}
}

// netProbe memoizes whether network modes work, for network and egress.
type netProbe struct {
	once sync.Once
	why  string
}

func (r *runner) networkUnavailable(ctx context.Context, st *Stack) string {
	r.net.once.Do(func() { r.net.why = r.probeNetwork(ctx, st) })
	return r.net.why
}

func (r *runner) probeNetwork(ctx context.Context, st *Stack) string {
	if st.NoNetwork != "" {
		return st.NoNetwork
	}
	spec := r.spec()
	spec.Network = netSpec()
	sb, err := r.create(ctx, st, spec)
	if err != nil {
		return "network modes not supported by this server: creating with network.mode=allowlist failed: " + err.Error()
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	if sb.Spec.Network == nil || sb.Spec.Network.Mode != "allowlist" {
		return "network modes not supported by this server: it dropped network.mode=allowlist from the spec"
	}
	out, err := st.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"/bin/cat", "/proc/net/dev"}})
	if err != nil {
		return "cannot inspect the sandbox's interfaces: " + err.Error()
	}
	if NonLoopbackInterfaces(out.Stdout) == 0 {
		return "network modes not supported by this server: it accepted network.mode=allowlist but the sandbox has only loopback"
	}
	return ""
}

// NonLoopbackInterfaces counts the interfaces of a /proc/net/dev text
// other than lo.
func NonLoopbackInterfaces(procNetDev string) int {
	n := 0
	for _, line := range strings.Split(procNetDev, "\n") {
		name, _, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || name == "lo" || strings.Contains(name, "|") || strings.ContainsAny(name, " \t") {
			continue
		}
		n++
	}
	return n
}

// execSerial is the exec round trip from one client.
func (r *runner) execSerial(ctx context.Context, st *Stack) {
	res := r.result(sExec)
	sb, err := r.create(ctx, st, r.spec())
	if err != nil {
		r.set(res.without(StatusFailed, "create: "+err.Error()))
		return
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	for i := 0; i < 3; i++ { // warm-up, untimed
		if err := execTrue(ctx, st.Client, sb.ID); err != nil {
			r.set(res.without(StatusFailed, "warm-up exec: "+err.Error()))
			return
		}
	}
	r.prog.start(sExec, r.o.Runs)
	samples, busy, errs, last := r.sequential(ctx, r.o.Runs, func(ctx context.Context) error { return execTrue(ctx, st.Client, sb.ID) })
	r.set(r.summarize(ctx, res, samples, busy, errs, last))
	if fl, ok := r.results[sFloor]; ok && fl.P50ms != nil {
		out := r.results[sExec]
		if out.P50ms != nil {
			out.extra("minus_floor_p50_ms", *out.P50ms-*fl.P50ms)
			r.set(out)
		}
	}
}

// summarize turns samples into a result, or a failure if there are none.
func (r *runner) summarize(ctx context.Context, res Result, samples []time.Duration, busy time.Duration, errs int, last error) Result {
	if len(samples) == 0 && ctx.Err() != nil {
		return res.without(StatusFailed, "interrupted")
	}
	if len(samples) == 0 {
		reason := "no successful iteration"
		if last != nil {
			reason += ": " + last.Error()
		}
		return res.without(StatusFailed, reason)
	}
	notes := res.Notes
	out := res.withSummary(Summarize(samples, busy))
	out.Notes, out.Errors = notes, errs
	if last != nil {
		out.note("last error: %v", last)
	}
	return out
}

// sequential runs n calls of fn one after another (until ctx ends),
// stepping the progress line, and returns the successful calls'
// latencies, the wall time, the failures and the last error.
func (r *runner) sequential(ctx context.Context, n int, fn func(ctx context.Context) error) ([]time.Duration, time.Duration, int, error) {
	var samples []time.Duration
	var errs int
	var last error
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t := time.Now()
		if err := fn(ctx); err != nil {
			errs, last = errs+1, err
		} else {
			samples = append(samples, time.Since(t))
		}
		r.prog.step(1)
	}
	return samples, time.Since(start), errs, last
}

// parallel runs total calls of fn from c workers and returns the
// successful calls' latencies, the wall time, the failures and the last
// error.
func (r *runner) parallel(ctx context.Context, c, total int, fn func(ctx context.Context, i int) error) ([]time.Duration, time.Duration, int, error) {
	var (
		mu      sync.Mutex
		samples = make([]time.Duration, 0, total)
		errs    int
		last    error
		next    atomic.Int64
		wg      sync.WaitGroup
	)
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				t := time.Now()
				err := fn(ctx, i)
				d := time.Since(t)
				mu.Lock()
				if err != nil {
					errs, last = errs+1, err
				} else {
					samples = append(samples, d)
				}
				mu.Unlock()
				r.prog.step(1)
			}
		}()
	}
	wg.Wait()
	return samples, time.Since(start), errs, last
}

// execConcurrent is the exec round trip from C clients into one sandbox.
func (r *runner) execConcurrent(ctx context.Context, st *Stack) {
	res := r.result(sExecConc)
	res.Concurrency = r.o.Concurrency
	sb, err := r.create(ctx, st, r.spec())
	if err != nil {
		r.set(res.without(StatusFailed, "create: "+err.Error()))
		return
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	if err := execTrue(ctx, st.Client, sb.ID); err != nil {
		r.set(res.without(StatusFailed, "warm-up exec: "+err.Error()))
		return
	}
	total := max(r.o.Runs, r.o.Concurrency)
	r.prog.start(sExecConc, total)
	samples, wall, errs, last := r.parallel(ctx, r.o.Concurrency, total, func(ctx context.Context, _ int) error {
		return execTrue(ctx, st.Client, sb.ID)
	})
	res.note("one sandbox with the default limits (cpu %g): its CPU quota bounds the throughput", sb.Spec.CPU)
	r.set(r.summarize(ctx, res, samples, wall, errs, last))
}

// execAcross is the exec round trip from C clients, each into a sandbox
// of its own: the server's exec throughput (each exec audited: intent and
// result records), not one sandbox's CPU quota.
func (r *runner) execAcross(ctx context.Context, st *Stack) {
	res := r.result(sExecAcross)
	res.Concurrency = r.o.Concurrency
	ids := make([]string, 0, r.o.Concurrency)
	defer func() {
		for _, id := range ids {
			_ = r.remove(ctx, st, id)
		}
	}()
	for range r.o.Concurrency {
		sb, err := r.create(ctx, st, r.spec())
		if err != nil {
			r.set(res.without(StatusFailed, "create: "+err.Error()))
			return
		}
		ids = append(ids, sb.ID)
		if err := execTrue(ctx, st.Client, sb.ID); err != nil {
			r.set(res.without(StatusFailed, "warm-up exec: "+err.Error()))
			return
		}
	}
	total := max(r.o.Runs, r.o.Concurrency)
	r.prog.start(sExecAcross, total)
	samples, wall, errs, last := r.parallel(ctx, r.o.Concurrency, total, func(ctx context.Context, i int) error {
		return execTrue(ctx, st.Client, ids[i%len(ids)])
	})
	res.note("%d sandboxes, the execs spread over them in turn; every exec writes its audit records", len(ids))
	r.set(r.summarize(ctx, res, samples, wall, errs, last))
}

// createConcurrent measures sandboxes per second from C creators; the
// sandboxes are deleted afterwards (delete timed separately, in extra).
func (r *runner) createConcurrent(ctx context.Context, st *Stack) {
	res := r.result(sCreateConc)
	res.Concurrency = r.o.Concurrency
	total := max(r.o.Runs, r.o.Concurrency)
	ids := make([]string, total)
	r.prog.start(sCreateConc, total)
	samples, wall, errs, last := r.parallel(ctx, r.o.Concurrency, total, func(ctx context.Context, i int) error {
		sb, err := r.create(ctx, st, r.spec())
		if err != nil {
			return err
		}
		ids[i] = sb.ID
		return nil
	})
	out := r.summarize(ctx, res, samples, wall, errs, last)
	dstart := time.Now()
	var made []string
	for _, id := range ids {
		if id != "" {
			made = append(made, id)
		}
	}
	r.prog.start(sCreateConc+" (deleting)", len(made))
	_, _, derrs, dlast := r.parallel(context.WithoutCancel(ctx), r.o.Concurrency, len(made), func(ctx context.Context, i int) error {
		return r.remove(ctx, st, made[i])
	})
	if len(made) > 0 && out.Status == StatusOK {
		out.extra("delete_per_s", float64(len(made))/time.Since(dstart).Seconds())
		if derrs > 0 {
			out.note("%d deletes failed (last: %v)", derrs, dlast)
		}
	}
	r.set(out)
}
