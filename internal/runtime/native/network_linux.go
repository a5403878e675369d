//go:build linux

package native

import (
	"context"
	"sync"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
)

// A sandbox's network attachment (Options.Network does the work). The
// guest is blocked on its Config while it is made, so the interface, the
// host's filtering and the proxy's policy are in place before anything
// runs inside.

// netState is what the backend tracks of one sandbox's attachment.
type netState struct {
	mu   sync.Mutex
	want *runtime.NetPolicy // asked for at create
	gone bool               // torn down: never attach again
	// The create-time attach runs while the rest of the guest's setup
	// goes on; attaching is closed when it is done, with setup and err.
	attaching chan struct{}
	setup     runtime.NetSetup
	err       error
}

// startNetwork begins attaching a sandbox being created, alongside its
// cgroup and template setup (the guest stays blocked on its Config).
func (b *Backend) startNetwork(ctx context.Context, inst *instance) {
	p := inst.net.want
	if !p.Networked() || b.o.Network == nil || inst.net.attaching != nil {
		return
	}
	done := make(chan struct{})
	inst.net.attaching = done
	go func() {
		defer close(done)
		inst.net.setup, inst.net.err = b.o.Network.Attach(ctx, inst.id, inst.pid, *p)
	}()
}

// attachNetwork finishes the create-time attach and puts what the guest
// must install into its Config.
func (b *Backend) attachNetwork(ctx context.Context, inst *instance, gc *guestapi.Config) error {
	p := inst.net.want
	if !p.Networked() {
		return nil
	}
	if b.o.Network == nil {
		return errs.New(errs.CodeUnsupported, "network mode %q is not available on this server (no sandbox networking)", p.Mode)
	}
	b.startNetwork(ctx, inst)
	<-inst.net.attaching
	if inst.net.err != nil {
		return inst.net.err
	}
	inst.net.setup.Apply(gc)
	inst.ph.mark("network")
	return nil
}

// detachNetwork releases a sandbox's attachment (a no-op if it has none).
func (b *Backend) detachNetwork(inst *instance) {
	if b.o.Network == nil {
		return
	}
	if inst.net.attaching != nil {
		<-inst.net.attaching // a create that failed midway: let its attach end first
	}
	inst.net.mu.Lock()
	inst.net.gone = true
	inst.net.mu.Unlock()
	if err := b.o.Network.Detach(context.Background(), inst.id); err != nil {
		b.log.Error("network detach", "sandbox", inst.id, "err", err)
	}
}

// sweepNetwork removes attachments of sandboxes that are neither kept nor
// live.
func (b *Backend) sweepNetwork(ctx context.Context, keep map[string]bool) int {
	if b.o.Network == nil {
		return 0
	}
	all := make(map[string]bool, len(keep))
	for id := range keep {
		all[id] = true
	}
	b.mu.Lock()
	for id := range b.live {
		all[id] = true
	}
	b.mu.Unlock()
	n, err := b.o.Network.Sweep(ctx, all)
	if err != nil {
		b.log.Warn("network sweep", "err", err)
	}
	return n
}

// SetNetwork implements runtime.NetworkInstance.
func (i *instance) SetNetwork(ctx context.Context, p runtime.NetPolicy) (runtime.NetSetup, error) {
	b := i.b
	if b.o.Network == nil {
		return runtime.NetSetup{}, errs.New(errs.CodeUnsupported, "this server has no sandbox networking")
	}
	i.net.mu.Lock()
	defer i.net.mu.Unlock()
	select {
	case <-i.done:
		i.net.gone = true
	default:
	}
	if i.net.gone {
		return runtime.NetSetup{}, errs.New(errs.CodeSandboxNotActive, "the sandbox is stopping")
	}
	if !p.Networked() {
		if err := b.o.Network.Detach(ctx, i.id); err != nil {
			return runtime.NetSetup{}, err
		}
		return runtime.LoopbackOnly(), nil
	}
	return b.o.Network.Attach(ctx, i.id, i.pid, p)
}
