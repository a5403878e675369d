package sandbox

// Per-tenant quotas of paused sandboxes and of forks (docs/state.md):
// paused sandboxes hold memory while they use no CPU, so how many a
// tenant keeps asleep is bounded on its own; a fork's sandboxes each
// count against max_sandboxes like any create, and max_forks bounds how
// many one fork call makes.

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
)

// admitPaused checks tenant's max_paused before one more of its
// sandboxes is paused. The returned unlock (never nil) is called once
// the pause is recorded (or failed): pauses are admitted one at a time,
// so concurrent ones cannot overshoot the quota together.
func (m *Manager) admitPaused(ctx context.Context, tenant string) (unlock func(), err error) {
	if m.pausedQ == nil {
		return func() {}, nil
	}
	q, err := m.pausedQ(ctx, tenant)
	if err != nil || q <= 0 {
		return func() {}, err
	}
	m.pausedMu.Lock()
	n := 0
	for _, sb := range m.tenantList(tenant, "", nil) {
		if sb.State == StatePaused {
			n++
		}
	}
	if n >= q {
		m.pausedMu.Unlock()
		return func() {}, errs.New(errs.CodeLimit, "tenant %s: paused-sandbox quota %d reached (%d paused): resume or delete one first", tenant, q, n)
	}
	return m.pausedMu.Unlock, nil
}

// admitForks checks tenant's max_forks for one fork call of count.
func (m *Manager) admitForks(ctx context.Context, tenant string, count int) error {
	if m.forkQ == nil {
		return nil
	}
	q, err := m.forkQ(ctx, tenant)
	if err != nil || q <= 0 {
		return err
	}
	if count > q {
		return errs.New(errs.CodeLimit, "tenant %s: at most %d forks per call (asked %d)", tenant, q, count)
	}
	return nil
}
