package sandbox

import (
	"context"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
)

// The network of a running sandbox: read it, change it (none ↔ allowlist ↔
// open, or another allowlist), and record the egress proxy's decisions
// about its traffic. The backend changes the interface and the policy; the
// guest then installs resolv.conf, the hosts block and the proxy variables.

// Network returns the network policy of a sandbox.
func (m *Manager) Network(ctx context.Context, sc Scope, id string) (Network, error) {
	sb, err := m.Get(ctx, sc, id)
	if err != nil {
		return Network{}, err
	}
	if sb.Spec.Network == nil {
		return Network{Mode: NetNone}, nil
	}
	return *sb.Spec.Network, nil
}

// SetNetwork changes the network policy of a running sandbox. New
// connections follow it at once; open connections the new policy no
// longer allows are closed by the proxy.
func (m *Manager) SetNetwork(ctx context.Context, sc Scope, id string, n Network) (Network, error) {
	if err := sc.Need(rights.Network); err != nil {
		return Network{}, err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return Network{}, err
	}
	nn, err := NormalizeNetwork(&n)
	if err != nil {
		return Network{}, err
	}
	unlock := m.netLocks.lock(id)
	defer unlock()
	b.mu.Lock()
	spec := b.sb.Spec
	b.mu.Unlock()
	old := spec.Network
	refused := func(err error) (Network, error) {
		// A refusal is a policy decision worth recording (as at create).
		_ = m.event(ctx, Event{Kind: "sandbox.network", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
			Error: errs.Public(err), Code: string(errs.CodeOf(err))})
		return Network{}, err
	}
	if sc.Sandbox != "" { // narrow.go: a sandbox token only narrows
		if err := narrows(old, nn); err != nil {
			return refused(err)
		}
	}
	spec.Network = nn
	done, err := m.admit(ctx, sc, "network", &spec)
	done()
	if err != nil {
		return refused(err)
	}
	if _, ok := b.inst.(runtime.NetworkInstance); !ok {
		return Network{}, errs.New(errs.CodeUnsupported, "this server cannot change a sandbox's network")
	}
	if err := m.event(ctx, Event{Kind: "sandbox.network", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Data: map[string]any{"from": old, "to": nn}}); err != nil {
		return Network{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	err = m.applyNetwork(ctx, b, nn)
	res := Event{Kind: "sandbox.network", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Duration: time.Since(start)}
	if err != nil {
		res.Error, res.Code = errs.Public(err), string(errs.CodeOf(err))
		_ = m.event(ctx, res)
		return Network{}, err
	}
	_ = m.event(ctx, res)
	b.mu.Lock()
	b.sb.Spec.Network = nn
	b.mu.Unlock()
	if err := m.persist(ctx, b, false); err != nil {
		return Network{}, err
	}
	return *nn, nil
}

// applyNetwork makes the backend and then the guest follow n.
func (m *Manager) applyNetwork(ctx context.Context, b *box, n *Network) error {
	ni, ok := b.inst.(runtime.NetworkInstance)
	if !ok {
		return errs.New(errs.CodeUnsupported, "this server cannot change a sandbox's network")
	}
	p := runtime.NetPolicy{Mode: NetNone}
	if rp := runtimeNetwork(n); rp != nil {
		p = *rp
	}
	setup, err := ni.SetNetwork(ctx, p)
	if err != nil {
		m.log.Error("network change", "sandbox", b.sb.ID, "err", err)
		if errs.CodeOf(err) == errs.CodeInternal {
			return errs.Wrap(errs.CodeInternal, err, "the sandbox's network could not be changed")
		}
		return err
	}
	if err := b.inst.Guest().SetNetwork(ctx, guestNetwork(setup)); err != nil {
		m.log.Error("network change: guest", "sandbox", b.sb.ID, "err", err)
		return err
	}
	return nil
}

// guestNetwork turns a backend's setup into the guest's update: the
// variables a setup may set and this one does not are removed.
func guestNetwork(s runtime.NetSetup) guestapi.NetworkConfig {
	c := guestapi.NetworkConfig{ResolvConf: s.ResolvConf, Hosts: s.Hosts, Env: s.Env, Files: s.Files}
	for _, k := range runtime.NetEnvKeys {
		if _, set := s.Env[k]; !set {
			c.Unset = append(c.Unset, k)
		}
	}
	return c
}

// claimNetwork gives a sandbox claimed from the warm pool (started without
// network) the network its spec asks for, before anyone can use it.
func (m *Manager) claimNetwork(ctx context.Context, b *box, spec Spec) error {
	if runtimeNetwork(spec.Network) == nil {
		return nil
	}
	unlock := m.netLocks.lock(b.sb.ID)
	defer unlock()
	return m.applyNetwork(ctx, b, spec.Network)
}

// NetEvent records a decision of the egress proxy or resolver about a
// sandbox's traffic (kind "net.connect" or "net.dns", phase "event"),
// attributed to the sandbox's tenant. Unknown sandboxes are ignored.
func (m *Manager) NetEvent(ctx context.Context, id, kind string, data map[string]any) {
	b := m.lookup(id)
	if b == nil {
		return
	}
	b.mu.Lock()
	tenant := b.sb.Tenant
	b.mu.Unlock()
	if tenant == "" { // a warm-pool member nobody owns yet
		return
	}
	_ = m.event(ctx, Event{Kind: kind, Phase: "event", Tenant: tenant, Sandbox: id, Data: data})
}

// keyedLocks serialises network changes of one sandbox.
type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*keyedLock
}

type keyedLock struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedLock{}
	}
	l := k.m[key]
	if l == nil {
		l = &keyedLock{}
		k.m[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
