package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/store"
)

func openStore(t *testing.T) *Store {
	t.Helper()
	db, err := store.Open(t.TempDir(), Migrations...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return NewStore(db.SQL())
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newAdmission(t *testing.T, name string, q Quotas) (*Admission, *clock) {
	t.Helper()
	s := openStore(t)
	if _, err := s.Create(context.Background(), name, q); err != nil {
		t.Fatal(err)
	}
	a := NewAdmission(s, sandbox.DefaultLimits(4))
	c := &clock{t: time.Unix(1_900_000_000, 0)}
	a.now = c.now
	return a, c
}

func running(at time.Time, cpu float64, mem int64) sandbox.Sandbox {
	return sandbox.Sandbox{State: sandbox.StateRunning, CreatedAt: at, Spec: sandbox.Spec{CPU: cpu, MemoryMB: mem}}
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	def, err := s.Get(ctx, Default)
	if err != nil {
		t.Fatalf("the default tenant must exist: %v", err)
	}
	if def.Quotas.MaxSandboxes != 0 || def.CreatedAt.IsZero() {
		t.Fatalf("default tenant = %+v", def)
	}
	if _, err := s.Create(ctx, "acme", Quotas{MaxSandboxes: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "acme", Quotas{}); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("duplicate create: %v", err)
	}
	for _, bad := range []string{"", "Acme", "a b", "-x", strings.Repeat("a", 64), "../x"} {
		if _, err := s.Create(ctx, bad, Quotas{}); errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("create %q: %v, want invalid_argument", bad, err)
		}
	}
	got, err := s.Get(ctx, "acme")
	if err != nil || got.Quotas.MaxSandboxes != 3 {
		t.Fatalf("get = %+v, %v", got, err)
	}
	// The cached copy is replaced at once by SetQuotas.
	if _, err := s.SetQuotas(ctx, "acme", Quotas{MaxSandboxes: 5, AllowedDomains: []string{"PyPI.org."}}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, "acme")
	if got.Quotas.MaxSandboxes != 5 || got.Quotas.AllowedDomains[0] != "pypi.org" {
		t.Fatalf("after set: %+v", got.Quotas)
	}
	if _, err := s.SetQuotas(ctx, "nope", Quotas{}); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("set on a missing tenant: %v", err)
	}
	if _, err := s.Get(ctx, "nope"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("get missing: %v", err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "acme" || list[1].Name != Default {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		q    Quotas
		in   string // "" = valid
	}{
		{"empty", Quotas{}, ""},
		{"full", Quotas{MaxSandboxes: 4, MaxTotalCPU: 4, MaxTotalMemoryMB: 8192, CreatePerMinute: 10, CreateBurst: 3,
			MaxCPU: 2, MaxMemoryMB: 4096, MaxDiskMB: 4096, MaxPids: 100, MaxTimeoutS: 60,
			NetworkModes: []string{"none", "allowlist"}, AllowedDomains: []string{"*.github.com", "pypi.org"},
			Defaults: Defaults{Template: "host", CPU: 1, MemoryMB: 512, TimeoutS: 30}}, ""},
		{"negative", Quotas{MaxSandboxes: -1}, "max_sandboxes"},
		{"negative cpu", Quotas{MaxCPU: -0.5}, "max_cpu"},
		{"huge", Quotas{CreatePerMinute: 1e12}, "create_per_minute"},
		{"burst without rate", Quotas{CreateBurst: 3}, "create_burst"},
		{"unknown mode", Quotas{NetworkModes: []string{"wide"}}, "network_modes"},
		{"duplicate mode", Quotas{NetworkModes: []string{"open", "open"}}, "twice"},
		{"bad domain", Quotas{AllowedDomains: []string{"exa mple.com"}}, "allowed_domains"},
		{"bad wildcard", Quotas{AllowedDomains: []string{"*"}}, "allowed_domains"},
		{"mid wildcard", Quotas{AllowedDomains: []string{"a.*.com"}}, "allowed_domains"},
		{"default above max", Quotas{MaxMemoryMB: 512, Defaults: Defaults{MemoryMB: 1024}}, "defaults.memory_mb"},
		{"bad template", Quotas{Defaults: Defaults{Template: "../x"}}, "defaults.template"},
		{"runtimes", Quotas{Runtimes: []string{"gvisor", "native"}, Defaults: Defaults{Runtime: "native"}}, ""},
		{"unknown runtime", Quotas{Runtimes: []string{"kata"}}, "quota runtimes: unknown runtime \"kata\""},
		{"duplicate runtime", Quotas{Runtimes: []string{"gvisor", "gvisor"}}, "twice"},
		{"unknown default runtime", Quotas{Defaults: Defaults{Runtime: "vm"}}, "defaults.runtime"},
		{"default runtime not allowed", Quotas{Runtimes: []string{"gvisor"}, Defaults: Defaults{Runtime: "native"}}, "not among the allowed runtimes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateQuotas(&c.q)
			if c.in == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(err.Error(), c.in) {
				t.Fatalf("error = %v, want invalid_argument mentioning %q", err, c.in)
			}
		})
	}
}

func TestCovered(t *testing.T) {
	allowed := []string{"pypi.org", "*.github.com", "*.internal.example"}
	cases := []struct {
		want string
		ok   bool
	}{
		{"pypi.org", true},
		{"PyPI.org.", true},
		{"files.pypi.org", false},
		{"github.com", false}, // a wildcard does not cover its apex
		{"api.github.com", true},
		{"a.b.github.com", true},
		{"*.github.com", true},
		{"*.api.github.com", true},
		{"evilgithub.com", false},
		{"github.com.evil.com", false},
		{"*.com", false},
		{"*", false},
		{"", false},
		{"exa mple.org", false},
	}
	for _, c := range cases {
		if got := covered(c.want, allowed); got != c.ok {
			t.Errorf("covered(%q) = %v, want %v", c.want, got, c.ok)
		}
	}
}

func TestAdmitCeilings(t *testing.T) {
	q := Quotas{MaxCPU: 2, MaxMemoryMB: 1024, MaxDiskMB: 2048, MaxPids: 256, MaxTimeoutS: 600,
		NetworkModes: []string{"allowlist"}, AllowedDomains: []string{"*.github.com", "pypi.org"},
		Defaults: Defaults{MemoryMB: 256, TimeoutS: 60}}
	a, _ := newAdmission(t, "acme", q)
	ctx := context.Background()
	sc := sandbox.Scope{Tenant: "acme", Actor: "key_x"}
	cases := []struct {
		name string
		spec sandbox.Spec
		code errs.Code
		in   string
	}{
		{"defaults fit", sandbox.Spec{}, "", ""},
		{"cpu", sandbox.Spec{CPU: 3}, errs.CodeForbidden, "tenant acme: per-sandbox CPU ceiling is 2 cores (requested 3)"},
		{"memory", sandbox.Spec{MemoryMB: 2048}, errs.CodeForbidden, "tenant acme: per-sandbox memory ceiling is 1024 MiB (requested 2048 MiB)"},
		{"disk", sandbox.Spec{DiskMB: 4096}, errs.CodeForbidden, "disk ceiling is 2048 MiB"},
		{"server default disk under the ceiling", sandbox.Spec{}, "", ""},
		{"pids", sandbox.Spec{Pids: 1000}, errs.CodeForbidden, "pids ceiling is 256"},
		{"timeout", sandbox.Spec{TimeoutS: 3600}, errs.CodeForbidden, "timeout ceiling is 600 s"},
		{"mode none always", sandbox.Spec{Network: &sandbox.Network{Mode: "none"}}, "", ""},
		{"mode open", sandbox.Spec{Network: &sandbox.Network{Mode: "open"}}, errs.CodeForbidden, `network mode "open" is not allowed (allowed: none, allowlist)`},
		{"allowed domains", sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"api.github.com", "pypi.org"}}}, "", ""},
		{"allowed domain with a port", sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"API.github.com:443"}}}, "", ""},
		{"other domain with an allowed port", sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"evil.example:443"}}},
			errs.CodeForbidden, `domain "evil.example:443" is not among`},
		{"other domain", sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"api.github.com", "evil.example"}}},
			errs.CodeForbidden, `domain "evil.example" is not among the tenant's allowed domains`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := c.spec
			err := admitErr(a, ctx, sc, "create", &spec, nil)
			if c.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if errs.CodeOf(err) != c.code || !strings.Contains(errs.Public(err), c.in) {
				t.Fatalf("error = %v (%s), want %s containing %q", err, errs.CodeOf(err), c.code, c.in)
			}
		})
	}
	// Tenant defaults fill what the spec leaves unset; set fields stay.
	spec := sandbox.Spec{CPU: 0.5}
	if err := admitErr(a, ctx, sc, "create", &spec, nil); err != nil {
		t.Fatal(err)
	}
	if spec.MemoryMB != 256 || spec.TimeoutS != 60 || spec.CPU != 0.5 || spec.DiskMB != 0 {
		t.Fatalf("after defaults: %+v", spec)
	}
	// A server default above a ceiling (pids 512 > 256) is lowered to it
	// for a spec that leaves the field unset; one that asks is refused.
	if spec.Pids != 256 {
		t.Fatalf("unset pids = %d, want the ceiling 256", spec.Pids)
	}
	// Timeout changes meet the same ceiling.
	long := sandbox.Spec{TimeoutS: 601}
	if err := admitErr(a, ctx, sc, "timeout", &long, nil); errs.CodeOf(err) != errs.CodeForbidden {
		t.Fatalf("timeout op: %v", err)
	}
	ok := sandbox.Spec{TimeoutS: 600}
	if err := admitErr(a, ctx, sc, "timeout", &ok, nil); err != nil {
		t.Fatalf("timeout op within the ceiling: %v", err)
	}
	// The "network" op applies only the network policy.
	open := sandbox.Spec{CPU: 99, Network: &sandbox.Network{Mode: "open"}}
	if err := admitErr(a, ctx, sc, "network", &open, nil); errs.CodeOf(err) != errs.CodeForbidden {
		t.Fatalf("network op: %v", err)
	}
	// An unknown tenant is refused, naming it.
	if err := admitErr(a, ctx, sandbox.Scope{Tenant: "ghost"}, "create", &sandbox.Spec{}, nil); errs.CodeOf(err) != errs.CodeForbidden ||
		!strings.Contains(err.Error(), "ghost") {
		t.Fatalf("unknown tenant: %v", err)
	}
}

func TestAdmitRuntimePolicy(t *testing.T) {
	ctx := context.Background()
	sc := sandbox.Scope{Tenant: "acme"}
	cases := []struct {
		name      string
		q         Quotas
		serverDef string // the server's --default-runtime
		spec      sandbox.Spec
		want      string // the spec's runtime after admission; "" = refused
		in        string // part of the refusal
	}{
		{"no policy, nothing asked", Quotas{}, "", sandbox.Spec{}, "", ""},
		{"no policy, gvisor asked", Quotas{}, "", sandbox.Spec{Runtime: "gvisor"}, "gvisor", ""},
		{"gvisor required, nothing asked", Quotas{Runtimes: []string{"gvisor"}}, "", sandbox.Spec{}, "gvisor", ""},
		{"gvisor required, native asked", Quotas{Runtimes: []string{"gvisor"}}, "", sandbox.Spec{Runtime: "native"}, "",
			`tenant acme: runtime "native" is not allowed (allowed: gvisor)`},
		{"native only, gvisor asked", Quotas{Runtimes: []string{"native"}}, "", sandbox.Spec{Runtime: "gvisor"}, "",
			`runtime "gvisor" is not allowed (allowed: native)`},
		{"native only, server default gvisor", Quotas{Runtimes: []string{"native"}}, "gvisor", sandbox.Spec{}, "native", ""},
		{"either, server default gvisor", Quotas{Runtimes: []string{"native", "gvisor"}}, "gvisor", sandbox.Spec{}, "", ""},
		{"tenant default", Quotas{Defaults: Defaults{Runtime: "gvisor"}}, "", sandbox.Spec{}, "gvisor", ""},
		{"tenant default, spec asks", Quotas{Defaults: Defaults{Runtime: "gvisor"}}, "", sandbox.Spec{Runtime: "native"}, "native", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			if _, err := s.Create(ctx, "acme", c.q); err != nil {
				t.Fatal(err)
			}
			l := sandbox.DefaultLimits(4)
			l.Default.Runtime = c.serverDef
			a := NewAdmission(s, l)
			spec := c.spec
			err := admitErr(a, ctx, sc, "create", &spec, nil)
			if c.in != "" {
				if errs.CodeOf(err) != errs.CodeForbidden || !strings.Contains(errs.Public(err), c.in) {
					t.Fatalf("error = %v, want forbidden containing %q", err, c.in)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if spec.Runtime != c.want {
				t.Fatalf("runtime after admission = %q, want %q", spec.Runtime, c.want)
			}
		})
	}
}

func TestAdmitOpenModeWithDomains(t *testing.T) {
	// No mode restriction, but a domain list: open would bypass it.
	a, _ := newAdmission(t, "acme", Quotas{AllowedDomains: []string{"pypi.org"}})
	spec := sandbox.Spec{Network: &sandbox.Network{Mode: "open"}}
	err := admitErr(a, context.Background(), sandbox.Scope{Tenant: "acme"}, "create", &spec, nil)
	if errs.CodeOf(err) != errs.CodeForbidden || !strings.Contains(err.Error(), "allowed domains") {
		t.Fatalf("open with a domain list: %v", err)
	}
	// Positive control: without the domain list, open passes the tenant.
	b, _ := newAdmission(t, "acme", Quotas{})
	if err := admitErr(b, context.Background(), sandbox.Scope{Tenant: "acme"}, "create", &spec, nil); err != nil {
		t.Fatalf("open without a domain list: %v", err)
	}
}

func TestAdmitCountAndTotals(t *testing.T) {
	ctx := context.Background()
	sc := sandbox.Scope{Tenant: "acme"}
	a, c := newAdmission(t, "acme", Quotas{MaxSandboxes: 3, MaxTotalCPU: 4, MaxTotalMemoryMB: 4096})
	past := c.now().Add(-time.Hour)
	live := []sandbox.Sandbox{running(past, 1, 1024), running(past, 1, 2560),
		{State: sandbox.StateFailed, CreatedAt: past, Spec: sandbox.Spec{CPU: 4, MemoryMB: 4096}}} // failed ones hold nothing
	err := admitErr(a, ctx, sc, "create", &sandbox.Spec{MemoryMB: 1024}, live)
	want := "tenant acme: memory quota 4096 MiB would be exceeded (in use 3584 MiB, requested 1024 MiB)"
	if errs.CodeOf(err) != errs.CodeLimit || errs.Public(err) != want {
		t.Fatalf("memory: %v, want %q", err, want)
	}
	err = admitErr(a, ctx, sc, "create", &sandbox.Spec{CPU: 2.5, MemoryMB: 64}, live)
	if errs.CodeOf(err) != errs.CodeLimit || !strings.Contains(err.Error(), "CPU quota 4 cores would be exceeded (in use 2, requested 2.5)") {
		t.Fatalf("cpu: %v", err)
	}
	err = admitErr(a, ctx, sc, "create", &sandbox.Spec{MemoryMB: 8192}, live)
	if errs.CodeOf(err) != errs.CodeForbidden || !strings.Contains(err.Error(), "smaller than the request") {
		t.Fatalf("a request above the whole quota: %v", err)
	}
	if err := admitErr(a, ctx, sc, "create", &sandbox.Spec{MemoryMB: 512}, live); err != nil {
		t.Fatalf("fits: %v", err)
	}
	// That admitted create is in flight: with the old list, the count is
	// now at its quota.
	err = admitErr(a, ctx, sc, "create", &sandbox.Spec{MemoryMB: 32}, live)
	if errs.CodeOf(err) != errs.CodeLimit || !strings.Contains(err.Error(), "sandbox quota 3 reached") {
		t.Fatalf("count: %v", err)
	}
}

// TestConcurrentCreatesRespectQuota: creates that race, all seeing the same
// (stale) list of live sandboxes, are admitted only up to the quota.
func TestConcurrentCreatesRespectQuota(t *testing.T) {
	a, _ := newAdmission(t, "acme", Quotas{MaxSandboxes: 5})
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := admitErr(a, context.Background(), sandbox.Scope{Tenant: "acme"}, "create", &sandbox.Spec{}, nil)
			switch {
			case err == nil:
				ok.Add(1)
			case errs.CodeOf(err) == errs.CodeLimit:
				refused.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 5 || refused.Load() != 45 {
		t.Fatalf("admitted %d, refused %d; want 5 and 45", ok.Load(), refused.Load())
	}
}

// TestReservationsHeldUntilDone: an admitted create counts until the
// manager says it finished, whether its sandbox is listed yet or not, so
// no interleaving of listing and finishing lets a create slip through.
func TestReservationsHeldUntilDone(t *testing.T) {
	sc := sandbox.Scope{Tenant: "acme"}
	a, c := newAdmission(t, "acme", Quotas{MaxSandboxes: 2})
	var live []sandbox.Sandbox
	list := func() []sandbox.Sandbox { return live }
	done1, err := a.Admit(context.Background(), sc, "create", &sandbox.Spec{}, list)
	if err != nil {
		t.Fatal(err)
	}
	done2, err := a.Admit(context.Background(), sc, "create", &sandbox.Spec{}, list)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Admit(context.Background(), sc, "create", &sandbox.Spec{}, list); errs.CodeOf(err) != errs.CodeLimit {
		t.Fatalf("third while two are in flight: %v", err)
	}
	// The first create failed: its place is given back.
	done1()
	done1() // idempotent
	done3, err := a.Admit(context.Background(), sc, "create", &sandbox.Spec{}, list)
	if err != nil {
		t.Fatalf("after a failed create: %v", err)
	}
	// The second is now listed but not yet done: counted twice (at most
	// conservative), then once after done.
	live = []sandbox.Sandbox{running(c.now(), 1, 512)}
	if _, err := a.Admit(context.Background(), sc, "create", &sandbox.Spec{}, list); errs.CodeOf(err) != errs.CodeLimit {
		t.Fatalf("a listed create still in flight must still count: %v", err)
	}
	done2()
	done3()
	if _, err := admit(a, sc, list); err != nil {
		t.Fatalf("one live sandbox under a quota of 2: %v", err)
	}
	// A reservation whose done is never called expires (a safety net).
	b, c2 := newAdmission(t, "acme", Quotas{MaxSandboxes: 1})
	if _, err := b.Admit(context.Background(), sc, "create", &sandbox.Spec{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Admit(context.Background(), sc, "create", &sandbox.Spec{}, nil); errs.CodeOf(err) != errs.CodeLimit {
		t.Fatalf("second: %v", err)
	}
	c2.add(reservationTTL + time.Second)
	if _, err := b.Admit(context.Background(), sc, "create", &sandbox.Spec{}, nil); err != nil {
		t.Fatalf("after the reservation expired: %v", err)
	}
}

// admit is a create admission that finishes at once.
func admit(a *Admission, sc sandbox.Scope, live func() []sandbox.Sandbox) (sandbox.Spec, error) {
	var spec sandbox.Spec
	done, err := a.Admit(context.Background(), sc, "create", &spec, live)
	if done != nil {
		done()
	}
	return spec, err
}

// admitErr calls Admit with a fixed live list and keeps the reservation
// (like a create that never finishes), returning only the error.
func admitErr(a *Admission, ctx context.Context, sc sandbox.Scope, op string, spec *sandbox.Spec, live []sandbox.Sandbox) error {
	_, err := a.Admit(ctx, sc, op, spec, func() []sandbox.Sandbox { return live })
	return err
}

func TestRateLimit(t *testing.T) {
	sc := sandbox.Scope{Tenant: "acme"}
	a, c := newAdmission(t, "acme", Quotas{CreatePerMinute: 6, CreateBurst: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admit := func() error { return admitErr(a, ctx, sc, "create", &sandbox.Spec{}, nil) }
	for i := range 2 {
		if err := admit(); err != nil {
			t.Fatalf("burst %d: %v", i, err)
		}
	}
	err := admit()
	var rl *RateLimitError
	if !errors.As(err, &rl) || errs.CodeOf(err) != errs.CodeRateLimited {
		t.Fatalf("over the rate: %v", err)
	}
	if rl.RetryAfter() != 10*time.Second || !strings.Contains(errs.Public(err), "tenant acme: create rate quota of 6 per minute exceeded") {
		t.Fatalf("retry after %s, message %q", rl.RetryAfter(), errs.Public(err))
	}
	c.add(9 * time.Second)
	if err := admit(); !errors.As(err, &rl) || rl.RetryAfter() != time.Second {
		t.Fatalf("a second early: %v", err)
	}
	c.add(time.Second)
	if err := admit(); err != nil {
		t.Fatalf("after the refill: %v", err)
	}
	// Refused creates do not spend tokens (the ceiling answers first).
	b, _ := newAdmission(t, "acme", Quotas{CreatePerMinute: 1, MaxMemoryMB: 512})
	for range 3 {
		if err := admitErr(b, ctx, sc, "create", &sandbox.Spec{MemoryMB: 1024}, nil); errs.CodeOf(err) != errs.CodeForbidden {
			t.Fatal(err)
		}
	}
	if err := admitErr(b, ctx, sc, "create", &sandbox.Spec{}, nil); err != nil {
		t.Fatalf("first valid create: %v", err)
	}
}

func TestAdmitSecretsAndPorts(t *testing.T) {
	ctx := context.Background()
	a, _ := newAdmission(t, "locked", Quotas{DenySecrets: true, DenyExposedPorts: true})
	_, _ = a.tenants.Create(ctx, "open", Quotas{})
	if err := a.AdmitSecrets(ctx, "locked", []string{"GITHUB_TOKEN"}); errs.CodeOf(err) != errs.CodeForbidden ||
		!strings.Contains(err.Error(), "tenant locked: secrets are not allowed") {
		t.Fatalf("secrets: %v", err)
	}
	if err := a.AdmitExposedPorts(ctx, "locked", []int{8080}); errs.CodeOf(err) != errs.CodeForbidden ||
		!strings.Contains(err.Error(), "exposed ports are not allowed") {
		t.Fatalf("ports: %v", err)
	}
	if err := a.AdmitSecrets(ctx, "locked", nil); err != nil {
		t.Fatalf("no secrets asked: %v", err)
	}
	if err := a.AdmitSecrets(ctx, "open", []string{"X"}); err != nil {
		t.Fatalf("positive control: %v", err)
	}
	if err := a.AdmitExposedPorts(ctx, "open", []int{80}); err != nil {
		t.Fatalf("positive control: %v", err)
	}
	// The signatures are reachable through a caller's local interface.
	var _ interface {
		AdmitSecrets(context.Context, string, []string) error
		AdmitExposedPorts(context.Context, string, []int) error
	} = a
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func FuzzDomain(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "EXAMPLE.com.", "*", "", "a..b", "-a.com", "a_b.example",
		"*.*.com", strings.Repeat("a.", 130) + "com", "xn--bcher-kva.example", "a\x00b"} {
		f.Add(s, "*.example.com")
	}
	f.Fuzz(func(t *testing.T, d, pattern string) {
		n, ok := normalizeDomain(d)
		if !ok {
			if covered(d, []string{"*.example.com", "example.com"}) {
				t.Fatalf("invalid %q covered", d)
			}
			return
		}
		if n2, ok2 := normalizeDomain(n); !ok2 || n2 != n {
			t.Fatalf("normalize not idempotent: %q → %q → %q", d, n, n2)
		}
		if !covered(d, []string{n}) {
			t.Fatalf("%q not covered by itself (%q)", d, n)
		}
		if p, ok := normalizeDomain(pattern); ok && covered(d, []string{p}) && !strings.HasPrefix(p, "*.") && p != n {
			t.Fatalf("exact pattern %q covers a different name %q", p, n)
		}
	})
}

func FuzzQuotasJSON(f *testing.F) {
	f.Add(`{}`)
	f.Add(`{"max_sandboxes":3,"allowed_domains":["*.github.com"],"network_modes":["allowlist"],"defaults":{"memory_mb":256}}`)
	f.Add(`{"max_cpu":-1}`)
	f.Add(`{"create_per_minute":1e308}`)
	f.Fuzz(func(t *testing.T, s string) {
		var q Quotas
		if json.Unmarshal([]byte(s), &q) != nil {
			return
		}
		if ValidateQuotas(&q) != nil {
			return
		}
		// A valid quota set stays valid and is a fixed point.
		b, _ := json.Marshal(q)
		var q2 Quotas
		if err := json.Unmarshal(b, &q2); err != nil {
			t.Fatal(err)
		}
		if err := ValidateQuotas(&q2); err != nil {
			t.Fatalf("re-validate %s: %v", b, err)
		}
		if burst(q) < 1 {
			t.Fatalf("burst %g", burst(q))
		}
	})
}

func TestStripPortAndOtherDestinations(t *testing.T) {
	for in, want := range map[string]string{"a.com:443": "a.com", "a.com": "a.com", "a.com:": "a.com:", "a.com:x1": "a.com:x1", "*.a.com:80": "*.a.com"} {
		if got := stripPort(in); got != want {
			t.Errorf("stripPort(%q) = %q, want %q", in, got, want)
		}
	}
	if f := otherDestinations(&sandbox.Network{Mode: "allowlist", Allow: []string{"a.com"}}); f != "" {
		t.Fatalf("allow alone reported as %q", f)
	}
	if f := otherDestinations(nil); f != "" {
		t.Fatal(f)
	}
}

// Where layers are RAM (tmpfs), disk counts against the memory quota:
// the tenant with a 128 MiB quota pinned 4 GiB through its
// layers. Positive control: the same requests pass when layers are on
// disk.
func TestAdmitDiskAsMemory(t *testing.T) {
	ctx := context.Background()
	sc := sandbox.Scope{Tenant: "acme"}
	q := Quotas{MaxTotalMemoryMB: 1024}
	onDisk, c := newAdmission(t, "acme", q)
	past := c.now().Add(-time.Hour)
	live := []sandbox.Sandbox{{State: sandbox.StateRunning, CreatedAt: past, Spec: sandbox.Spec{CPU: 1, MemoryMB: 128, DiskMB: 512}}}
	big := sandbox.Spec{MemoryMB: 64, DiskMB: 4096}
	if err := admitErr(onDisk, ctx, sc, "create", &big, live); err != nil {
		t.Fatalf("positive control: layers on disk: %v", err)
	}
	ram, _ := newAdmission(t, "acme", q)
	ram.CountDiskAsMemory()
	err := admitErr(ram, ctx, sc, "create", &big, live)
	want := "tenant acme: memory quota 1024 MiB would be exceeded (in use 640 MiB, requested 4160 MiB: 64 memory + 4096 disk, which is RAM on this server)"
	if errs.CodeOf(err) != errs.CodeLimit || errs.Public(err) != want {
		t.Fatalf("tmpfs layers: %v, want %q", err, want)
	}
	small := sandbox.Spec{MemoryMB: 64, DiskMB: 256}
	if err := admitErr(ram, ctx, sc, "create", &small, live); err != nil {
		t.Fatalf("what fits: %v", err)
	}
	// The admitted one is in flight, its disk included.
	if err := admitErr(ram, ctx, sc, "create", &small, live); errs.CodeOf(err) != errs.CodeLimit {
		t.Fatalf("past the quota with the in-flight create's disk: %v", err)
	}
}
