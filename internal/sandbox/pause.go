package sandbox

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/wire"
)

// StatePaused is a sandbox frozen in place (docs/state.md).
const StatePaused = wire.StatePaused

// Lifecycle bounds.
const (
	DefaultPausedTimeout = 7 * 24 * time.Hour
	MaxPausedTimeout     = 30 * 24 * time.Hour
	// resumeWait bounds an automatic resume (auto_resume) made for a call.
	resumeWait = 10 * time.Second
)

// What paused a sandbox, or resumed it (the audit event's "cause").
const (
	causeCall    = "call"        // POST pause / resume
	causeTimeout = "timeout"     // on_timeout: pause
	causeIdle    = "idle"        // idle_pause_after_s
	causeAuto    = "auto_resume" // a call needing the sandbox
)

// pauseState is a box's pause bookkeeping (guarded by box.mu unless noted).
type pauseState struct {
	op        sync.Mutex    // one pause or resume at a time
	remaining time.Duration // life given back on resume, while paused
	idle      *time.Timer   // idle_pause_after_s
	active    atomic.Int64  // unix ns of the last exec/file/process/port call
	busy      atomic.Int32  // calls in flight (an exec running is not idle)
	// hibernating: a checkpoint is ending the instance by design (its
	// exit is not a failure; hibernate.go).
	hibernating bool
}

// normalizeLifecycle fills and checks the lifecycle fields of s.
func (l Limits) normalizeLifecycle(s *Spec) error {
	switch s.OnTimeout {
	case "":
		s.OnTimeout = wire.OnTimeoutKill
	case wire.OnTimeoutKill, wire.OnTimeoutPause:
	case wire.OnTimeoutHibernate:
		if isNative(*s) {
			return errNativeMemory("hibernate sandboxes (on_timeout: hibernate)")
		}
		if len(s.Volumes) > 0 {
			return errVolumeMemory("hibernate (on_timeout: hibernate)") // hibernate.go
		}
	default:
		return errs.Invalid("on_timeout must be %q, %q or %q", wire.OnTimeoutKill, wire.OnTimeoutPause, wire.OnTimeoutHibernate)
	}
	if s.PausedTimeoutS == 0 {
		s.PausedTimeoutS = int64(DefaultPausedTimeout / time.Second)
	}
	if s.PausedTimeoutS < 1 || s.PausedTimeoutS > int64(MaxPausedTimeout/time.Second) {
		return errs.Invalid("paused_timeout_s must be between 1 and %d", int64(MaxPausedTimeout/time.Second))
	}
	if s.IdlePauseAfterS < 0 || time.Duration(s.IdlePauseAfterS)*time.Second > l.MaxTimeout {
		return errs.Invalid("idle_pause_after_s must be between 0 (never) and %d", int64(l.MaxTimeout/time.Second))
	}
	return nil
}

// Pause freezes sandbox id: its processes stop, memory and connections
// stay, and its timeout clock stops (paused_timeout_s bounds the sleep).
// Pausing a paused sandbox answers it as it is.
func (m *Manager) Pause(ctx context.Context, sc Scope, id string) (Sandbox, error) {
	if err := sc.Need(rights.Write); err != nil {
		return Sandbox{}, err
	}
	b, err := m.find(sc, id)
	if err != nil {
		return Sandbox{}, err
	}
	return m.pause(ctx, b, sc.Actor, causeCall)
}

// Resume thaws paused sandbox id and restarts its timeout clock with the
// life it had left. Resuming a running sandbox answers it as it is.
func (m *Manager) Resume(ctx context.Context, sc Scope, id string) (Sandbox, error) {
	if err := sc.Need(rights.Write); err != nil {
		return Sandbox{}, err
	}
	b, err := m.find(sc, id)
	if err != nil {
		return Sandbox{}, err
	}
	if m.snapshotOf(b).State == StateHibernated { // hibernate.go
		return m.wake(ctx, b, sc.Actor, causeCall)
	}
	return m.resume(ctx, b, sc.Actor, causeCall)
}

func (m *Manager) snapshotOf(b *box) Sandbox {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb
}

// pauseOp is one pause or resume of a box, begun by beginPauseOp; its
// result is audited by done.
type pauseOp struct {
	m     *Manager
	kind  string // sandbox.pause or sandbox.resume
	actor string
	sb    Sandbox // as it was when the operation began
	p     runtime.Pauser
	data  map[string]any
	start time.Time
}

// beginPauseOp begins kind on b, which must be in state from to be
// changed to to; the caller holds b.pz.op. It audits the intent (failing
// closed). A box already in state to needs nothing: op is nil and sb is
// the sandbox.
func (m *Manager) beginPauseOp(ctx context.Context, b *box, actor, cause, kind string, from, to State) (op *pauseOp, sb Sandbox, err error) {
	b.mu.Lock()
	sb, gone := b.sb, b.gone
	b.mu.Unlock()
	switch {
	case gone:
		return nil, Sandbox{}, errs.NotFound("sandbox not found")
	case sb.State == to:
		return nil, sb, nil
	case sb.State != from:
		return nil, Sandbox{}, errs.New(errs.CodeSandboxNotActive, "sandbox is %s: %s", sb.State, sb.Reason)
	}
	p, err := runtime.PauserOf(m.rt.Name(), b.inst)
	if err != nil {
		return nil, Sandbox{}, err
	}
	op = &pauseOp{m: m, kind: kind, actor: actor, sb: sb, p: p, data: map[string]any{"cause": cause}}
	if err := m.event(ctx, Event{Kind: kind, Phase: "intent", Tenant: sb.Tenant, Actor: actor, Sandbox: sb.ID, Data: op.data}); err != nil {
		return nil, Sandbox{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	op.start = time.Now()
	return op, sb, nil
}

// done audits the operation's result: err, or its duration.
func (o *pauseOp) done(ctx context.Context, err error) {
	ev := Event{Kind: o.kind, Phase: "result", Tenant: o.sb.Tenant, Actor: o.actor, Sandbox: o.sb.ID, Data: o.data}
	if err != nil {
		ev.Error, ev.Code = errs.Public(err), string(errs.CodeOf(err))
	} else {
		ev.Duration = time.Since(o.start)
	}
	_ = o.m.event(ctx, ev)
}

func (m *Manager) pause(ctx context.Context, b *box, actor, cause string) (Sandbox, error) {
	b.pz.op.Lock()
	defer b.pz.op.Unlock()
	op, sb, err := m.beginPauseOp(ctx, b, actor, cause, "sandbox.pause", StateRunning, StatePaused)
	if op == nil {
		return sb, err
	}
	unlock, err := m.admitPaused(ctx, sb.Tenant) // quotas.go: max_paused
	defer unlock()
	if err != nil {
		op.done(ctx, err)
		return Sandbox{}, err
	}
	if err := op.p.Pause(ctx); err != nil {
		err = errs.Wrap(errs.CodeOf(err), err, "the sandbox could not be paused")
		m.log.Error("pause failed", "sandbox", sb.ID, "err", err)
		op.done(ctx, err)
		return Sandbox{}, err
	}
	now := time.Now()
	b.mu.Lock()
	prev := b.sb
	left := time.Until(b.sb.ExpiresAt)
	if cause == causeTimeout || left < time.Second {
		// Paused by its timeout: a resume gives it a whole timeout again
		// (else it would expire the moment it woke).
		left = time.Duration(b.sb.Spec.TimeoutS) * time.Second
	}
	b.fallAsleep(StatePaused, left, now)
	b.mu.Unlock()
	if err := m.persist(context.WithoutCancel(ctx), b, false); err != nil {
		// Not recorded: a restart would reattach it as running, frozen.
		// Undo, so what runs is what is recorded.
		_ = op.p.Resume(context.WithoutCancel(ctx))
		b.mu.Lock()
		b.sb = prev
		b.mu.Unlock()
		m.armIdle(b)
		op.done(ctx, err)
		return Sandbox{}, err
	}
	m.arm(b)
	op.done(ctx, nil)
	return m.snapshotOf(b), nil
}

func (m *Manager) resume(ctx context.Context, b *box, actor, cause string) (Sandbox, error) {
	b.pz.op.Lock()
	defer b.pz.op.Unlock()
	op, sb, err := m.beginPauseOp(ctx, b, actor, cause, "sandbox.resume", StatePaused, StateRunning)
	if op == nil {
		return sb, err
	}
	if err := op.p.Resume(ctx); err != nil {
		m.log.Error("resume failed", "sandbox", sb.ID, "err", err)
		if !op.p.Paused() {
			// Thawed, but its agent does not answer (a sandbox reattached
			// paused whose agent is not the one we started): it is
			// failed, as if it had exited.
			b.mu.Lock()
			b.sb.State = StateFailed
			b.sb.Reason = "the sandbox's agent did not answer after resume"
			b.mu.Unlock()
			_ = m.db.SetSandboxState(context.WithoutCancel(ctx), sb.ID, string(StateFailed))
			_ = m.rt.Destroy(context.WithoutCancel(ctx), b.inst)
		}
		err = errs.Wrap(errs.CodeUnavailable, err, "the sandbox could not be resumed")
		op.done(ctx, err)
		return Sandbox{}, err
	}
	now := time.Now()
	b.mu.Lock()
	b.sb.State = StateRunning
	b.sb.ExpiresAt = now.Add(b.pz.remaining)
	b.sb.PausedAt = nil
	b.sb.RemainingMS = 0
	b.mu.Unlock()
	b.pz.active.Store(now.UnixNano())
	if err := m.persist(context.WithoutCancel(ctx), b, false); err != nil {
		// Running but recorded paused: a restart re-freezes it, which
		// loses nothing; say so rather than pretend.
		m.log.Error("resume not recorded", "sandbox", sb.ID, "err", err)
	}
	m.arm(b)
	m.armIdle(b)
	op.done(ctx, nil)
	return m.snapshotOf(b), nil
}

// gate is what running sandbox calls pass: a paused sandbox answers
// sandbox_paused, or, with auto_resume, is resumed first. It also marks
// the sandbox active (idle_pause_after_s). Called without b.mu.
func (m *Manager) gate(sc Scope, b *box) error {
	b.pz.active.Store(time.Now().UnixNano())
	b.mu.Lock()
	st, auto := b.sb.State, b.sb.Spec.AutoResume
	b.mu.Unlock()
	if st == StateHibernated { // hibernate.go
		if !auto {
			return errHibernated()
		}
		ctx, cancel := context.WithTimeout(context.Background(), wakeWait)
		defer cancel()
		_, err := m.wake(ctx, b, sc.Actor, causeAuto)
		return err
	}
	if st != StatePaused {
		return nil
	}
	if !auto {
		return errs.New(errs.CodeSandboxPaused, "sandbox is paused: resume it first (or create it with auto_resume)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), resumeWait)
	defer cancel()
	_, err := m.resume(ctx, b, sc.Actor, causeAuto)
	return err
}

// Hold marks a call in flight on b (an exec): a sandbox is not idle while
// one runs. The returned func ends it.
func (b *box) hold() func() {
	b.pz.busy.Add(1)
	return func() {
		b.pz.active.Store(time.Now().UnixNano())
		b.pz.busy.Add(-1)
	}
}

// armIdle (re)starts the idle timer of a running sandbox with
// idle_pause_after_s, to fire that long after its last activity.
func (m *Manager) armIdle(b *box) { m.armIdleIn(b, -1) }

// armIdleIn (re)starts the idle timer of a running sandbox with
// idle_pause_after_s: to fire in wait, or (wait < 0) idle_pause_after_s
// after its last activity.
func (m *Manager) armIdleIn(b *box, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pz.idle != nil {
		b.pz.idle.Stop()
		b.pz.idle = nil
	}
	after := time.Duration(b.sb.Spec.IdlePauseAfterS) * time.Second
	if after <= 0 || b.gone || b.sb.State != StateRunning {
		return
	}
	if b.pz.active.Load() == 0 {
		b.pz.active.Store(time.Now().UnixNano())
	}
	if wait < 0 {
		wait = after - time.Since(time.Unix(0, b.pz.active.Load()))
	}
	id := b.sb.ID
	b.pz.idle = time.AfterFunc(max(wait, 0), func() { m.idleCheck(id) })
}

// idleCheck pauses a sandbox that has been idle long enough, or waits on.
func (m *Manager) idleCheck(id string) {
	b := m.lookup(id)
	if b == nil {
		return
	}
	b.mu.Lock()
	after := time.Duration(b.sb.Spec.IdlePauseAfterS) * time.Second
	running := b.sb.State == StateRunning && !b.gone
	b.mu.Unlock()
	if !running {
		return
	}
	idle := time.Since(time.Unix(0, b.pz.active.Load()))
	if b.pz.busy.Load() > 0 || idle < after {
		if b.pz.busy.Load() > 0 {
			b.pz.active.Store(time.Now().UnixNano())
		}
		m.armIdle(b)
		return
	}
	m.log.Info("sandbox idle; pausing", "sandbox", id, "idle", idle.Round(time.Second))
	if _, err := m.pause(context.Background(), b, "", causeIdle); err != nil {
		// Over max_paused (or a freezer hiccup): it stays awake and asks
		// again one period on. Re-armed from its last activity it would
		// fire at once, the idle time being past already.
		m.log.Warn("idle pause failed; retrying later", "sandbox", id, "err", err, "retry_in", after)
		m.armIdleIn(b, after)
	}
}

// expireOrPause is what a sandbox's clock running out does: a running
// sandbox with on_timeout: pause is paused; anything else is destroyed
// (a paused one has slept out paused_timeout_s). It reports whether the
// sandbox was paused instead.
func (m *Manager) expireOrPause(b *box) bool {
	b.mu.Lock()
	pause := b.sb.State == StateRunning && b.sb.Spec.OnTimeout == wire.OnTimeoutPause
	hib := b.sb.State == StateRunning && b.sb.Spec.OnTimeout == wire.OnTimeoutHibernate
	b.mu.Unlock()
	if hib {
		if _, err := m.hibernate(context.Background(), b, "", causeTimeoutHibernate); err != nil {
			m.log.Warn("hibernation at timeout failed; destroying", "sandbox", b.sb.ID, "err", err)
			return false
		}
		return true
	}
	if !pause {
		return false
	}
	if _, err := m.pause(context.Background(), b, "", causeTimeout); err != nil {
		m.log.Warn("pause at timeout failed; destroying", "sandbox", b.sb.ID, "err", err)
		return false
	}
	return true
}

// reattachPaused brings a reattached sandbox's backend state in line with
// its record: recorded paused, it is (re-)frozen; recorded running but
// found frozen (a crash during a pause), it is thawed.
func (m *Manager) reattachPaused(ctx context.Context, b *box, recorded State) error {
	p, err := runtime.PauserOf(m.rt.Name(), b.inst)
	if err != nil {
		if recorded == StatePaused {
			return err
		}
		return nil
	}
	switch {
	case recorded == StatePaused && !p.Paused():
		return p.Pause(ctx)
	case recorded != StatePaused && p.Paused():
		return p.Resume(ctx)
	}
	return nil
}

// Pause freezes a sandbox (Manager.Pause).
func (c *Caller) Pause(ctx context.Context, id string) (Sandbox, error) {
	return c.m.Pause(ctx, rights.FromContext(ctx), id)
}

// Resume thaws a paused sandbox (Manager.Resume).
func (c *Caller) Resume(ctx context.Context, id string) (Sandbox, error) {
	return c.m.Resume(ctx, rights.FromContext(ctx), id)
}

// fallAsleep marks b asleep (paused or hibernated) with left of its life
// kept for its wake: its clock stops, paused_timeout_s bounds the sleep,
// and its idle timer stops. The caller holds b.mu.
func (b *box) fallAsleep(state State, left time.Duration, now time.Time) {
	b.pz.remaining = left
	b.sb.State = state
	b.sb.PausedAt = &now
	b.sb.RemainingMS = left.Milliseconds()
	b.sb.ExpiresAt = now.Add(time.Duration(b.sb.Spec.PausedTimeoutS) * time.Second)
	if b.pz.idle != nil {
		b.pz.idle.Stop()
	}
}
