//go:build linux

package gvisor

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// SetNetwork implements runtime.NetworkInstance. gVisor's netstack takes
// the namespace's interfaces once, when the sandbox starts: a sandbox
// created with a network can change its policy or drop it, but one
// created without (or that dropped it) cannot be given one.
func (i *instance) SetNetwork(ctx context.Context, p runtime.NetPolicy) (runtime.NetSetup, error) {
	b := i.b
	if b.o.Network == nil {
		return runtime.NetSetup{}, errs.New(errs.CodeUnsupported, "this server has no sandbox networking")
	}
	i.netMu.Lock()
	defer i.netMu.Unlock()
	select {
	case <-i.done:
		return runtime.NetSetup{}, errs.New(errs.CodeSandboxNotActive, "the sandbox is not running")
	default:
	}
	if i.rec.NetPid == 0 || i.netGone {
		if p.Networked() {
			return runtime.NetSetup{}, errs.New(errs.CodeUnsupported,
				"a gVisor sandbox started without a network cannot be given one (gVisor's network stack takes its interfaces at start): create it with the network mode it needs")
		}
		return runtime.LoopbackOnly(), nil
	}
	if !p.Networked() {
		if err := b.o.Network.Detach(ctx, i.id); err != nil {
			return runtime.NetSetup{}, err
		}
		i.netGone = true
		return runtime.LoopbackOnly(), nil
	}
	// The same id as at create: the network changes the policy of the
	// existing attachment.
	return b.o.Network.Attach(ctx, i.id, i.rec.NetPid, p)
}
