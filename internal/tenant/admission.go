package tenant

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// reservationTTL is a safety net: a reservation whose done was never
// called (a bug) stops counting after it.
const reservationTTL = 10 * time.Minute

// Admission enforces tenant quotas; it implements sandbox.Admission.
type Admission struct {
	tenants *Store
	limits  sandbox.Limits
	now     func() time.Time
	ramDisk bool // writable layers are tmpfs: their disk is memory (CountDiskAsMemory)

	mu      sync.Mutex
	buckets map[string]*bucket
	pending map[string][]*reservation
}

// reservation is an admitted create that the manager has not finished:
// without it, concurrent creates would all see the same usage and together
// exceed the quota. Between the new sandbox being listed and done being
// called it is counted twice — a conservative error, never a missed one.
type reservation struct {
	at    time.Time
	cpu   float64
	memMB int64
}

// NewAdmission returns the quota enforcer. limits are the server's (the
// manager's Config.Limits): their defaults tell what an unset spec field
// will become.
func NewAdmission(t *Store, limits sandbox.Limits) *Admission {
	return &Admission{tenants: t, limits: limits, now: time.Now,
		buckets: map[string]*bucket{}, pending: map[string][]*reservation{}}
}

// CountDiskAsMemory makes the memory quota count each sandbox's disk too:
// where writable layers are tmpfs, a sandbox's files are RAM (a tenant
// with a 128 MiB memory quota pinned 4 GiB through its layers — memory
// exhaustion past the quota). Call it before the first Admit.
func (a *Admission) CountDiskAsMemory() { a.ramDisk = true }

// memOf is what a spec holds against the memory quota.
func (a *Admission) memOf(s sandbox.Spec) int64 {
	if a.ramDisk {
		return s.MemoryMB + s.DiskMB
	}
	return s.MemoryMB
}

// Tenants is the store the admission reads.
func (a *Admission) Tenants() *Store { return a.tenants }

// Admit implements sandbox.Admission for ops "create", "timeout" and
// "network"; other ops are admitted.
func (a *Admission) Admit(ctx context.Context, sc sandbox.Scope, op string, spec *sandbox.Spec, live func() []sandbox.Sandbox) (func(), error) {
	switch op {
	case "create", "timeout", "network":
	default:
		return nil, nil
	}
	t, err := a.tenant(ctx, sc.Tenant)
	if err != nil {
		return nil, err
	}
	q := t.Quotas
	switch op {
	case "timeout":
		if q.MaxTimeoutS > 0 && spec.TimeoutS > q.MaxTimeoutS {
			return nil, errs.New(errs.CodeForbidden, "tenant %s: per-sandbox timeout ceiling is %d s (requested %d s)", t.Name, q.MaxTimeoutS, spec.TimeoutS)
		}
		return nil, nil
	case "network":
		return nil, checkNetwork(t.Name, q, spec.Network)
	}
	applyDefaults(spec, q.Defaults)
	a.clampDefaults(spec, q)
	eff := a.effective(*spec)
	if err := checkCeilings(t.Name, q, eff); err != nil {
		return nil, err
	}
	if err := checkRuntime(t.Name, q, eff); err != nil {
		return nil, err
	}
	if err := checkNetwork(t.Name, q, spec.Network); err != nil {
		return nil, err
	}
	return a.reserve(t.Name, q, eff, live)
}

func (a *Admission) tenant(ctx context.Context, name string) (Tenant, error) {
	t, err := a.tenants.Get(ctx, name)
	if errs.CodeOf(err) == errs.CodeNotFound {
		return Tenant{}, errs.New(errs.CodeForbidden, "tenant %q does not exist", clip(name))
	}
	return t, err
}

// AdmitSecrets reports whether tenant may give its sandboxes the named
// secrets (nil when it may, or when names is empty). The secret-injection
// code calls it before a sandbox gets secrets; its signature uses only
// built-in types so a caller can reach it through a local interface.
func (a *Admission) AdmitSecrets(ctx context.Context, tenant string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	return a.refuseIf(ctx, tenant, func(q Quotas) bool { return q.DenySecrets }, "secrets are not allowed (deny_secrets quota)")
}

// AdmitExposedPorts reports whether tenant may expose the given sandbox
// ports (nil when it may, or when ports is empty); like AdmitSecrets, for
// the port-exposure code to call.
func (a *Admission) AdmitExposedPorts(ctx context.Context, tenant string, ports []int) error {
	if len(ports) == 0 {
		return nil
	}
	return a.refuseIf(ctx, tenant, func(q Quotas) bool { return q.DenyExposedPorts }, "exposed ports are not allowed (deny_exposed_ports quota)")
}

// refuseIf refuses (forbidden, saying why) when tenant's quotas deny
// something, or when tenant does not exist.
func (a *Admission) refuseIf(ctx context.Context, tenant string, denied func(Quotas) bool, why string) error {
	t, err := a.tenant(ctx, tenant)
	if err != nil {
		return err
	}
	if denied(t.Quotas) {
		return errs.New(errs.CodeForbidden, "tenant %s: %s", t.Name, why)
	}
	return nil
}

func applyDefaults(s *sandbox.Spec, d Defaults) {
	sandbox.FillDefaults(s, sandbox.Spec{Template: d.Template, CPU: d.CPU, MemoryMB: d.MemoryMB, DiskMB: d.DiskMB,
		Pids: d.Pids, TimeoutS: d.TimeoutS, Runtime: d.Runtime})
}

// clampDefaults lowers what a spec leaves unset to the tenant's ceiling
// when the server's default is above it: asking for nothing in particular
// must not be refused.
func (a *Admission) clampDefaults(s *sandbox.Spec, q Quotas) {
	d := a.limits.Default
	if s.CPU == 0 && q.MaxCPU > 0 && d.CPU > q.MaxCPU {
		s.CPU = q.MaxCPU
	}
	if s.MemoryMB == 0 && q.MaxMemoryMB > 0 && d.MemoryMB > q.MaxMemoryMB {
		s.MemoryMB = q.MaxMemoryMB
	}
	if s.DiskMB == 0 && q.MaxDiskMB > 0 && d.DiskMB > q.MaxDiskMB {
		s.DiskMB = q.MaxDiskMB
	}
	if s.Pids == 0 && q.MaxPids > 0 && d.Pids > q.MaxPids {
		s.Pids = q.MaxPids
	}
	if s.TimeoutS == 0 && q.MaxTimeoutS > 0 && d.TimeoutS > q.MaxTimeoutS {
		s.TimeoutS = q.MaxTimeoutS
	}
	// A tenant required to use gVisor (runtimes: ["gvisor"]) on a server
	// whose default is native gets its first allowed runtime.
	if s.Runtime == "" && len(q.Runtimes) > 0 && !contains(q.Runtimes, runtimeOf(d)) {
		s.Runtime = q.Runtimes[0]
	}
}

func runtimeOf(s sandbox.Spec) string {
	if s.Runtime == "" {
		return wire.RuntimeNative
	}
	return s.Runtime
}

// checkRuntime applies the tenant's runtime policy (regulated tenants can
// be held to the gVisor tier, whatever their keys ask for).
func checkRuntime(tenant string, q Quotas, s sandbox.Spec) error {
	if rt := runtimeOf(s); len(q.Runtimes) > 0 && !contains(q.Runtimes, rt) {
		return errs.New(errs.CodeForbidden, "tenant %s: runtime %q is not allowed (allowed: %s)", tenant, clip(rt), strings.Join(q.Runtimes, ", "))
	}
	return nil
}

// effective is what the spec will be once the server's defaults apply.
func (a *Admission) effective(s sandbox.Spec) sandbox.Spec {
	d := a.limits.Default
	applyDefaults(&s, Defaults{Template: d.Template, CPU: d.CPU, MemoryMB: d.MemoryMB, DiskMB: d.DiskMB, Pids: d.Pids, TimeoutS: d.TimeoutS, Runtime: d.Runtime})
	return s
}

func checkCeilings(tenant string, q Quotas, s sandbox.Spec) error {
	deny := func(format string, args ...any) error {
		return errs.New(errs.CodeForbidden, "tenant %s: "+format, append([]any{tenant}, args...)...)
	}
	switch {
	case q.MaxCPU > 0 && s.CPU > q.MaxCPU:
		return deny("per-sandbox CPU ceiling is %g cores (requested %g)", q.MaxCPU, s.CPU)
	case q.MaxMemoryMB > 0 && s.MemoryMB > q.MaxMemoryMB:
		return deny("per-sandbox memory ceiling is %d MiB (requested %d MiB)", q.MaxMemoryMB, s.MemoryMB)
	case q.MaxDiskMB > 0 && s.DiskMB > q.MaxDiskMB:
		return deny("per-sandbox disk ceiling is %d MiB (requested %d MiB)", q.MaxDiskMB, s.DiskMB)
	case q.MaxPids > 0 && s.Pids > q.MaxPids:
		return deny("per-sandbox pids ceiling is %d (requested %d)", q.MaxPids, s.Pids)
	case q.MaxTimeoutS > 0 && s.TimeoutS > q.MaxTimeoutS:
		return deny("per-sandbox timeout ceiling is %d s (requested %d s)", q.MaxTimeoutS, s.TimeoutS)
	case q.MaxTotalCPU > 0 && s.CPU > q.MaxTotalCPU:
		return deny("CPU quota %g cores is smaller than the request (%g cores)", q.MaxTotalCPU, s.CPU)
	case q.MaxTotalMemoryMB > 0 && s.MemoryMB > q.MaxTotalMemoryMB:
		return deny("memory quota %d MiB is smaller than the request (%d MiB)", q.MaxTotalMemoryMB, s.MemoryMB)
	}
	return nil
}

// checkNetwork applies the tenant's network policy to a spec's network
// section, whatever modes the server offers: "none" is always allowed.
func checkNetwork(tenant string, q Quotas, n *sandbox.Network) error {
	mode, allow := sandbox.NetNone, []string(nil)
	if n != nil {
		if n.Mode != "" {
			mode = n.Mode
		}
		allow = n.Allow
	}
	if mode != sandbox.NetNone && len(q.NetworkModes) > 0 && !contains(q.NetworkModes, mode) {
		return errs.New(errs.CodeForbidden, "tenant %s: network mode %q is not allowed (allowed: %s)",
			tenant, clip(mode), strings.Join(append([]string{sandbox.NetNone}, without(q.NetworkModes, sandbox.NetNone)...), ", "))
	}
	if len(q.AllowedDomains) == 0 {
		return nil
	}
	if mode == "open" {
		return errs.New(errs.CodeForbidden, "tenant %s: network mode \"open\" is not allowed: the tenant may only reach its allowed domains", tenant)
	}
	for _, d := range allow {
		if !covered(stripPort(d), q.AllowedDomains) {
			return errs.New(errs.CodeForbidden, "tenant %s: domain %q is not among the tenant's allowed domains", tenant, clip(d))
		}
	}
	// Destinations given other than as domains (IP ranges...) would get
	// around the domain list.
	if field := otherDestinations(n); field != "" {
		return errs.New(errs.CodeForbidden, "tenant %s: network.%s is not allowed: the tenant may only reach its allowed domains", tenant, field)
	}
	return nil
}

// stripPort removes a ":port" suffix from an allow entry.
func stripPort(d string) string {
	if i := strings.LastIndexByte(d, ':'); i > 0 {
		if p := d[i+1:]; p != "" && strings.Trim(p, "0123456789") == "" {
			return d[:i]
		}
	}
	return d
}

// otherDestinations names the first non-empty list in n besides allow,
// read through JSON so that fields the network layer adds are covered
// without this package naming them.
func otherDestinations(n *sandbox.Network) string {
	if n == nil {
		return ""
	}
	b, err := json.Marshal(n)
	if err != nil {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return ""
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k == "mode" || k == "allow" {
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(fields[k], &list) == nil && len(list) > 0 {
			return k
		}
	}
	return ""
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// reserve checks the count, total and rate quotas against the tenant's
// usage — its live sandboxes, listed under the lock so that no create can
// slip between the listing and the check, plus the admitted creates not
// yet finished — and, if they pass, records this create as unfinished
// until the returned func is called.
func (a *Admission) reserve(tenant string, q Quotas, eff sandbox.Spec, live func() []sandbox.Sandbox) (func(), error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	var list []sandbox.Sandbox
	if live != nil {
		list = live()
	}
	use := a.usage(tenant, list, now)
	if q.MaxSandboxes > 0 && use.Sandboxes+1 > q.MaxSandboxes {
		return nil, errs.New(errs.CodeLimit, "tenant %s: sandbox quota %d reached (%d running or starting)", tenant, q.MaxSandboxes, use.Sandboxes)
	}
	if q.MaxTotalCPU > 0 && use.CPU+eff.CPU > q.MaxTotalCPU+1e-9 {
		return nil, errs.New(errs.CodeLimit, "tenant %s: CPU quota %g cores would be exceeded (in use %g, requested %g)", tenant, q.MaxTotalCPU, use.CPU, eff.CPU)
	}
	if q.MaxTotalMemoryMB > 0 && use.MemoryMB+a.memOf(eff) > q.MaxTotalMemoryMB {
		return nil, errs.New(errs.CodeLimit, "tenant %s: memory quota %d MiB would be exceeded (in use %d MiB, requested %d MiB%s)",
			tenant, q.MaxTotalMemoryMB, use.MemoryMB, a.memOf(eff), a.diskNote(eff))
	}
	if q.CreatePerMinute > 0 {
		b := a.buckets[tenant]
		if b == nil {
			b = &bucket{}
			a.buckets[tenant] = b
		}
		if ok, wait := b.take(now, q.CreatePerMinute/60, burst(q)); !ok {
			return nil, newRateLimitError(tenant, q.CreatePerMinute, wait)
		}
	}
	r := &reservation{at: now, cpu: eff.CPU, memMB: a.memOf(eff)}
	a.pending[tenant] = append(a.pending[tenant], r)
	var once sync.Once
	return func() { once.Do(func() { a.release(tenant, r) }) }, nil
}

func (a *Admission) release(tenant string, r *reservation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	list := a.pending[tenant]
	for i, x := range list {
		if x == r {
			a.pending[tenant] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(a.pending[tenant]) == 0 {
		delete(a.pending, tenant)
	}
}

// Usage is what a tenant's sandboxes hold.
type Usage = wire.Usage

// UsageOf sums the running sandboxes of live (failed ones hold nothing).
func UsageOf(live []sandbox.Sandbox) Usage {
	var u Usage
	for _, sb := range live {
		if sb.State != sandbox.StateRunning {
			continue
		}
		u.Sandboxes++
		u.CPU += sb.Spec.CPU
		u.MemoryMB += sb.Spec.MemoryMB
	}
	return u
}

// usage is UsageOf(live) plus the tenant's unfinished creates (those
// older than reservationTTL are dropped). Called with a.mu held.
func (a *Admission) usage(tenant string, live []sandbox.Sandbox, now time.Time) Usage {
	u := UsageOf(live)
	if a.ramDisk {
		for _, sb := range live {
			if sb.State == sandbox.StateRunning {
				u.MemoryMB += sb.Spec.DiskMB
			}
		}
	}
	list := a.pending[tenant]
	kept := list[:0]
	for _, r := range list {
		if now.Sub(r.at) > reservationTTL {
			continue
		}
		kept = append(kept, r)
		u.Sandboxes++
		u.CPU += r.cpu
		u.MemoryMB += r.memMB
	}
	clear(list[len(kept):])
	if len(kept) == 0 {
		delete(a.pending, tenant)
	} else {
		a.pending[tenant] = kept
	}
	return u
}

// diskNote says that the request counts the sandbox's RAM-backed disk.
func (a *Admission) diskNote(s sandbox.Spec) string {
	if !a.ramDisk || s.DiskMB == 0 {
		return ""
	}
	return fmt.Sprintf(": %d memory + %d disk, which is RAM on this server", s.MemoryMB, s.DiskMB)
}

// SnapshotQuotaBytes is how many bytes of snapshots tenant may hold
// together (0: no tenant quota); for the snapshot code to call, like
// AdmitSecrets.
func (a *Admission) SnapshotQuotaBytes(ctx context.Context, tenant string) (int64, error) {
	t, err := a.tenant(ctx, tenant)
	if err != nil {
		return 0, err
	}
	return t.Quotas.MaxSnapshotMB << 20, nil
}

// TemplateQuota is tenant's template allowance: how many templates of
// its own, and how many MiB their layers may take (0: unlimited).
func (a *Admission) TemplateQuota(ctx context.Context, tenant string) (count int, bytes int64, err error) {
	t, err := a.tenant(ctx, tenant)
	if err != nil {
		return 0, 0, err
	}
	return t.Quotas.MaxTemplates, t.Quotas.MaxTemplateMB << 20, nil
}

// PausedQuota is tenant's max_paused (0: no bound).
func (a *Admission) PausedQuota(ctx context.Context, tenant string) (int, error) {
	t, err := a.tenant(ctx, tenant)
	if err != nil {
		return 0, err
	}
	return t.Quotas.MaxPaused, nil
}

// ForkQuota is tenant's max_forks (0: the server's bound).
func (a *Admission) ForkQuota(ctx context.Context, tenant string) (int, error) {
	t, err := a.tenant(ctx, tenant)
	if err != nil {
		return 0, err
	}
	return t.Quotas.MaxForks, nil
}

// VolumeQuotaBytes is how many bytes of volumes (their sizes summed)
// tenant may hold (0: no tenant quota).
func (a *Admission) VolumeQuotaBytes(ctx context.Context, tenant string) (int64, error) {
	t, err := a.tenant(ctx, tenant)
	if err != nil {
		return 0, err
	}
	return t.Quotas.MaxVolumeMB << 20, nil
}
