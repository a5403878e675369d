package e2b

import (
	"bytes"
	"context"
	"encoding/json"
	"net/textproto"
	"slices"
	"sort"
	"strings"

	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/wire"
)

// E2B's network.rules[domain].transform.headers, onto Paddock's inject
// rules (docs/network.md, "Secrets"): the egress proxy opens the HTTPS
// connections the sandbox makes to the domain (its MITM path, with the
// sandbox's own egress CA) and sets the headers on every request. A value's
// ${e2b.secrets.NAME} placeholders are the tenant's secrets
// (Paddock's {secret:NAME}), filled in by the proxy: the value never
// enters the sandbox. The rules are the sandbox's network policy: kept
// with it, audited with it (sandbox.create, sandbox.network), and, as in
// E2B, replaced by every network update (an update without rules clears
// them).
//
// What differs from E2B: keys are exact names (no "*.example.com"); a
// domain must be one the sandbox may reach (E2B keeps a rule the policy
// makes useless; Paddock refuses it, naming allowOut); identity tokens
// (${e2b.identity...}) are refused.

// e2bRule is SandboxNetworkRule (and SandboxNetworkRuleInfo).
type e2bRule struct {
	Transform *e2bTransform `json:"transform,omitempty"`
}

type e2bTransform struct {
	Headers map[string]string `json:"headers,omitempty"`
}

// Placeholders in a transform header's value.
const (
	secretPlaceholder = "${e2b.secrets."
	e2bPlaceholder    = "${e2b."
	paddockRef        = "{secret:"
)

// maxRuleDomains bounds the domains of one policy (the headers are
// bounded by secret.MaxRules).
const maxRuleDomains = 16

// transformRules validates network.rules and returns them as inject rules,
// sorted by domain and header. Errors name the entry as E2B's caller wrote
// it.
func transformRules(raw json.RawMessage) ([]wire.InjectRule, error) {
	if !present(raw) {
		return nil, nil
	}
	var byDomain map[string][]e2bRule
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&byDomain); err != nil {
		return nil, errs.Invalid("network.rules: want {\"domain\": [{\"transform\": {\"headers\": {\"Name\": \"value\"}}}]} (only header transforms are supported)")
	}
	if len(byDomain) > maxRuleDomains {
		return nil, errs.Invalid("network.rules: at most %d domains", maxRuleDomains)
	}
	domains := make([]string, 0, len(byDomain))
	for d := range byDomain {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	var out []wire.InjectRule
	seen := map[string]bool{}
	for _, d := range domains {
		host, err := ruleDomain(d)
		if err != nil {
			return nil, err
		}
		if seen[host] {
			return nil, errs.Invalid("network.rules: domain %s is given twice", quoteText(host))
		}
		seen[host] = true
		// A domain's rules apply in order: a later one's header replaces
		// an earlier one's.
		headers := map[string]string{}
		for _, r := range byDomain[d] {
			if r.Transform == nil {
				continue
			}
			for name, v := range r.Transform.Headers {
				headers[textproto.CanonicalMIMEHeaderKey(name)] = v
			}
		}
		names := make([]string, 0, len(headers))
		for n := range headers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			field := "network.rules[" + quoteText(host) + "].transform.headers[" + quoteText(n) + "]"
			value, err := fromE2BValue(headers[n])
			if err != nil {
				return nil, errs.New(errs.CodeOf(err), "%s: %s", field, errs.Public(err))
			}
			r := secret.Rule{Host: host, Header: n, Value: value}
			if _, err := secret.NormalizeRules([]secret.Rule{r}); err != nil {
				msg := strings.TrimPrefix(errs.Public(err), "network.inject[0]")
				msg = strings.TrimPrefix(strings.TrimPrefix(msg, ".header"), ".value")
				return nil, errs.Invalid("%s:%s", field, msg)
			}
			out = append(out, wire.InjectRule{Host: host, Header: n, Value: value})
		}
	}
	if len(out) > secret.MaxRules {
		return nil, errs.Invalid("network.rules: at most %d headers in all", secret.MaxRules)
	}
	return out, nil
}

// ruleDomain is a rule's key, lower-cased: an exact DNS name.
func ruleDomain(d string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(d))
	switch {
	case strings.HasPrefix(h, "*"):
		return "", errs.New(errs.CodeUnsupported, "network.rules[%s]: wildcard domains are not supported by Paddock; give each exact domain", quoteText(d))
	case isAddress(h):
		return "", errs.Invalid("network.rules[%s]: a rule's key is a domain name (HTTPS requests are matched by name)", quoteText(d))
	}
	n, ok := policy.NormalizeName(h)
	if !ok || strings.Contains(h, ":") {
		return "", errs.Invalid("network.rules[%s]: not a valid domain name", quoteText(d))
	}
	return n, nil
}

// fromE2BValue turns a header value's ${e2b.secrets.NAME} placeholders
// into Paddock's {secret:NAME} (bindRuleSecrets resolves a name's case).
// A literal "{secret:" would read as a placeholder, so it is refused.
func fromE2BValue(v string) (string, error) {
	if strings.Contains(v, paddockRef) {
		return "", errs.Invalid("the text %s is reserved (write secrets as ${e2b.secrets.NAME})", paddockRef)
	}
	var b strings.Builder
	rest := v
	for {
		i := strings.Index(rest, e2bPlaceholder)
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		if !strings.HasPrefix(rest, secretPlaceholder) {
			return "", errs.New(errs.CodeUnsupported, "only ${e2b.secrets.NAME} placeholders are supported (workload identity tokens are not)")
		}
		rest = rest[len(secretPlaceholder):]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return "", errs.Invalid("unterminated ${e2b.secrets.NAME}")
		}
		name := rest[:j]
		if !secret.ValidName(name) {
			return "", errs.Invalid("${e2b.secrets.%s}: Paddock's secret names are a letter or '_', then letters, digits, '_', '.', '-'", clipText(rest[:j]))
		}
		b.WriteString(paddockRef + name + "}")
		rest = rest[j+1:]
	}
}

// toE2BValue is fromE2BValue's inverse: {secret:NAME} and
// ${e2b.secrets.NAME} share their closing brace.
func toE2BValue(v string) string { return strings.ReplaceAll(v, paddockRef, secretPlaceholder) }

// infoRules are a policy's inject rules as E2B's sandbox info shows them:
// one rule per domain with its headers (placeholders, never values).
func infoRules(rules []wire.InjectRule) map[string][]e2bRule {
	if len(rules) == 0 {
		return nil
	}
	out := map[string][]e2bRule{}
	for _, r := range rules {
		if out[r.Host] == nil {
			out[r.Host] = []e2bRule{{Transform: &e2bTransform{Headers: map[string]string{}}}}
		}
		out[r.Host][0].Transform.Headers[r.Header] = toE2BValue(r.Value)
	}
	return out
}

// checkRuleReach refuses rules for domains the policy does not let the
// sandbox reach: E2B's rules grant no access, and a rule that can never
// apply is refused rather than kept silently useless.
func checkRuleReach(n *sandbox.Network) error {
	if len(n.Inject) == 0 {
		return nil
	}
	if n.Mode == sandbox.NetNone {
		return errs.Invalid("network.rules: the sandbox has no network access (rules grant none: add the domains to allowOut)")
	}
	p, err := policy.CompileDeny(n.Mode, n.Allow, n.AllowCIDR, n.DenyCIDR)
	if err != nil {
		return errs.Invalid("%s", err.Error())
	}
	for _, r := range n.Inject {
		if _, ok := p.AllowName(r.Host, secret.DefaultPort); !ok {
			return errs.Invalid("network.rules[%s]: the sandbox may not reach this domain (rules grant no access: add it to allowOut)", quoteText(r.Host))
		}
	}
	return nil
}

// bindRuleSecrets resolves the case of the secret names rules give (they
// are rewritten in place), and maps E2B's model, where a network rule is what sends a
// secret to a domain, onto Paddock's, where a secret goes only to the
// hosts it is bound to: a caller holding the secrets right (who could bind
// them through /v1/secrets as well) binds each secret its rules name to
// their domains. Without that right nothing is bound, and the manager's
// admission refuses a rule to a host its secret is not bound to. A binding
// outlives the sandbox (docs/e2b.md).
func (s *Server) bindRuleSecrets(ctx context.Context, sc rights.Scope, rules []wire.InjectRule) error {
	hosts := map[string][]string{}
	for _, ru := range rules {
		t, err := secret.ParseTemplate(ru.Value)
		if err != nil {
			return errs.Invalid("network.rules: %v", err)
		}
		for _, n := range t.Refs() {
			hosts[n] = append(hosts[n], ru.Host)
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	if s.o.Secrets == nil {
		return errs.New(errs.CodeUnsupported, "network.rules name secrets, and this server has no secret store")
	}
	if !sc.Can(rights.Read) || sc.Sandbox != "" {
		return nil // the admission checks the rules as they are
	}
	names := make([]string, 0, len(hosts))
	for n := range hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		in, err := s.o.Secrets.Info(ctx, sc, "", name)
		if lower := strings.ToLower(name); errs.CodeOf(err) == errs.CodeNotFound && lower != name {
			// E2B lower-cases names at create; Secret.fill keeps the caller's.
			if in, err = s.o.Secrets.Info(ctx, sc, "", lower); err == nil {
				for i := range rules {
					rules[i].Value = strings.ReplaceAll(rules[i].Value, paddockRef+name+"}", paddockRef+lower+"}")
				}
			}
		}
		if errs.CodeOf(err) == errs.CodeNotFound {
			return errs.Invalid("network.rules: secret %s does not exist (create it with Secret.create)", quoteText(name))
		}
		if err != nil {
			return err
		}
		bound := append([]string(nil), in.Hosts...)
		added := false
		for _, h := range hosts[name] {
			if !slices.Contains(bound, h) {
				bound, added = append(bound, h), true
			}
		}
		if !added || !sc.Can(rights.Secrets) {
			continue // without the right: the admission refuses an unbound host
		}
		if _, err := s.o.Secrets.Bind(ctx, sc, "", in.Name, bound); err != nil {
			return err
		}
		s.log.Info("E2B: secret bound to the domains of a network rule", "tenant", sc.Tenant, "actor", sc.Actor,
			"secret", in.Name, "hosts", bound)
	}
	return nil
}
