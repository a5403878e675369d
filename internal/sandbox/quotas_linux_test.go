//go:build linux

package sandbox_test

import (
	"context"
	"testing"

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
