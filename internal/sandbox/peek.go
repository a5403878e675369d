package sandbox

// PortLabels returns the tenant and labels of running sandbox id, for the
// port router's policy hook (a sandbox's owner chose, in its labels, how
// its ports are served). It is for the server's own wiring, not callers:
// it checks no scope, and answers only for a sandbox that runs.
func (m *Manager) PortLabels(id string) (tenant string, labels map[string]string, ok bool) {
	if !ValidID(id) {
		return "", nil, false
	}
	b := m.lookup(id)
	if b == nil {
		return "", nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone || b.sb.Tenant == "" || b.sb.State != StateRunning {
		return "", nil, false
	}
	out := make(map[string]string, len(b.sb.Spec.Labels))
	for k, v := range b.sb.Spec.Labels {
		out[k] = v
	}
	return b.sb.Tenant, out, true
}
