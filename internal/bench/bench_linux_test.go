package bench_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/bench"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// envProvider opens testenv stacks: real sandboxes behind a real API.
type envProvider struct {
	t     *testing.T
	opens int
	envs  []*testenv.Env
}

func (p *envProvider) Open(ctx context.Context, pool int) (*bench.Stack, error) {
	p.opens++
	e := testenv.New(p.t, testenv.Options{PoolSize: pool, MaxSandboxes: 64})
	p.envs = append(p.envs, e)
	return &bench.Stack{Client: e.Client, Embedded: true, Pool: pool, PID: os.Getpid(), Live: e.Cgroups.List,
		CgroupVersion: "test", LayerStore: "test", Close: func(context.Context) error { e.Close(); return nil }}, nil
}

// leftovers is what the bench left alive in e (its sandboxes, and any
// resources still held).
func leftovers(t *testing.T, e *testenv.Env) []string {
	t.Helper()
	var out []string
	list, _ := e.Manager.List(context.Background(), e.Scope, nil)
	for _, sb := range list {
		out = append(out, "sandbox "+sb.ID)
	}
	return out
}

// TestQuickRun runs every scenario with tiny counts and checks that each
// reports numbers or an explicit reason, and that nothing is left behind.
func TestQuickRun(t *testing.T) {
	testenv.RequireRoot(t)
	p := &envProvider{t: t}
	// Each stack is checked for leftovers just before it closes.
	wrapped := closeChecker{p: p, t: t}
	rep, err := bench.Run(context.Background(), bench.Options{Provider: wrapped, Runs: 3, Concurrency: 2, Density: 3, Version: "test"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if p.opens != 2 {
		t.Errorf("opened %d stacks, want 2 (cold, warm)", p.opens)
	}
	got := map[string]bench.Result{}
	for _, r := range rep.Scenarios {
		got[r.Name] = r
	}
	for _, name := range bench.Names() {
		r, ok := got[name]
		if !ok {
			t.Errorf("%s: not reported", name)
			continue
		}
		switch r.Status {
		case bench.StatusOK:
			if r.P50ms == nil || r.P90ms == nil || r.P99ms == nil || r.MaxMs == nil || r.OpsPerS == nil || r.Runs < 1 {
				t.Errorf("%s: ok without numbers: %+v", name, r)
			}
			if *r.P50ms > *r.P90ms || *r.P90ms > *r.P99ms || *r.P99ms > *r.MaxMs {
				t.Errorf("%s: percentiles out of order: %v %v %v %v", name, *r.P50ms, *r.P90ms, *r.P99ms, *r.MaxMs)
			}
		case bench.StatusUnavailable, bench.StatusMissing:
			if r.Reason == "" || r.P50ms != nil {
				t.Errorf("%s: %s without a reason, or with numbers: %+v", name, r.Status, r)
			}
		default:
			if _, err := os.Stat("/usr/lib/chromium/chromium"); err != nil && strings.HasPrefix(name, "paddock/browser/") && r.Reason != "" {
				break // no Chromium on this host: a browser that cannot start, with the reason
			}
			t.Errorf("%s: %s: %s", name, r.Status, r.Reason)
		}
		t.Logf("%-36s %-11s %s", name, r.Status, r.Reason)
	}
	// What is available in this stack (serve's, but for the sandbox
	// network) must have numbers: /mcp included.
	for _, name := range []string{"floor/fork-exec", "paddock/create-exec-delete", "paddock/exec", "paddock/exec/concurrent",
		"paddock/create/concurrent", "paddock/files/upload", "paddock/files/download", "paddock/mcp/exec", "paddock/density",
		"paddock/density/exec", "paddock/density/health", "paddock/create-exec-delete/warm", "paddock/create/warm-claim"} {
		if got[name].Status != bench.StatusOK {
			t.Errorf("%s: %s (%s), want numbers", name, got[name].Status, got[name].Reason)
		}
	}
	// The browser service runs; without Chromium on the host its browsers
	// cannot start, and the bench says why.
	_, noChromium := os.Stat("/usr/lib/chromium/chromium")
	for _, name := range []string{"paddock/browser/navigate", "paddock/browser/screenshot"} {
		if r := got[name]; r.Status != bench.StatusOK && (noChromium == nil || r.Reason == "") {
			t.Errorf("%s: %s (%s), want numbers", name, r.Status, r.Reason)
		}
	}
	// No sandbox network in testenv: the network scenarios say so.
	for _, name := range []string{"paddock/create-exec-delete/network", "paddock/egress"} {
		if r := got[name]; r.Status != bench.StatusUnavailable || r.Reason == "" {
			t.Errorf("%s: %s (%s), want unavailable with a reason", name, r.Status, r.Reason)
		}
	}
	d := got["paddock/density"]
	if d.Extra["alive"] != 3 || d.Extra["cgroup_memory_per_sandbox_mib"] <= 0 {
		t.Errorf("density extras = %v", d.Extra)
	}
	if w := got["paddock/create-exec-delete/warm"]; strings.Contains(strings.Join(w.Notes, " "), "not served from the pool") {
		t.Errorf("warm iterations missed the pool: %v", w.Notes)
	}
	for _, peer := range []string{"peer/bwrap", "peer/runc", "peer/runsc"} {
		if r := got[peer]; r.Status == bench.StatusOK && r.RatioToPaddock == nil {
			t.Errorf("%s: no ratio to Paddock", peer)
		}
	}
}

// closeChecker checks, as each stack closes, that the bench deleted every
// sandbox it made and that their teardown finished.
type closeChecker struct {
	p *envProvider
	t *testing.T
}

func (c closeChecker) Open(ctx context.Context, pool int) (*bench.Stack, error) {
	st, err := c.p.Open(ctx, pool)
	if err != nil {
		return nil, err
	}
	e := c.p.envs[len(c.p.envs)-1]
	inner := st.Close
	st.Close = func(ctx context.Context) error {
		if l := leftovers(c.t, e); len(l) > 0 {
			c.t.Errorf("stack (pool %d) closes with %v still alive", pool, l)
		}
		ids, err := e.Cgroups.List()
		if err != nil {
			c.t.Error(err)
		}
		if len(ids) > pool { // only the warm pool may remain
			c.t.Errorf("stack (pool %d) closes with %d groups: %v", pool, len(ids), ids)
		}
		return inner(ctx)
	}
	return st, nil
}

// TestInterruptCleansUp cancels a density run midway, as Ctrl-C does, and
// checks that every sandbox it made is gone.
func TestInterruptCleansUp(t *testing.T) {
	testenv.RequireRoot(t)
	p := &envProvider{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ctx.Err() == nil {
			if len(p.envs) > 0 {
				if list, _ := p.envs[0].Manager.List(context.Background(), p.envs[0].Scope, nil); len(list) >= 3 {
					cancel()
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	checked := false
	prov := closeHook{p: p, before: func(e *testenv.Env) {
		checked = true
		if l := leftovers(t, e); len(l) > 0 {
			t.Errorf("interrupted run left %v", l)
		}
		if ids, _ := e.Cgroups.List(); len(ids) > 0 {
			t.Errorf("interrupted run left groups %v", ids)
		}
	}}
	rep, err := bench.Run(ctx, bench.Options{Provider: prov, Runs: 3, Concurrency: 2, Density: 40,
		Scenarios: []string{"paddock/density"}})
	<-watchDone
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want interrupted", err)
	}
	if !checked {
		t.Fatal("the stack was never closed")
	}
	if rep == nil || len(rep.Scenarios) == 0 {
		t.Fatalf("no partial report: %+v", rep)
	}
	for _, r := range rep.Scenarios {
		if r.Status == bench.StatusOK {
			continue
		}
		if r.Reason == "" {
			t.Errorf("%s: %s without a reason", r.Name, r.Status)
		}
	}
}

type closeHook struct {
	p      *envProvider
	before func(*testenv.Env)
}

func (c closeHook) Open(ctx context.Context, pool int) (*bench.Stack, error) {
	st, err := c.p.Open(ctx, pool)
	if err != nil {
		return nil, err
	}
	e := c.p.envs[len(c.p.envs)-1]
	inner := st.Close
	st.Close = func(ctx context.Context) error {
		c.before(e)
		return inner(ctx)
	}
	return st, nil
}

// noNetProvider is a stack whose networking was turned off on purpose.
type noNetProvider struct{ p *envProvider }

func (n noNetProvider) Open(ctx context.Context, pool int) (*bench.Stack, error) {
	st, err := n.p.Open(ctx, pool)
	if err == nil {
		st.NoNetwork = "networking off for this test"
	}
	return st, err
}

// TestNoNetworkReason: a stack that says why it has no network gets that
// reason on the network scenarios, and the peers' baseline still runs.
func TestNoNetworkReason(t *testing.T) {
	testenv.RequireRoot(t)
	rep, err := bench.Run(context.Background(), bench.Options{Provider: noNetProvider{&envProvider{t: t}}, Runs: 2,
		Scenarios: []string{"paddock/create-exec-delete/network", "paddock/egress"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bench.Result{}
	for _, r := range rep.Scenarios {
		got[r.Name] = r
	}
	for _, n := range []string{"paddock/create-exec-delete/network", "paddock/egress"} {
		if r := got[n]; r.Status != bench.StatusUnavailable || r.Reason != "networking off for this test" {
			t.Errorf("%s: %s %q", n, r.Status, r.Reason)
		}
	}
	if r := got["paddock/create-exec-delete"]; r.Status != bench.StatusOK {
		t.Errorf("baseline one-shot: %s %s", r.Status, r.Reason)
	}
	if len(rep.Target.Notes) != 1 {
		t.Errorf("target notes = %q", rep.Target.Notes)
	}
}

// TestE2BOverhead runs the E2B adapter's scenarios: exec and a 16 MiB
// write+read through E2B's envd protocol, each alternated with the same
// through REST in one sandbox, report numbers, REST's p50 and the
// difference. The bounds (0.5 ms, 5 %) are the issue's; on a shared,
// loaded test machine they are logged, not enforced.
func TestE2BOverhead(t *testing.T) {
	testenv.RequireRoot(t)
	rep, err := bench.Run(context.Background(), bench.Options{Provider: &envProvider{t: t}, Runs: 40, Scenarios: []string{"paddock/e2b"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bench.Result{}
	for _, r := range rep.Scenarios {
		got[r.Name] = r
	}
	for _, n := range []string{"paddock/e2b/exec", "paddock/e2b/files"} {
		r := got[n]
		if r.Status != bench.StatusOK || r.P50ms == nil {
			t.Fatalf("%s: %s %s", n, r.Status, r.Reason)
		}
		if _, ok := r.Extra["rest_p50_ms"]; !ok {
			t.Errorf("%s: no REST p50 beside it: %v", n, r.Extra)
		}
		t.Logf("%s: E2B p50 %.3f ms, REST p50 %.3f ms, added %.3f ms (%.1f %%), runs %d", n, *r.P50ms,
			r.Extra["rest_p50_ms"], r.Extra["overhead_p50_ms"], r.Extra["overhead_p50_pct"], r.Runs)
	}
}
