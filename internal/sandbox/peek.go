package sandbox

// PortLabels returns the tenant and labels of running sandbox id, for the
// port router's policy hook (a sandbox's owner chose, in its labels, how
// its ports are served). It is for the server's own wiring, not callers:
// it checks no scope, and answers only for a sandbox that runs.
func (m *Manager) PortLabels(id string) (tenant string, labels map[string]string, ok bool) {
	if !ValidID(id) {
		return "", nil, false
	}
	var out map[string]string
	tenant, ok = m.peekRunning(id, func(sb *Sandbox) {
		out = make(map[string]string, len(sb.Spec.Labels))
		for k, v := range sb.Spec.Labels {
			out[k] = v
		}
	})
	if !ok {
		return "", nil, false
	}
	return tenant, out, true
}

// peekRunning calls fn with the record of running sandbox id, under its
// lock, and returns its tenant: the server's own lookups (no Scope). ok is
// false, and fn not called, for an unknown sandbox, one that is gone or not
// running, or a warm-pool member nobody owns yet.
func (m *Manager) peekRunning(id string, fn func(sb *Sandbox)) (tenant string, ok bool) {
	b := m.lookup(id)
	if b == nil {
		return "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone || b.sb.Tenant == "" || b.sb.State != StateRunning {
		return "", false
	}
	fn(&b.sb)
	return b.sb.Tenant, true
}
