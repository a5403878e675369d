package sandbox

// A sandbox's lifetime: its expiry timer (with on_timeout's pause or
// hibernate) and the watch that notices a guest exiting on its own.

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
)

// arm (re)starts the box's expiry timer.
func (m *Manager) arm(b *box) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
	}
	id := b.sb.ID
	b.timer = time.AfterFunc(time.Until(b.sb.ExpiresAt), func() { m.expire(id) })
}

func (m *Manager) expire(id string) {
	b := m.lookup(id)
	if b == nil {
		return
	}
	b.mu.Lock()
	early := time.Now().Before(b.sb.ExpiresAt.Add(-time.Millisecond))
	b.mu.Unlock()
	if early { // the timeout was extended meanwhile
		m.arm(b)
		return
	}
	if m.expireOrPause(b) { // on_timeout: pause (pause.go)
		return
	}
	ctx := context.Background()
	b.mu.Lock()
	data := map[string]any{"state": string(b.sb.State)} // "paused": it slept out paused_timeout_s
	b.mu.Unlock()
	_ = m.event(ctx, Event{Kind: "sandbox.expire", Phase: "event", Tenant: b.sb.Tenant, Sandbox: id, Data: data})
	m.log.Info("sandbox timed out", "sandbox", id)
	m.remove(ctx, b)
}

// watch notices a guest that exits on its own.
func (m *Manager) watch(b *box) {
	b.mu.Lock()
	inst := b.inst
	b.mu.Unlock()
	if _, ok := isAsleep(inst); ok {
		return // nothing runs (hibernate.go); wake watches what it restores
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		select {
		case <-inst.Done():
		case <-m.stop:
			return
		}
		m.instFailed(b, inst)
	}()
}

// instFailed marks b failed because inst, its instance, exited on its
// own. An instance that ends by design (hibernation, hibernate.go) or is
// no longer the box's does not count.
func (m *Manager) instFailed(b *box, inst runtime.Instance) {
	b.mu.Lock()
	gone := b.gone || b.inst != inst || b.pz.hibernating
	if !gone {
		b.sb.State = StateFailed
		b.sb.Reason = "the sandbox's agent exited unexpectedly (killed, or out of memory)"
		if r, ok := inst.(runtime.ExitReasoner); ok && r.ExitReason() != "" {
			b.sb.Reason = r.ExitReason()
		}
	}
	b.mu.Unlock()
	if gone {
		return
	}
	ctx := context.Background()
	m.log.Warn("sandbox failed", "sandbox", b.sb.ID)
	_ = m.event(ctx, Event{Kind: "sandbox.fail", Phase: "event", Tenant: b.sb.Tenant, Sandbox: b.sb.ID,
		Error: b.sb.Reason})
	_ = m.db.SetSandboxState(ctx, b.sb.ID, string(StateFailed))
	_ = m.backendOf(b.sb.Spec).Destroy(ctx, inst)
	m.detachVolumes(b) // a failed sandbox releases its volumes
}
