//go:build linux

package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

// max_paused bounds the tenant's paused sandboxes; max_forks bounds one
// fork call, and every fork counts against max_sandboxes.
func TestPausedAndForkQuotas(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	if _, err := e.Quotas.Tenants().Create(ctx, "q", tenant.Quotas{MaxPaused: 1, MaxForks: 2, MaxSandboxes: 3}); err != nil {
		t.Fatal(err)
	}
	sc := sandbox.Scope{Tenant: "q", Actor: "q", Rights: rights.All}
	a, err := e.Manager.Create(ctx, sc, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Manager.Create(ctx, sc, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.Pause(ctx, sc, a.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.Manager.Pause(ctx, sc, b.ID)
	wantCode(t, "a second paused sandbox", err, errs.CodeLimit)
	if got, _ := e.Manager.Get(ctx, sc, b.ID); got.State != sandbox.StateRunning {
		t.Fatalf("refused pause left %s", got.State)
	}
	if _, err := e.Manager.Pause(ctx, sc, a.ID); err != nil {
		t.Fatalf("pausing the paused one again (idempotent): %v", err)
	}
	if _, err := e.Manager.Resume(ctx, sc, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.Pause(ctx, sc, b.ID); err != nil {
		t.Fatalf("after a resume: %v", err)
	}
	if _, err := e.Manager.Resume(ctx, sc, b.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.Manager.Fork(ctx, sc, a.ID, 3)
	wantCode(t, "fork over max_forks", err, errs.CodeLimit)
	// Two alive, max_sandboxes 3: a fork of 2 would make 4, and is all or
	// nothing.
	_, err = e.Manager.Fork(ctx, sc, a.ID, 2)
	wantCode(t, "forks over max_sandboxes", err, errs.CodeLimit)
	if list, _ := e.Manager.List(ctx, sc, nil); len(list) != 2 {
		t.Fatalf("a refused fork left %d sandboxes", len(list))
	}
	if _, err := e.Manager.Fork(ctx, sc, a.ID, 1); err != nil {
		t.Fatal(err)
	}
}

// An idle pause over max_paused is not dropped: the sandbox stays awake
// and asks again one idle period later, so it sleeps once a slot frees.
func TestIdlePauseRetriedOverMaxPaused(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	if _, err := e.Quotas.Tenants().Create(ctx, "iq", tenant.Quotas{MaxPaused: 1}); err != nil {
		t.Fatal(err)
	}
	sc := sandbox.Scope{Tenant: "iq", Actor: "iq", Rights: rights.All}
	holder, err := e.Manager.Create(ctx, sc, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.Pause(ctx, sc, holder.ID); err != nil {
		t.Fatal(err)
	}
	idle, err := e.Manager.Create(ctx, sc, sandbox.Spec{IdlePauseAfterS: 1})
	if err != nil {
		t.Fatal(err)
	}
	refused := func() int {
		n := 0
		for _, r := range e.AuditRecords(audit.Query{Sandbox: idle.ID, Action: "sandbox.pause"}) {
			if r.Phase == "result" && r.Code == string(errs.CodeLimit) {
				n++
			}
		}
		return n
	}
	// Two refusals: the first idle pause, and a retry of it.
	deadline := time.Now().Add(20 * time.Second)
	for refused() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("an idle sandbox over max_paused was refused %d times in 20 s, want a retry", refused())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got, _ := e.Manager.Get(ctx, sc, idle.ID); got.State != sandbox.StateRunning {
		t.Fatalf("a refused idle pause left %s", got.State)
	}
	// A slot frees: the next retry pauses it.
	if _, err := e.Manager.Resume(ctx, sc, holder.ID); err != nil {
		t.Fatal(err)
	}
	waitStateIn(t, e, sc, idle.ID, sandbox.StatePaused, 20*time.Second)
	if got, _ := e.Manager.Get(ctx, sc, holder.ID); got.State != sandbox.StateRunning {
		t.Fatalf("the resumed holder is %s (it has no idle policy)", got.State)
	}
}

func waitStateIn(t *testing.T, e *testenv.Env, sc sandbox.Scope, id string, want sandbox.State, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got, err := e.Manager.Get(context.Background(), sc, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s is %s after %v, want %s", id, got.State, limit, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
