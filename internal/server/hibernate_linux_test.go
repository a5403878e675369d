package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

func requireRunsc(t *testing.T) {
	t.Helper()
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
}

// startCounter starts a counter in sandbox id whose value lives only in
// its process's memory (written to /tmp/count every 50 ms).
func startCounter(t *testing.T, c *client.Client, id string) {
	t.Helper()
	r, err := c.Exec(context.Background(), id, client.ExecRequest{Cmd: []string{"sh", "-c",
		`nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/count; sleep 0.05; done' >/dev/null 2>&1 &`}})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("counter: %+v %v", r, err)
	}
}

func readCounter(t *testing.T, c *client.Client, id string) int {
	t.Helper()
	for range 100 {
		r, err := c.Exec(context.Background(), id, client.ExecRequest{Cmd: []string{"cat", "/tmp/count"}})
		if err != nil {
			t.Fatalf("read counter: %v", err)
		}
		if n, err := strconv.Atoi(strings.TrimSpace(r.Stdout)); err == nil && n > 0 {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the counter never started")
	return 0
}

// Hibernate → server restart → resume, through the API as users call it:
// the counter carries on from where it was, the life left is kept, and
// while asleep calls answer sandbox_paused. Every step is audited.
func TestHibernateAcrossRestart(t *testing.T) {
	requireRunsc(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	startCounter(t, e.Client, sb.ID)
	time.Sleep(300 * time.Millisecond)
	h, err := e.Client.Hibernate(ctx, sb.ID)
	if err != nil {
		t.Fatalf("hibernate: %v", err)
	}
	if h.State != wire.StateHibernated || h.PausedAt == nil || h.RemainingMS <= 0 {
		t.Fatalf("after hibernate: %+v", h)
	}
	// The image holds the counter; nothing runs.
	r, err := e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"cat", "/tmp/count"}})
	if apiCode(err) != wire.CodeSandboxPaused {
		t.Fatalf("exec while hibernated: %+v %v", r, err)
	}
	if again, err := e.Client.Hibernate(ctx, sb.ID); err != nil || again.State != wire.StateHibernated {
		t.Fatalf("hibernate twice: %+v %v", again, err)
	}
	if st, err := e.Client.Stats(ctx, sb.ID); err != nil || st.MemoryBytes != 0 {
		t.Fatalf("stats while hibernated: %+v %v", st, err)
	}
	// A server exit and a new server on the same data directory.
	e.Server.Close()
	_ = e.Manager.Close(ctx)
	e.Manager = nil
	e.Shutdown()
	e2 := testenv.New(t, testenv.Options{DataDir: e.Data, CgroupPrefix: e.Prefix, UIDBase: e.UIDBase})
	got, err := e2.Client.Get(ctx, sb.ID)
	if err != nil || got.State != wire.StateHibernated || got.RemainingMS != h.RemainingMS {
		t.Fatalf("after the restart: %+v %v (want hibernated with %d ms left)", got, err, h.RemainingMS)
	}
	woke, err := e2.Client.Resume(ctx, sb.ID)
	if err != nil || woke.State != wire.StateRunning {
		t.Fatalf("resume: %+v %v", woke, err)
	}
	if left := time.Until(woke.ExpiresAt); left > time.Duration(h.RemainingMS)*time.Millisecond+time.Second || left < time.Duration(h.RemainingMS)*time.Millisecond-30*time.Second {
		t.Errorf("life after resume %s, %d ms were left at hibernation", left, h.RemainingMS)
	}
	c1 := readCounter(t, e2.Client, sb.ID)
	time.Sleep(300 * time.Millisecond)
	c2 := readCounter(t, e2.Client, sb.ID)
	if c1 < 3 || c2 <= c1 {
		t.Fatalf("counter after resume: %d then %d (want it to carry on)", c1, c2)
	}
	if _, err := os.Stat(filepath.Join(e.Data, "gvisor", "hibernated", sb.ID)); !os.IsNotExist(err) {
		t.Errorf("image left after the wake: %v", err)
	}
	kinds := map[string]bool{}
	for _, rec := range e2.AuditRecords(audit.Query{Sandbox: sb.ID}) {
		kinds[rec.Action+"/"+rec.Phase] = true
	}
	for _, k := range []string{"sandbox.hibernate/intent", "sandbox.hibernate/result", "sandbox.restore/intent", "sandbox.restore/result"} {
		if !kinds[k] {
			t.Errorf("no %s audit record (have %v)", k, kinds)
		}
	}
	if err := e2.Client.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
}

// auto_resume wakes a hibernated sandbox for the call that needs it; a
// deleted hibernated sandbox leaves no image; native refuses with why.
func TestHibernateAutoResumeAndRefusals(t *testing.T) {
	requireRunsc(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor", AutoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "echo kept > /tmp/f"}}); err != nil || r.ExitCode != 0 {
		t.Fatalf("write: %+v %v", r, err)
	}
	if _, err := e.Client.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	r, err := e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"cat", "/tmp/f"}})
	if err != nil || r.Stdout != "kept\n" {
		t.Fatalf("exec with auto_resume: %+v %v", r, err)
	}
	if got, _ := e.Client.Get(ctx, sb.ID); got.State != wire.StateRunning {
		t.Fatalf("after the automatic wake: %+v", got)
	}
	// Deleted while asleep: the image goes with it.
	if _, err := e.Client.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(e.Data, "gvisor", "hibernated", sb.ID)
	if _, err := os.Stat(img); err != nil {
		t.Fatalf("no image: %v", err)
	}
	if err := e.Client.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(img); !os.IsNotExist(err) {
		t.Fatalf("image left after delete: %v", err)
	}
	// Native: refused, naming why.
	n, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.Hibernate(ctx, n.ID); apiCode(err) != wire.CodeUnsupported || !strings.Contains(err.Error(), "Landlock") {
		t.Fatalf("hibernate native: %v", err)
	}
	if _, err := e.Client.Create(ctx, client.Spec{OnTimeout: wire.OnTimeoutHibernate}); apiCode(err) != wire.CodeUnsupported {
		t.Fatalf("on_timeout hibernate on native: %v", err)
	}
	if _, err := e.Client.Hibernate(ctx, "nosuchsandbox"); apiCode(err) != wire.CodeNotFound {
		t.Fatalf("hibernate unknown: %v", err)
	}
}

// A corrupt image at resume: the sandbox is reported failed with a clear
// reason, the image is dropped, nothing of the restore is left, and the
// server keeps serving.
func TestHibernateCorruptImage(t *testing.T) {
	requireRunsc(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(e.Data, "gvisor", "hibernated", sb.ID)
	ents, _ := os.ReadDir(img)
	flipped := false
	for _, f := range ents {
		if f.Name() == gvisor.ManifestName {
			continue
		}
		p := filepath.Join(img, f.Name())
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		b[len(b)/2] ^= 0xff
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		flipped = true
		break
	}
	if !flipped {
		t.Fatal("no image file to corrupt")
	}
	_, err = e.Client.Resume(ctx, sb.ID)
	if apiCode(err) != wire.CodeInvalid || !strings.Contains(err.Error(), "checksum") || strings.Contains(err.Error(), e.Data) {
		t.Fatalf("resume of a corrupt image: %v", err)
	}
	got, err := e.Client.Get(ctx, sb.ID)
	if err != nil || got.State != wire.StateFailed || !strings.Contains(got.Reason, "hibernation") {
		t.Fatalf("after the failed resume: %+v %v", got, err)
	}
	if _, err := os.Stat(img); !os.IsNotExist(err) {
		t.Errorf("corrupt image left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.Data, "gvisor", "sandboxes", sb.ID)); !os.IsNotExist(err) {
		t.Errorf("the failed restore left its sandbox directory: %v", err)
	}
	// The server serves on.
	other, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatalf("create after the failure: %v", err)
	}
	if r, err := e.Client.Exec(ctx, other.ID, client.ExecRequest{Cmd: []string{"true"}}); err != nil || r.ExitCode != 0 {
		t.Fatalf("exec after the failure: %+v %v", r, err)
	}
	if err := e.Client.Delete(ctx, sb.ID); err != nil {
		t.Fatalf("delete the failed sandbox: %v", err)
	}
}

// A wake is admitted like a create: hibernate, create another, and the
// wake past max_sandboxes is refused (the sandbox stays hibernated); with
// room again it wakes.
func TestHibernateWakeAdmitted(t *testing.T) {
	requireRunsc(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	if _, err := e.Quotas.Tenants().SetQuotas(ctx, e.Scope.Tenant, tenant.Quotas{MaxSandboxes: 1}); err != nil {
		t.Fatal(err)
	}
	a, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.Hibernate(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	b, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatalf("create while the other sleeps: %v", err)
	}
	if _, err := e.Client.Resume(ctx, a.ID); apiCode(err) != wire.CodeLimit {
		t.Fatalf("wake past the quota: %v", err)
	}
	if got, _ := e.Client.Get(ctx, a.ID); got.State != wire.StateHibernated {
		t.Fatalf("after the refused wake: %+v", got)
	}
	if err := e.Client.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Client.Resume(ctx, a.ID); err != nil || got.State != wire.StateRunning {
		t.Fatalf("wake with room: %+v %v", got, err)
	}
}
