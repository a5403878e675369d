//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// tenants creates tenants in e (quotas refuse unknown tenants).
func tenants(t *testing.T, e *testenv.Env, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := e.Quotas.Tenants().Create(context.Background(), n, tenant.Quotas{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScopes(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	tenants(t, e, "a", "b")
	a := sandbox.Scope{Tenant: "a", Actor: "ka", Rights: rights.All}
	b := sandbox.Scope{Tenant: "b", Actor: "kb", Rights: rights.All}
	sa, err := e.Manager.Create(ctx, a, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	// Another tenant cannot see, exec in, retime or delete it: not found.
	if _, err := e.Manager.Get(ctx, b, sa.ID); !errorsIs(err, errs.ErrNotFound) {
		t.Fatalf("Get from b: %v", err)
	}
	if _, err := e.Manager.SetTimeout(ctx, b, sa.ID, time.Minute); !errorsIs(err, errs.ErrNotFound) {
		t.Fatalf("SetTimeout from b: %v", err)
	}
	if err := e.Manager.Delete(ctx, b, sa.ID); !errorsIs(err, errs.ErrNotFound) {
		t.Fatalf("Delete from b: %v", err)
	}
	if got, _ := e.Manager.List(ctx, b, nil); len(got) != 0 {
		t.Fatalf("b lists a's sandbox: %v", got)
	}
	// A sandbox-scoped caller sees only its sandbox and cannot create.
	sa2, err := e.Manager.Create(ctx, a, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	tok := sandbox.Scope{Tenant: "a", Actor: "tok", Sandbox: sa.ID, Token: true, Rights: rights.Of(rights.Read, rights.Write, rights.Exec)}
	if got, _ := e.Manager.List(ctx, tok, nil); len(got) != 1 || got[0].ID != sa.ID {
		t.Fatalf("token lists %v", got)
	}
	if _, err := e.Manager.Get(ctx, tok, sa2.ID); !errorsIs(err, errs.ErrNotFound) {
		t.Fatalf("token reaches another sandbox: %v", err)
	}
	if _, err := e.Manager.Create(ctx, tok, sandbox.Spec{}); !errorsIs(err, errs.ErrForbidden) {
		t.Fatalf("token creates: %v", err)
	}
	// Positive control: the owner can.
	if _, err := e.Manager.Get(ctx, a, sa.ID); err != nil {
		t.Fatal(err)
	}
	if st := e.Manager.CountByState(); st["running"] < 2 {
		t.Fatalf("CountByState = %v", st)
	}
}

func TestDeleteLabeled(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	tenants(t, e, "x")
	orphan, err := e.Manager.Create(ctx, sandbox.Scope{Tenant: "x", Rights: rights.All}, sandbox.Spec{Labels: map[string]string{"mcp-session": "s1"}})
	if err != nil {
		t.Fatal(err)
	}
	keep := e.Create(sandbox.Spec{Labels: map[string]string{"other": "1"}})
	if n := e.Manager.DeleteLabeled(ctx, "mcp-session"); n != 1 {
		t.Fatalf("deleted %d, want 1", n)
	}
	if _, err := e.Manager.Get(ctx, sandbox.Scope{Tenant: "x", Rights: rights.All}, orphan.ID); !errorsIs(err, errs.ErrNotFound) {
		t.Fatalf("orphan still there: %v", err)
	}
	if _, err := e.Manager.Get(ctx, e.Scope, keep.ID); err != nil {
		t.Fatalf("unlabelled sandbox deleted: %v", err)
	}
}

func TestPoolClaim(t *testing.T) {
	e := testenv.New(t, testenv.Options{PoolSize: 2})
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for e.Manager.CountByState()["pooled"] < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("pool never filled: %v", e.Manager.CountByState())
		}
		time.Sleep(50 * time.Millisecond)
	}
	sb, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{MemoryMB: 256, Env: map[string]string{"E": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if !sb.FromPool {
		t.Fatal("a default-template create did not claim a warm sandbox")
	}
	// The claim got the requested limits and env.
	if res := e.Sh(sb.ID, "echo $E"); res.Stdout != "v\n" {
		t.Fatalf("env not applied to a claimed sandbox: %+v", res)
	}
	if sb.Spec.MemoryMB != 256 {
		t.Fatalf("spec %+v", sb.Spec)
	}
	// A different disk size cannot be claimed: cold start.
	cold, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{DiskMB: 64})
	if err != nil {
		t.Fatal(err)
	}
	if cold.FromPool {
		t.Fatal("a non-default disk size claimed a warm sandbox")
	}
}

func errorsIs(err, target error) bool {
	return err != nil && errsIs(err, target)
}

// A manager closed while its pool is starting a member destroys that
// member too: nothing of the pool outlives Close (the member being added
// used to land in the pool after the drain, and run on).
func TestCloseDuringPoolRefill(t *testing.T) {
	for _, wait := range []time.Duration{0, 20 * time.Millisecond, 35 * time.Millisecond, 45 * time.Millisecond, 60 * time.Millisecond} {
		e := testenv.New(t, testenv.Options{PoolSize: 2})
		time.Sleep(wait)
		e.Close()
		for _, c := range []string{"pids", "memory"} {
			dir := filepath.Join("/sys/fs/cgroup", c, e.Prefix)
			if _, err := os.Stat(dir); err == nil {
				ents, _ := os.ReadDir(dir)
				var names []string
				for _, en := range ents {
					if en.IsDir() {
						names = append(names, en.Name())
					}
				}
				t.Errorf("after Close at %v: %s still holds %v", wait, dir, names)
			}
		}
	}
}

// A sandbox's life starts once it runs: its start does not count against
// its timeout (on gVisor a loaded host takes seconds to start one, which
// a short timeout would otherwise spend before the create answers).
func TestLifeStartsWhenRunning(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	before := time.Now()
	sb, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{TimeoutS: 60})
	if err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	if !sb.ExpiresAt.After(sb.CreatedAt.Add(60*time.Second)) || sb.CreatedAt.Before(before) {
		t.Fatalf("the life counts from the request: created %v, expires %v", sb.CreatedAt, sb.ExpiresAt)
	}
	if sb.ExpiresAt.After(answered.Add(60 * time.Second)) {
		t.Fatalf("expires %v, later than the create's answer plus the timeout (%v)", sb.ExpiresAt, answered)
	}
	got, err := e.Manager.Get(ctx, e.Scope, sb.ID)
	if err != nil || !got.ExpiresAt.Equal(sb.ExpiresAt) {
		t.Fatalf("the recorded expiry differs: %v %v (want %v)", got.ExpiresAt, err, sb.ExpiresAt)
	}
}

// TestServerLookups: the server's own lookups (PortLabels, InjectRules)
// answer for a running sandbox only, with its tenant and a copy of what
// they read.
func TestServerLookups(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{Labels: map[string]string{"port-mode": "public"}})
	tenant, labels, ok := e.Manager.PortLabels(sb.ID)
	if !ok || tenant != e.Scope.Tenant || labels["port-mode"] != "public" {
		t.Fatalf("PortLabels = %q %v %v", tenant, labels, ok)
	}
	labels["port-mode"] = "changed"
	if _, again, _ := e.Manager.PortLabels(sb.ID); again["port-mode"] != "public" {
		t.Fatal("PortLabels handed out the sandbox's own map")
	}
	if tenant, rules, ok := e.Manager.InjectRules(sb.ID); !ok || tenant != e.Scope.Tenant || len(rules) != 0 {
		t.Fatalf("InjectRules = %q %v %v", tenant, rules, ok)
	}
	if err := e.Manager.Delete(ctx, e.Scope, sb.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{sb.ID, "sb-nope", "../x"} {
		if _, _, ok := e.Manager.PortLabels(id); ok {
			t.Errorf("PortLabels(%q) answers", id)
		}
		if _, _, ok := e.Manager.InjectRules(id); ok {
			t.Errorf("InjectRules(%q) answers", id)
		}
	}
}
