package sandbox

import (
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/wire"
)

// Secret exfiltration and egress widening by a sandbox token: a caller
// scoped to one sandbox (code inside it may hold that token) may change
// its policy only to a narrower one, or it could open the network the
// sandbox's owner closed, or add an inject rule that sends the tenant's
// secret to a host it controls. "Narrower" (each an order, none ⊂
// allowlist ⊂ open):
//   - mode: none, or the old mode, or allowlist where it was open;
//   - allowlist to allowlist: every new entry is covered by an old one
//     (the same name, or a name under an old wildcard; the old port, or
//     any port where the old entry had none), every new CIDR lies inside
//     an old one;
//   - open with deny_cidr: every old deny range stays denied (inside a
//     new one), and the exceptions (allow, allow_cidr) are covered by old
//     ones; to allowlist from there, names are covered by old exceptions
//     and CIDRs by old exceptions or outside every old deny range;
//   - inject: only rules the old policy had (dropping some is narrowing).

// narrows refuses n unless it is old or narrower (old nil: mode none).
func narrows(old, n *Network) error {
	if old == nil {
		old = &Network{Mode: NetNone}
	}
	rank := map[string]int{NetNone: 0, "": 0, NetAllowlist: 1, NetOpen: 2}
	if rank[n.Mode] > rank[old.Mode] {
		return errs.New(errs.CodeForbidden, "a sandbox token may only narrow the sandbox's network (mode %s to %s widens it)", modeName(old.Mode), n.Mode)
	}
	if old.Mode == NetOpen && len(old.DenyCIDR) > 0 {
		if err := narrowsDeny(old, n); err != nil {
			return err
		}
	}
	if n.Mode == NetAllowlist && old.Mode == NetAllowlist {
		if a, ok := uncoveredAllow(old.Allow, n.Allow); !ok {
			return errs.New(errs.CodeForbidden, "a sandbox token may only narrow the sandbox's network: %s is not within its allowlist", a)
		}
		for _, c := range n.AllowCIDR {
			if !cidrCovered(c, old.AllowCIDR) {
				return errs.New(errs.CodeForbidden, "a sandbox token may only narrow the sandbox's network: %s is not within its allow_cidr", c)
			}
		}
	}
	for _, r := range n.Inject {
		if !hasRule(old.Inject, r) {
			return errs.New(errs.CodeForbidden, "a sandbox token cannot add inject rules (network.inject for %s: only a key with the network right can)", r.Host)
		}
	}
	return nil
}

func modeName(m string) string {
	if m == "" {
		return NetNone
	}
	return m
}

func coveredBy(q policy.Pattern, old []policy.Pattern) bool {
	for _, p := range old {
		if p.Covers(q) {
			return true
		}
	}
	return false
}

func cidrCovered(c string, old []string) bool {
	q, err := policy.ParseCIDR(c)
	if err != nil {
		return false
	}
	for _, o := range old {
		p, err := policy.ParseCIDR(o)
		if err == nil && p.Addr().Is4() == q.Addr().Is4() && p.Bits() <= q.Bits() && p.Contains(q.Addr()) {
			return true
		}
	}
	return false
}

func hasRule(rules []wire.InjectRule, r wire.InjectRule) bool {
	for _, o := range rules {
		if o == r {
			return true
		}
	}
	return false
}

// narrowsDeny: n from an open policy with deny_cidr (see narrows).
func narrowsDeny(old, n *Network) error {
	widen := func(what string) error {
		return errs.New(errs.CodeForbidden, "a sandbox token may only narrow the sandbox's network: %s", what)
	}
	switch n.Mode {
	case NetOpen:
		for _, d := range old.DenyCIDR {
			if !cidrCovered(d, n.DenyCIDR) {
				return widen(d + " must stay in deny_cidr")
			}
		}
	case NetAllowlist:
		for _, c := range n.AllowCIDR {
			if !cidrCovered(c, old.AllowCIDR) && overlapsAny(c, old.DenyCIDR) {
				return widen(c + " overlaps the sandbox's deny_cidr")
			}
		}
	default:
		return nil
	}
	if n.Mode == NetOpen {
		for _, c := range n.AllowCIDR {
			if !cidrCovered(c, old.AllowCIDR) {
				return widen(c + " is not within its allow_cidr")
			}
		}
	}
	if a, ok := uncoveredAllow(old.Allow, n.Allow); !ok {
		return widen(a + " is not within its allow exceptions to deny_cidr")
	}
	return nil
}

// uncoveredAllow returns the first of next's allow patterns that no
// pattern of prev covers (an unparsable one counts as uncovered), and
// false; or "", true when every one is covered.
func uncoveredAllow(prev, next []string) (string, bool) {
	pats := make([]policy.Pattern, 0, len(prev))
	for _, a := range prev {
		if p, err := policy.ParsePattern(a); err == nil {
			pats = append(pats, p)
		}
	}
	for _, a := range next {
		q, err := policy.ParsePattern(a)
		if err != nil || !coveredBy(q, pats) {
			return a, false
		}
	}
	return "", true
}

func overlapsAny(c string, ranges []string) bool {
	q, err := policy.ParseCIDR(c)
	if err != nil {
		return true
	}
	for _, r := range ranges {
		if p, err := policy.ParseCIDR(r); err != nil || p.Overlaps(q) {
			return true
		}
	}
	return false
}
