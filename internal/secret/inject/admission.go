package inject

import (
	"context"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
)

// Admission wraps the manager's Admission (tenant quotas): a create or a
// policy change whose network.inject names secrets is admitted only if
// the tenant may use secrets and has every one of them, bound to the
// host of each rule that names it. It forwards the
// tenant checks other services reach through a local interface
// (AdmitSecrets, AdmitExposedPorts).
type Admission struct {
	next    sandbox.Admission // may be nil
	secrets *secret.Store
}

// NewAdmission returns next with the secrets check in front.
func NewAdmission(next sandbox.Admission, secrets *secret.Store) *Admission {
	return &Admission{next: next, secrets: secrets}
}

// Admit implements sandbox.Admission.
func (a *Admission) Admit(ctx context.Context, sc sandbox.Scope, op string, spec *sandbox.Spec,
	live func() []sandbox.Sandbox) (func(), error) {
	if (op == "create" || op == "network") && spec != nil && spec.Network != nil && len(spec.Network.Inject) > 0 {
		if err := a.admitInject(ctx, sc.Tenant, sandbox.SecretRules(spec.Network.Inject)); err != nil {
			return func() {}, err
		}
	}
	if a.next == nil {
		return func() {}, nil
	}
	return a.next.Admit(ctx, sc, op, spec, live)
}

func (a *Admission) admitInject(ctx context.Context, tenant string, raw []secret.Rule) error {
	rules, err := secret.NormalizeRules(raw)
	if err != nil {
		return err
	}
	names := secret.Names(rules)
	if err := a.AdmitSecrets(ctx, tenant, names); err != nil {
		return err
	}
	// Secret exfiltration: whoever writes the rule, a secret goes only to
	// the hosts its manager bound it to.
	return a.secrets.CheckRules(ctx, tenant, rules)
}

type secretsAdmitter interface {
	AdmitSecrets(ctx context.Context, tenant string, names []string) error
}

type portsAdmitter interface {
	AdmitExposedPorts(ctx context.Context, tenant string, ports []int) error
}

// AdmitSecrets asks the wrapped Admission (nil if it has no such check).
func (a *Admission) AdmitSecrets(ctx context.Context, tenant string, names []string) error {
	if s, ok := a.next.(secretsAdmitter); ok {
		return s.AdmitSecrets(ctx, tenant, names)
	}
	return nil
}

// AdmitExposedPorts asks the wrapped Admission (nil if it has no such
// check).
func (a *Admission) AdmitExposedPorts(ctx context.Context, tenant string, ports []int) error {
	if p, ok := a.next.(portsAdmitter); ok {
		return p.AdmitExposedPorts(ctx, tenant, ports)
	}
	return nil
}
