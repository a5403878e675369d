package sandbox

// Hibernation (docs/state.md, docs/gvisor.md): a gVisor sandbox's
// processes, memory and files are checkpointed to an image under the data
// directory and its instance is destroyed (RAM, cgroup, layer and veth
// released); the sandbox stays listed, state "hibernated", with its id,
// spec and tokens. Resume (or, with auto_resume, the next call that needs
// it) restores the image under the same id, network attached again. The
// timeout clock is stopped while hibernated, bounded by paused_timeout_s,
// as while paused.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/wire"
)

// StateHibernated is a sandbox that sleeps as its checkpoint image.
const StateHibernated = wire.StateHibernated

// wakeWait bounds an automatic wake (auto_resume) made for a call: a
// restore reads the whole memory back.
const wakeWait = time.Minute

// causeTimeoutHibernate is what hibernated a sandbox at its timeout
// (on_timeout: hibernate).
const causeTimeoutHibernate = "timeout"

// hibernator is a runtime that can put a sandbox to sleep as an image
// (gvisor.Backend).
type hibernator interface {
	Hibernate(ctx context.Context, inst runtime.Instance) (int64, error)
	Wake(ctx context.Context, cfg runtime.Config) (runtime.Instance, error)
	DropHibernated(id string) error
	SweepHibernated(keep map[string]bool) int
}

// errNativeMemory says why the native runtime keeps no memory.
func errNativeMemory(what string) error {
	return errs.New(errs.CodeUnsupported, "the native runtime cannot %s: CRIU would restore its processes without their Landlock domain (silently unconfined) and cannot restore a sealed-memfd executable; create the sandbox with runtime \"gvisor\"", what)
}

// errVolumeMemory says why a sandbox with volumes keeps no memory image
// (docs/gvisor.md, "Volumes"): its memory holds the volume's open files
// and cached contents, and the volume lives on outside the image.
func errVolumeMemory(what string) error {
	return errs.New(errs.CodeUnsupported, "a sandbox with volumes cannot %s: its memory holds the volume's open files and cached contents, which live on and change outside any image, so a restore could not be faithful; keep the state in the volume and start a new sandbox on it", what)
}

// hibernatorOf is spec's runtime as a hibernator, or why not.
func (m *Manager) hibernatorOf(spec Spec, what string) (hibernator, error) {
	be := m.backendOf(spec)
	if h, ok := be.(hibernator); ok {
		if len(spec.Volumes) > 0 {
			return nil, errVolumeMemory(what)
		}
		return h, nil
	}
	if isNative(spec) {
		return nil, errNativeMemory(what)
	}
	return nil, errs.New(errs.CodeUnsupported, "the %s runtime cannot %s", be.Name(), what)
}

// asleep stands in for the instance of a hibernated sandbox: there is no
// agent to talk to (calls pass gate first, which wakes it or refuses).
type asleep struct {
	id     string
	layers []string // the image template's layers it sleeps on (templates_image.go)
}

var never = make(chan struct{})

func (a asleep) ID() string              { return a.id }
func (a asleep) Guest() *guestapi.Client { return nil }
func (a asleep) Record() json.RawMessage {
	b, _ := json.Marshal(asleepRecord{Hibernated: true, Layers: a.layers})
	return b
}
func (a asleep) Done() <-chan struct{}          { return never }
func (a asleep) SetLimits(runtime.Limits) error { return errHibernated() }
func (a asleep) Stats() (runtime.Stats, error)  { return runtime.Stats{}, nil }
func errHibernated() error {
	return errs.New(errs.CodeSandboxPaused, "sandbox is hibernated: resume it first (or create it with auto_resume)")
}

// asleepRecord is a hibernated sandbox's runtime record in the store.
type asleepRecord struct {
	Hibernated bool     `json:"hibernated"`
	Layers     []string `json:"layers,omitempty"`
}

func isAsleep(inst runtime.Instance) (asleep, bool) { a, ok := inst.(asleep); return a, ok }

// Hibernate checkpoints sandbox id to disk and releases its RAM. A
// hibernated sandbox answers as it is; a paused one is thawed for the
// checkpoint (its remaining life is kept).
func (m *Manager) Hibernate(ctx context.Context, sc Scope, id string) (Sandbox, error) {
	if err := sc.Need(rights.Write); err != nil {
		return Sandbox{}, err
	}
	b, err := m.find(sc, id)
	if err != nil {
		return Sandbox{}, err
	}
	return m.hibernate(ctx, b, sc.Actor, causeCall)
}

func (m *Manager) hibernate(ctx context.Context, b *box, actor, cause string) (Sandbox, error) {
	b.pz.op.Lock()
	defer b.pz.op.Unlock()
	b.mu.Lock()
	sb, gone, inst := b.sb, b.gone, b.inst
	b.mu.Unlock()
	switch {
	case gone:
		return Sandbox{}, errs.NotFound("sandbox not found")
	case sb.State == StateHibernated:
		return sb, nil
	case sb.State != StateRunning && sb.State != StatePaused:
		return Sandbox{}, errs.New(errs.CodeSandboxNotActive, "sandbox is %s: %s", sb.State, sb.Reason)
	}
	h, err := m.hibernatorOf(sb.Spec, "hibernate sandboxes")
	if err != nil {
		return Sandbox{}, err
	}
	data := map[string]any{"cause": cause, "from": string(sb.State)}
	if err := m.event(ctx, Event{Kind: "sandbox.hibernate", Phase: "intent", Tenant: sb.Tenant, Actor: actor, Sandbox: sb.ID, Data: data}); err != nil {
		return Sandbox{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	result := func(err error, extra map[string]any) {
		ev := Event{Kind: "sandbox.hibernate", Phase: "result", Tenant: sb.Tenant, Actor: actor, Sandbox: sb.ID, Data: data, Duration: time.Since(start)}
		for k, v := range extra {
			data[k] = v
		}
		if err != nil {
			ev.Error, ev.Code = errs.Public(err), string(errs.CodeOf(err))
		}
		_ = m.event(ctx, ev)
	}
	if sb.State == StatePaused {
		// A frozen sentry cannot save itself: thaw it for the checkpoint
		// (its clock stays stopped: the remaining life was kept at pause).
		p, err := runtime.PauserOf(m.backendOf(sb.Spec).Name(), inst)
		if err == nil {
			err = p.Resume(ctx)
		}
		if err != nil {
			err = errs.Wrap(errs.CodeOf(err), err, "the paused sandbox could not be thawed for hibernation")
			result(err, nil)
			return Sandbox{}, err
		}
	}
	b.mu.Lock()
	b.pz.hibernating = true
	layers := b.layers
	b.mu.Unlock()
	// Its layers stay pinned while it sleeps: this lease is taken before
	// the instance (whose lease ends with it) is gone.
	sleepLease, lerr := m.leaseLayers(sb.Spec.Template, layers) // templates_image.go
	if lerr != nil {
		m.log.Warn("hibernating sandbox: cannot pin its template's layers", "sandbox", sb.ID, "err", lerr)
		sleepLease = func() {}
	}
	n, err := h.Hibernate(ctx, inst)
	b.mu.Lock()
	b.pz.hibernating = false
	if err == nil {
		b.inst = asleep{id: sb.ID, layers: layers}
		b.sleepLease = sleepLease
	}
	b.mu.Unlock()
	if err != nil {
		sleepLease()
		m.log.Error("hibernate", "sandbox", sb.ID, "err", err)
		select {
		case <-inst.Done():
			// The sentry is gone without a complete image.
			m.instFailed(b, inst)
		default:
			if sb.State == StatePaused {
				if p, perr := runtime.PauserOf(m.backendOf(sb.Spec).Name(), inst); perr == nil {
					_ = p.Pause(context.WithoutCancel(ctx))
				}
			}
		}
		if errs.CodeOf(err) == errs.CodeInternal {
			err = errs.Wrap(errs.CodeInternal, err, "the sandbox could not be hibernated")
		}
		result(err, nil)
		return Sandbox{}, err
	}
	now := time.Now()
	b.mu.Lock()
	left := time.Until(b.sb.ExpiresAt)
	if sb.State == StatePaused {
		left = b.pz.remaining
	} else if cause == causeTimeoutHibernate || left < time.Second {
		// Hibernated by its timeout: a resume gives it a whole timeout.
		left = time.Duration(b.sb.Spec.TimeoutS) * time.Second
	}
	b.fallAsleep(StateHibernated, left, now)
	b.mu.Unlock()
	if err := m.persist(context.WithoutCancel(ctx), b, false); err != nil {
		// The image is complete and the instance gone: the sandbox
		// lives only in memory until the store takes it again.
		m.log.Error("hibernation not recorded", "sandbox", sb.ID, "err", err)
	}
	m.arm(b)
	result(nil, map[string]any{"image_bytes": n})
	return m.snapshotOf(b), nil
}

// wake restores hibernated b. A full disk leaves it hibernated (worth a
// retry); an image that cannot be restored (corrupt, another gVisor, its
// template gone) fails the sandbox with the reason and drops the image.
func (m *Manager) wake(ctx context.Context, b *box, actor, cause string) (Sandbox, error) {
	b.pz.op.Lock()
	defer b.pz.op.Unlock()
	b.mu.Lock()
	sb, gone := b.sb, b.gone
	b.mu.Unlock()
	switch {
	case gone:
		return Sandbox{}, errs.NotFound("sandbox not found")
	case sb.State == StateRunning:
		return sb, nil
	case sb.State != StateHibernated:
		return Sandbox{}, errs.New(errs.CodeSandboxNotActive, "sandbox is %s: %s", sb.State, sb.Reason)
	}
	h, err := m.hibernatorOf(sb.Spec, "restore hibernated sandboxes")
	if err != nil {
		return Sandbox{}, err
	}
	// Asleep, it holds none of the tenant's CPU, memory or running
	// sandboxes: waking takes them again, so it is admitted like a create
	// (else hibernate-create-wake would run past a quota). Refused, it
	// stays hibernated. The reservation ends once it is running (deferred).
	aspec := sb.Spec
	admitted, err := m.admit(ctx, Scope{Tenant: sb.Tenant, Actor: actor}, "create", &aspec)
	defer admitted()
	if err != nil {
		_ = m.event(ctx, Event{Kind: "sandbox.restore", Phase: "result", Tenant: sb.Tenant, Actor: actor, Sandbox: sb.ID,
			Error: errs.Public(err), Code: string(errs.CodeOf(err))})
		return Sandbox{}, err
	}
	data := map[string]any{"cause": cause}
	if err := m.event(ctx, Event{Kind: "sandbox.restore", Phase: "intent", Tenant: sb.Tenant, Actor: actor, Sandbox: sb.ID, Data: data}); err != nil {
		return Sandbox{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	b.mu.Lock()
	a, _ := isAsleep(b.inst)
	b.mu.Unlock()
	inst, err := m.wakeInstance(ctx, h, sb, a.layers)
	res := Event{Kind: "sandbox.restore", Phase: "result", Tenant: sb.Tenant, Actor: actor, Sandbox: sb.ID, Data: data, Duration: time.Since(start)}
	if err != nil {
		m.log.Error("wake", "sandbox", sb.ID, "err", err)
		res.Error, res.Code = errs.Public(err), string(errs.CodeOf(err))
		_ = m.event(ctx, res)
		if errs.CodeOf(err) == errs.CodeLimit || errs.CodeOf(err) == errs.CodeUnavailable || ctx.Err() != nil {
			return Sandbox{}, err
		}
		m.failAsleep(context.WithoutCancel(ctx), b, h, "the sandbox could not be restored from hibernation: "+errs.Public(err))
		if errs.CodeOf(err) == errs.CodeInternal {
			err = errs.Wrap(errs.CodeInternal, err, "the sandbox could not be restored from hibernation")
		}
		return Sandbox{}, err
	}
	now := time.Now()
	b.mu.Lock()
	b.inst = inst
	b.layers = a.layers
	sleepLease := b.sleepLease
	b.sleepLease = nil
	b.sb.State = StateRunning
	b.sb.ExpiresAt = now.Add(b.pz.remaining)
	b.sb.PausedAt = nil
	b.sb.RemainingMS = 0
	b.mu.Unlock()
	if sleepLease != nil {
		sleepLease() // the woken instance holds its own lease
	}
	b.pz.active.Store(now.UnixNano())
	if err := m.persist(context.WithoutCancel(ctx), b, false); err != nil {
		m.log.Error("wake not recorded", "sandbox", sb.ID, "err", err)
	}
	m.arm(b)
	m.armIdle(b)
	m.watch(b)
	_ = m.event(ctx, res)
	return m.snapshotOf(b), nil
}

func (m *Manager) wakeInstance(ctx context.Context, h hibernator, sb Sandbox, layers []string) (runtime.Instance, error) {
	// The tenant's template, as at create: on the layers it was made from
	// (pinned while it slept, whatever the template's name points to now),
	// pinned again for as long as the woken sandbox runs.
	tpl, err := m.templateFor(sb.Tenant, sb.Spec.Template)
	if err != nil && errs.CodeOf(err) != errs.CodeNotFound {
		return nil, err
	}
	if err != nil {
		tpl = nil
	}
	if tpl, err = m.templateAt(tpl, sb.Spec.Template, layers); err != nil { // templates_image.go
		return nil, err
	}
	release, err := m.leaseTemplate(sb.Spec, tpl) // templates_image.go
	if err != nil {
		return nil, err
	}
	inst, err := h.Wake(ctx, runtime.Config{ID: sb.ID, Tenant: sb.Tenant, Template: tpl, Limits: runtimeLimits(sb.Spec),
		Hostname: sb.ID, Network: runtimeNetwork(sb.Spec.Network)})
	if err != nil {
		release()
		return nil, err
	}
	m.holdWhileLive(inst, release)
	return inst, nil
}

// failAsleep marks hibernated b failed with reason and drops its image:
// it stays listed (failed) until deleted, as a sandbox whose agent died.
func (m *Manager) failAsleep(ctx context.Context, b *box, h hibernator, reason string) {
	b.mu.Lock()
	b.sb.State, b.sb.Reason = StateFailed, reason
	b.sb.PausedAt, b.sb.RemainingMS = nil, 0
	b.mu.Unlock()
	if err := h.DropHibernated(b.sb.ID); err != nil {
		m.log.Error("drop hibernation image", "sandbox", b.sb.ID, "err", err)
	}
	m.releaseSleepLease(b)
	_ = m.event(ctx, Event{Kind: "sandbox.fail", Phase: "event", Tenant: b.sb.Tenant, Sandbox: b.sb.ID, Error: reason})
	_ = m.db.SetSandboxState(ctx, b.sb.ID, string(StateFailed))
}

// dropAsleep removes the image of a hibernated sandbox being destroyed.
func (m *Manager) dropAsleep(b *box) {
	if h, err := m.hibernatorOf(b.sb.Spec, "hibernate"); err == nil {
		if err := h.DropHibernated(b.sb.ID); err != nil {
			m.log.Error("drop hibernation image", "sandbox", b.sb.ID, "err", err)
		}
	}
	m.releaseSleepLease(b)
}

// releaseSleepLease unpins a hibernated sandbox's layers (deleted, or
// failed to wake).
func (m *Manager) releaseSleepLease(b *box) {
	b.mu.Lock()
	rel := b.sleepLease
	b.sleepLease = nil
	b.mu.Unlock()
	if rel != nil {
		rel()
	}
}

// sweepHibernated drops every runtime's images of sandboxes not in keep.
func (m *Manager) sweepHibernated(keep map[string]bool) int {
	n := 0
	for _, name := range m.runtimeNames() {
		if h, ok := m.rts[name].(hibernator); ok {
			n += h.SweepHibernated(keep)
		}
	}
	return n
}

// Hibernate checkpoints a sandbox to disk (Manager.Hibernate).
func (c *Caller) Hibernate(ctx context.Context, id string) (Sandbox, error) {
	return c.m.Hibernate(ctx, rights.FromContext(ctx), id)
}

// adoptAsleep registers a sandbox recorded hibernated (Start): nothing
// runs, so nothing is reattached; its clock (paused_timeout_s) is armed.
// One whose runtime this server lacks stays listed: resume says why, and
// its image is kept for a server that has it.
func (m *Manager) adoptAsleep(r store.Sandbox) bool {
	var spec Spec
	if err := json.Unmarshal(r.Spec, &spec); err != nil {
		return false
	}
	pausedAt := r.PausedAt
	// Its layers are pinned again before anything (a layer GC) can run.
	var rec asleepRecord
	_ = json.Unmarshal(r.Runtime, &rec)
	sleepLease, err := m.leaseLayers(spec.Template, rec.Layers) // templates_image.go
	if err != nil {
		m.log.Warn("hibernated sandbox: cannot pin its template's layers", "sandbox", r.ID, "err", err)
		sleepLease = func() {}
	}
	b := &box{inst: asleep{id: r.ID, layers: rec.Layers}, sleepLease: sleepLease, sb: Sandbox{ID: r.ID, Tenant: r.Tenant, State: StateHibernated, Spec: spec,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, PausedAt: &pausedAt, RemainingMS: r.Remaining.Milliseconds()}}
	b.pz.remaining = r.Remaining
	m.mu.Lock()
	m.boxes[r.ID] = b
	m.mu.Unlock()
	m.arm(b)
	return true
}
