//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Fork 10 (through the REST client, as users call it): each fork sees the
// source's files; writes of one are invisible to the others and to the
// source; deleting the source leaves the forks working.
func TestFork10(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	src := e.Create(sandbox.Spec{TimeoutS: 600, Env: map[string]string{"WHO": "src"}, Labels: map[string]string{"l": "v"}})
	mustSh(t, e, src.ID, "echo shared > /workspace/shared")
	forks, err := e.Client.Fork(ctx, src.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(forks) != 10 {
		t.Fatalf("%d forks", len(forks))
	}
	ids := map[string]bool{src.ID: true}
	for i, f := range forks {
		if ids[f.ID] {
			t.Fatalf("fork %d reuses id %s", i, f.ID)
		}
		ids[f.ID] = true
		if f.Spec.ForkOf != src.ID || f.Spec.Env["WHO"] != "src" || f.Spec.Labels["l"] != "v" {
			t.Fatalf("fork %d spec %+v", i, f.Spec)
		}
		mustSh(t, e, f.ID, fmt.Sprintf("echo %d > /workspace/mine", i))
	}
	// The source keeps running, and has not seen the forks' writes.
	if out := mustSh(t, e, src.ID, "cat /workspace/shared; test -e /workspace/mine && echo LEAK || echo none"); out != "shared\nnone\n" {
		t.Fatalf("source after fork: %q", out)
	}
	got, err := e.Client.Get(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range forks {
		want = append(want, f.ID)
	}
	slices.Sort(want)
	slices.Sort(got.Forks)
	if !slices.Equal(got.Forks, want) {
		t.Fatalf("inspect's forks %v, want %v", got.Forks, want)
	}
	// Each fork its own uid range: the host uid owning what it wrote.
	if err := e.Manager.Delete(ctx, e.Scope, src.ID); err != nil {
		t.Fatal(err)
	}
	for i, f := range forks {
		if out := mustSh(t, e, f.ID, "cat /workspace/shared /workspace/mine; echo $WHO"); out != fmt.Sprintf("shared\n%d\nsrc\n", i) {
			t.Fatalf("fork %d after the source's deletion: %q", i, out)
		}
	}
	// The capture is gone: it lived only for the fork.
	if list, _ := e.Manager.ListSnapshots(ctx, e.Scope); len(list) != 0 {
		t.Fatalf("snapshots after a fork: %+v", list)
	}
	// Audit: the fork (intent and result naming the forks), and each
	// fork's create names its parent; the snapshot verbs too.
	for _, q := range []struct{ action, phase, want string }{
		{"sandbox.fork", "intent", ""}, {"sandbox.fork", "result", forks[9].ID},
	} {
		recs := e.AuditRecords(audit.Query{Sandbox: src.ID, Action: q.action})
		found := false
		for _, r := range recs {
			found = found || (r.Phase == q.phase && strings.Contains(string(r.Result)+string(r.Args), q.want))
		}
		if !found {
			t.Errorf("no %s %s audit record naming %q: %+v", q.action, q.phase, q.want, recs)
		}
	}
	if recs := e.AuditRecords(audit.Query{Sandbox: forks[0].ID, Action: "sandbox.create"}); len(recs) == 0 ||
		!strings.Contains(string(recs[len(recs)-1].Result)+string(recs[len(recs)-1].Args), src.ID) {
		t.Errorf("a fork's create record does not name its parent: %+v", recs)
	}
	// Fork of a deleted sandbox: 404 before anything.
	if _, err := e.Client.Fork(ctx, src.ID, 1); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("fork of a deleted sandbox: %v", err)
	}
	for _, n := range []int{-1, 101} {
		if _, err := e.Client.Fork(ctx, forks[0].ID, n); errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("fork count %d: %v", n, err)
		}
	}
}

// Tenancy and quota: another tenant's snapshot is not found (and cannot
// be restored or deleted); a tenant over max_snapshot_mb is refused and
// keeps nothing of the refused snapshot.
func TestSnapshotTenancyQuota(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	tenants(t, e, "ta", "tb")
	a := sandbox.Scope{Tenant: "ta", Actor: "a", Rights: rights.All}
	bsc := sandbox.Scope{Tenant: "tb", Actor: "b", Rights: rights.All}
	sa, err := e.Manager.Create(ctx, a, sandbox.Spec{TimeoutS: 600})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := e.Manager.Exec(ctx, a, sa.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "head -c 3145728 /dev/urandom > /workspace/big"}}, nil, nil, false); err != nil || r.ExitCode != 0 {
		t.Fatalf("write: %+v %v", r, err)
	}
	if _, err := e.Manager.CreateSnapshot(ctx, a, sa.ID, "mine"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.GetSnapshot(ctx, bsc, "mine"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("another tenant's get: %v", err)
	}
	if _, err := e.Manager.Create(ctx, bsc, sandbox.Spec{Snapshot: "mine"}); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("another tenant's create from it: %v", err)
	}
	if err := e.Manager.DeleteSnapshot(ctx, bsc, "mine"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("another tenant's delete: %v", err)
	}
	if l, _ := e.Manager.ListSnapshots(ctx, bsc); len(l) != 0 {
		t.Errorf("another tenant's list: %+v", l)
	}
	if _, err := e.Manager.CreateSnapshot(ctx, bsc, sa.ID, "theirs"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("snapshot of another tenant's sandbox: %v", err)
	}
	// Quota: 5 MiB; "mine" holds 3; a second 3 MiB snapshot is over.
	if _, err := e.Quotas.Tenants().SetQuotas(ctx, "ta", tenant.Quotas{MaxSnapshotMB: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.CreateSnapshot(ctx, a, sa.ID, "second"); errs.CodeOf(err) != errs.CodeLimit || !strings.Contains(errs.Public(err), "MiB") {
		t.Fatalf("over quota: %v", err)
	}
	if _, err := e.Manager.GetSnapshot(ctx, a, "second"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("a refused snapshot exists: %v", err)
	}
	// Both the taken and the refused snapshot are in the audit log.
	var ok, refused bool
	for _, r := range e.AuditRecords(audit.Query{Sandbox: sa.ID, Action: "snapshot.create", Tenant: "ta"}) {
		ok = ok || (r.Phase == "result" && r.Code == "" && strings.Contains(string(r.Args)+string(r.Result), `"mine"`))
		refused = refused || (r.Phase == "result" && r.Code == string(errs.CodeLimit))
	}
	if !ok || !refused {
		t.Errorf("snapshot.create audit records: taken %v, refused %v", ok, refused)
	}
	// Positive control: with room again, the same snapshot is taken.
	if err := e.Manager.DeleteSnapshot(ctx, a, "mine"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.CreateSnapshot(ctx, a, sa.ID, "second"); err != nil {
		t.Fatalf("under quota: %v", err)
	}
}
