package sandbox

// Looking sandboxes up for callers: one, one with a right, a tenant's
// list, and the counts the metrics read.

import (
	"context"
	"sort"

	"github.com/paddockhq/paddock/internal/rights"
)

// Get returns one sandbox.
func (m *Manager) Get(ctx context.Context, sc Scope, id string) (Sandbox, error) {
	sb, err := m.Resolve(ctx, sc, id, rights.Read)
	if err == nil {
		sb.Forks = m.forksOf(sb.Tenant, sb.ID) // fork.go: the fork tree's children
	}
	return sb, err
}

// Resolve checks that sc holds need (0: no right beyond seeing the
// sandbox) and may see sandbox id, and returns it: the check an action
// makes before it starts, for a caller that must answer before it acts
// (a WebSocket before its upgrade, an adapter that maps a failed sandbox
// to its own answer).
func (m *Manager) Resolve(ctx context.Context, sc Scope, id string, need rights.Right) (Sandbox, error) {
	if need != 0 {
		if err := sc.Need(need); err != nil {
			return Sandbox{}, err
		}
	}
	b, err := m.find(sc, id)
	if err != nil {
		return Sandbox{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb, nil
}

// List returns the scope's sandboxes whose labels include all of match,
// oldest first.
func (m *Manager) List(ctx context.Context, sc Scope, match map[string]string) ([]Sandbox, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	return m.tenantList(sc.Tenant, sc.Sandbox, match), nil
}

// Exists reports whether tenant has sandbox id: the server's own check,
// for state an adapter keeps per sandbox (it is not a caller's).
func (m *Manager) Exists(id, tenant string) bool {
	b := m.lookup(id)
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.gone && b.sb.Tenant == tenant
}

// TenantSandboxes lists every sandbox of tenant, for a caller who
// manages tenants (their usage against quotas).
func (m *Manager) TenantSandboxes(ctx context.Context, sc Scope, tenant string) ([]Sandbox, error) {
	if err := sc.Need(rights.Keys); err != nil {
		return nil, err
	}
	return m.tenantList(tenant, "", nil), nil
}

// tenantList is List for the server's own use: tenant's sandboxes (only
// sandbox, if set) with labels matching match.
func (m *Manager) tenantList(tenant, sandbox string, match map[string]string) []Sandbox {
	m.mu.Lock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.Unlock()
	var out []Sandbox
	for _, b := range boxes {
		b.mu.Lock()
		sb, gone := b.sb, b.gone
		b.mu.Unlock()
		if gone || sb.Tenant != tenant || (sandbox != "" && sandbox != sb.ID) || !labelsMatch(sb.Spec.Labels, match) {
			continue
		}
		out = append(out, sb)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].ID < out[j].ID
		}
		return out[i].CreatedAt.Before(out[j].CreatedAt)
	})
	return out
}

func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// CountByState counts sandboxes of every tenant by state, the warm pool
// included (as "pooled"), for the metrics gauge.
func (m *Manager) CountByState() map[string]int {
	out := map[string]int{"pooled": m.pool.size()}
	m.mu.Lock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.Unlock()
	for _, b := range boxes {
		b.mu.Lock()
		if !b.gone {
			out[string(b.sb.State)]++
		}
		b.mu.Unlock()
	}
	return out
}
