package sandbox

import (
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/wire"
)

// Secret injection (docs/network.md, "Secrets"): a spec's network.inject
// rules name hosts whose requests the egress proxy gives the tenant's
// secrets. Here: their validation against the policy, and the lookup the
// proxy's interceptor makes for each connection.

// normalizeInject validates a spec's inject rules against its compiled
// policy: a rule's host must be one the sandbox may reach by name. That
// the secrets exist, and that the tenant may use secrets, is checked by
// the Admission (package secret/inject), which has the secret store.
func normalizeInject(p *policy.Policy, rules []wire.InjectRule) ([]wire.InjectRule, error) {
	out, err := secret.NormalizeRules(SecretRules(rules))
	if err != nil || len(out) == 0 {
		return nil, err
	}
	if p.Mode == NetNone {
		return nil, errs.Invalid("network.inject needs network mode allowlist or open")
	}
	for i, r := range out {
		if name, port := r.Target(); !allowed(p, name, port) {
			return nil, errs.Invalid("network.inject[%d].host %q is not allowed by the policy: add it to network.allow", i, r.Host)
		}
	}
	return wireRules(out), nil
}

// SecretRules are a spec's inject rules as the secret package (and the
// egress interceptor) takes them.
func SecretRules(in []wire.InjectRule) []secret.Rule {
	if in == nil {
		return nil
	}
	out := make([]secret.Rule, len(in))
	for i, r := range in {
		out[i] = secret.Rule{Host: r.Host, Header: r.Header, Value: r.Value}
	}
	return out
}

// wireRules are rules of the secret package as a spec holds them.
func wireRules(in []secret.Rule) []wire.InjectRule {
	if in == nil {
		return nil
	}
	out := make([]wire.InjectRule, len(in))
	for i, r := range in {
		out[i] = wire.InjectRule{Host: r.Host, Header: r.Header, Value: r.Value}
	}
	return out
}

func allowed(p *policy.Policy, name string, port int) bool {
	_, ok := p.AllowName(name, port)
	return ok
}

// injectHosts are the hosts of rules ("name" or "name:port"), without
// repeats, for the backend (runtime.NetPolicy.Intercept): a sandbox with
// any gets an egress CA.
func injectHosts(rules []wire.InjectRule) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rules {
		if !seen[r.Host] {
			seen[r.Host] = true
			out = append(out, r.Host)
		}
	}
	return out
}

// InjectRules returns the tenant and the inject rules of a running
// sandbox, for the egress interceptor. It is the server's own lookup, not
// a caller's (no Scope): ok is false for an unknown sandbox or a warm-pool
// member nobody owns yet. A policy change is seen once it has returned.
func (m *Manager) InjectRules(id string) (tenant string, rules []secret.Rule, ok bool) {
	tenant, ok = m.peekRunning(id, func(sb *Sandbox) {
		if n := sb.Spec.Network; n != nil {
			rules = SecretRules(n.Inject)
		}
	})
	if !ok {
		return "", nil, false
	}
	return tenant, rules, true
}
