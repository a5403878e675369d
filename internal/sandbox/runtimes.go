package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/wire"
)

// A sandbox's runtime is its spec's (wire.Spec.Runtime; omitted: native).
// The spec is persisted with the sandbox, so a restarted server reattaches,
// cleans up and destroys each sandbox with the runtime that started it.

// runtimeInfo is what a backend may say about itself (GET /healthz).
type runtimeInfo interface{ Info() wire.RuntimeInfo }

// refuser is a runtime this server knows but cannot run (gvisor.Unavailable):
// a create is refused before anything is recorded.
type refuser interface{ Refused() error }

func runtimeName(s Spec) string {
	if s.Runtime == "" {
		return wire.RuntimeNative
	}
	return s.Runtime
}

func isNative(s Spec) bool { return runtimeName(s) == wire.RuntimeNative }

// backendFor is the runtime a new sandbox of spec runs in, or why none.
func (m *Manager) backendFor(spec Spec) (runtime.Backend, error) {
	name := runtimeName(spec)
	rt, ok := m.rts[name]
	if !ok {
		return nil, errs.New(errs.CodeUnsupported, "this server does not offer the %s runtime", name)
	}
	if r, ok := rt.(refuser); ok {
		if err := r.Refused(); err != nil {
			return nil, err
		}
	}
	return rt, nil
}

// backendOf is the runtime an existing sandbox of spec runs in. One this
// server does not know (its runtime was configured away) is absent: the
// sandbox cannot be reattached, and nothing of it can be released here.
func (m *Manager) backendOf(spec Spec) runtime.Backend {
	if rt, ok := m.rts[runtimeName(spec)]; ok {
		return rt
	}
	return absent(runtimeName(spec))
}

// sweep runs every runtime's Sweep (each releases only what it made).
func (m *Manager) sweep(ctx context.Context, keep map[string]bool) int {
	n := 0
	for _, name := range m.runtimeNames() {
		k, err := m.rts[name].Sweep(ctx, keep)
		if err != nil {
			m.log.Warn("sweep failed", "runtime", name, "err", err)
		}
		n += k
	}
	return n
}

func (m *Manager) runtimeNames() []string {
	names := make([]string, 0, len(m.rts))
	for name := range m.rts {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Runtimes lists the runtimes this server knows, available or not (with
// why not), by name.
func (m *Manager) Runtimes() []wire.RuntimeInfo {
	var out []wire.RuntimeInfo
	for _, name := range m.runtimeNames() {
		rt := m.rts[name]
		info := wire.RuntimeInfo{Name: name, Available: true}
		if ri, ok := rt.(runtimeInfo); ok {
			info = ri.Info()
			info.Name = name
		}
		if r, ok := rt.(refuser); ok {
			if err := r.Refused(); err != nil {
				info.Available, info.Reason = false, errs.Public(err)
			}
		}
		out = append(out, info)
	}
	return out
}

// absent is a runtime a recorded sandbox names that this server has not.
type absent string

func (a absent) err() error {
	return errs.New(errs.CodeUnsupported, "this server does not offer the %s runtime", string(a))
}

func (a absent) Name() string { return string(a) }
func (a absent) Create(context.Context, runtime.Config) (runtime.Instance, error) {
	return nil, a.err()
}
func (a absent) Reattach(context.Context, string, json.RawMessage) (runtime.Instance, error) {
	return nil, a.err()
}
func (a absent) Destroy(context.Context, runtime.Instance) error {
	return fmt.Errorf("destroy: %w", a.err())
}
func (a absent) Cleanup(context.Context, string, json.RawMessage) error { return nil }
func (a absent) Sweep(context.Context, map[string]bool) (int, error)    { return 0, nil }
func (a absent) Close() error                                           { return nil }
