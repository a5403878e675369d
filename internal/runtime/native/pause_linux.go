//go:build linux

package native

import (
	"context"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// Pause implements runtime.Pauser with the cgroup freezer: the guest agent
// and every workload stop together, so nothing in the sandbox notices
// time passing except the wall clock.
func (i *instance) Pause(ctx context.Context) error {
	if i.cg == nil {
		return errs.New(errs.CodeUnsupported, "this sandbox has no control group to freeze")
	}
	if err := i.cg.Freeze(ctx); err != nil {
		return fmt.Errorf("native: pause %s: %w", i.id, err)
	}
	i.paused.Store(true)
	return nil
}

// Resume implements runtime.Pauser. A sandbox reattached paused had its
// guest's identity proven by pid and start time only; once thawed, its
// agent must also answer with the expected version (what Reattach checks
// of a running sandbox).
func (i *instance) Resume(ctx context.Context) error {
	if i.cg == nil {
		return errs.New(errs.CodeUnsupported, "this sandbox has no control group to thaw")
	}
	if err := i.cg.Thaw(ctx); err != nil {
		return fmt.Errorf("native: resume %s: %w", i.id, err)
	}
	i.paused.Store(false)
	if i.unverified.Load() {
		hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		h, err := i.guest.Health(hctx)
		if err != nil || h.Version != guestapi.Version {
			return fmt.Errorf("native: guest of %s does not answer after resume: %v", i.id, err)
		}
		i.unverified.Store(false)
	}
	return nil
}

// Paused implements runtime.Pauser.
func (i *instance) Paused() bool { return i.paused.Load() }

// thawForKill lets SIGKILL take effect: on cgroup v1 a frozen task does
// not act on a fatal signal until it is thawed.
func (i *instance) thawForKill() {
	if i.cg != nil && i.paused.Load() {
		_ = i.cg.Thaw(context.Background())
	}
}
