//go:build linux

package native

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Network namespaces made ahead (issue 23). Starting a sandbox with
// CLONE_NEWNET made the kernel build a namespace on the create path, and
// registering its loopback takes RTNL, which the kernel's teardown of
// earlier sandboxes' namespaces holds across RCU grace periods; a
// networked sandbox then waited again for its veth pair. The backend
// keeps a few namespaces ready instead — loopback-only ones for sandboxes
// without network, and, when the network can prepare them, ones holding
// a sandbox interface — and starts each sandbox in one (spawn_linux.go).
// Refills run in the background. A prepared namespace is owned by the
// initial user namespace: the sandbox has no capability in it at all,
// where its own namespace gave its (capability-less) root the owner's
// rights. When a pool is empty the sandbox makes its own, as before.

const (
	loopbackPoolSize = 4 // namespaces with only a loopback
	netPoolSize      = 2 // namespaces with a sandbox interface (each holds a slot)
)

// nsEntry is one namespace of a pool.
type nsEntry interface {
	NetNS() int
	Release()
}

// loopbackNS is a namespace with only its loopback.
type loopbackNS struct {
	fd   int
	once sync.Once
}

func (l *loopbackNS) NetNS() int { return l.fd }
func (l *loopbackNS) Release()   { l.once.Do(func() { unix.Close(l.fd) }) }

// nsPool keeps up to size namespaces made by mk.
type nsPool struct {
	name string
	size int
	mk   func(context.Context) (nsEntry, error)
	log  *slog.Logger

	mu      sync.Mutex
	ready   []nsEntry
	filling bool
	closed  bool
	failed  time.Time // the last failure: refills pause after one
	wg      sync.WaitGroup
}

func newNSPool(name string, size int, log *slog.Logger, mk func(context.Context) (nsEntry, error)) *nsPool {
	p := &nsPool{name: name, size: size, mk: mk, log: log}
	p.mu.Lock()
	p.refillLocked()
	p.mu.Unlock()
	return p
}

// take returns a ready namespace, or nil when none is; either way it
// starts a refill.
func (p *nsPool) take() nsEntry {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var e nsEntry
	if n := len(p.ready); n > 0 {
		e = p.ready[n-1]
		p.ready = p.ready[:n-1]
	}
	p.refillLocked()
	return e
}

func (p *nsPool) refillLocked() {
	if p.filling || p.closed || len(p.ready) >= p.size || time.Since(p.failed) < time.Second {
		return
	}
	p.filling = true
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			p.mu.Lock()
			if p.closed || len(p.ready) >= p.size {
				p.filling = false
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
			e, err := p.mk(context.Background())
			p.mu.Lock()
			if err != nil {
				p.failed, p.filling = time.Now(), false
				p.mu.Unlock()
				p.log.Warn("native: cannot prepare a network namespace; sandboxes make their own meanwhile", "pool", p.name, "err", err)
				return
			}
			if p.closed {
				p.mu.Unlock()
				e.Release()
				return
			}
			p.ready = append(p.ready, e)
			p.mu.Unlock()
		}
	}()
}

// close releases what is ready and stops refilling.
func (p *nsPool) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	p.wg.Wait()
	for _, e := range ready {
		e.Release()
	}
}

// startNSPools makes the backend's pools.
func (b *Backend) startNSPools() {
	b.loNS = newNSPool("loopback", loopbackPoolSize, b.log, func(context.Context) (nsEntry, error) {
		fd, err := network.NewLoopbackNS()
		if err != nil {
			return nil, err
		}
		return &loopbackNS{fd: fd}, nil
	})
	if np, ok := b.o.Network.(runtime.NetworkPreparer); ok {
		b.netNS = newNSPool("network", netPoolSize, b.log, func(ctx context.Context) (nsEntry, error) {
			return np.Prepare(ctx)
		})
	}
}

// takeNS picks the namespace a sandbox with policy p starts in; nil: it
// makes its own.
func (b *Backend) takeNS(p *runtime.NetPolicy) nsEntry {
	if b.nsPoolOff.Load() {
		return nil
	}
	if p.Networked() {
		return b.netNS.take()
	}
	return b.loNS.take()
}
