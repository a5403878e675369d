package policy

import (
	"fmt"
	"net/netip"
	"strings"
)

// Limits on one policy, so a spec cannot make matching expensive.
const (
	MaxAllow = 256
	MaxCIDRs = 64
)

// Policy is a compiled network policy of one sandbox. It is immutable:
// a change compiles a new one.
//
// Open mode may carry deny_cidr: address ranges refused although open; its
// allow and allow_cidr entries are then exceptions to those ranges (an
// allowed entry wins over a denied one, as E2B's allowOut over denyOut).
type Policy struct {
	Mode     string
	patterns []Pattern
	cidrs    []netip.Prefix
	deny     []netip.Prefix
}

// InvalidError is a malformed policy entry; Field names it as a spec path
// (e.g. "network.allow[2]") for a clear 400.
type InvalidError struct {
	Field, Value, Problem string
}

func (e *InvalidError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Problem
	}
	return fmt.Sprintf("%s %q: %s", e.Field, clip(e.Value), e.Problem)
}

func clip(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// Compile validates and compiles a policy without deny rules. An empty
// mode means none.
func Compile(mode string, allow, cidrs []string) (*Policy, error) {
	return CompileDeny(mode, allow, cidrs, nil)
}

// CompileDeny validates and compiles a policy; deny (addresses or CIDRs)
// is only for open mode, where allow and cidrs are then its exceptions.
func CompileDeny(mode string, allow, cidrs, deny []string) (*Policy, error) {
	if mode == "" {
		mode = ModeNone
	}
	p := &Policy{Mode: mode}
	if len(deny) > 0 && mode != ModeOpen {
		return nil, &InvalidError{Field: "network.deny_cidr", Problem: "needs network mode open (the other modes refuse everything that is not allowed already)"}
	}
	switch mode {
	case ModeNone:
		if len(allow) > 0 || len(cidrs) > 0 {
			return nil, &InvalidError{Field: "network.allow", Problem: "needs network mode allowlist"}
		}
		return p, nil
	case ModeOpen:
		if len(deny) == 0 && (len(allow) > 0 || len(cidrs) > 0) {
			return nil, &InvalidError{Field: "network.allow", Problem: "open mode reaches every public destination; an allowlist needs mode allowlist (or deny_cidr, of which allow entries are the exceptions)"}
		}
		if len(deny) > MaxCIDRs {
			return nil, &InvalidError{Field: "network.deny_cidr", Problem: fmt.Sprintf("at most %d entries", MaxCIDRs)}
		}
		for i, c := range deny {
			pre, err := ParseCIDR(c)
			if err != nil {
				return nil, &InvalidError{Field: fmt.Sprintf("network.deny_cidr[%d]", i), Value: c, Problem: err.Error()}
			}
			p.deny = append(p.deny, pre)
		}
	case ModeAllowlist:
	default:
		return nil, &InvalidError{Field: "network.mode", Value: mode, Problem: "must be none, allowlist or open"}
	}
	if len(allow) > MaxAllow {
		return nil, &InvalidError{Field: "network.allow", Problem: fmt.Sprintf("at most %d entries", MaxAllow)}
	}
	if len(cidrs) > MaxCIDRs {
		return nil, &InvalidError{Field: "network.allow_cidr", Problem: fmt.Sprintf("at most %d entries", MaxCIDRs)}
	}
	seen := map[Pattern]bool{}
	for i, a := range allow {
		pat, err := ParsePattern(a)
		if err != nil {
			return nil, &InvalidError{Field: fmt.Sprintf("network.allow[%d]", i), Value: a, Problem: err.Error()}
		}
		if !seen[pat] {
			seen[pat] = true
			p.patterns = append(p.patterns, pat)
		}
	}
	for i, c := range cidrs {
		pre, err := ParseCIDR(c)
		if err != nil {
			return nil, &InvalidError{Field: fmt.Sprintf("network.allow_cidr[%d]", i), Value: c, Problem: err.Error()}
		}
		p.cidrs = append(p.cidrs, pre)
	}
	return p, nil
}

// Allow returns the canonical allowlist entries.
func (p *Policy) Allow() []string {
	out := make([]string, len(p.patterns))
	for i, pat := range p.patterns {
		out[i] = pat.String()
	}
	return out
}

// CIDRs returns the canonical allow_cidr entries.
func (p *Policy) CIDRs() []string {
	out := make([]string, len(p.cidrs))
	for i, c := range p.cidrs {
		out[i] = c.String()
	}
	return out
}

// DenyCIDRs returns the canonical deny_cidr entries (open mode).
func (p *Policy) DenyCIDRs() []string {
	out := make([]string, len(p.deny))
	for i, c := range p.deny {
		out[i] = c.String()
	}
	return out
}

// AllowName reports whether the normalised name on port may be reached by
// name, and by which entry. In open mode every name may (the address the
// name resolves to is checked separately: Reach); port 0 asks for any port.
func (p *Policy) AllowName(name string, port int) (string, bool) {
	if by, ok := p.allowedName(name, port); ok {
		return by, true
	}
	if p.Mode == ModeOpen {
		return "open mode", true
	}
	return "", false
}

// allowedName is the allow entry matching name on port, if any.
func (p *Policy) allowedName(name string, port int) (string, bool) {
	if p.Mode == ModeNone {
		return "", false
	}
	for _, pat := range p.patterns {
		if pat.Match(name, port) {
			return pat.String(), true
		}
	}
	return "", false
}

// AllowAddr reports whether an IP destination may be reached as such (an
// IP literal, or an address no allowed name resolved to): in allowlist
// mode only inside allow_cidr; in open mode unless deny_cidr holds it
// and allow_cidr does not (forbidden ranges are the Guard's business).
func (p *Policy) AllowAddr(a netip.Addr) (string, bool) {
	a = a.Unmap()
	if p.Mode == ModeNone {
		return "", false
	}
	for _, c := range p.cidrs {
		if c.Contains(a) {
			if p.Mode == ModeOpen {
				return "allow_cidr " + c.String(), true
			}
			return c.String(), true
		}
	}
	if p.Mode == ModeOpen {
		for _, c := range p.deny {
			if c.Contains(a) {
				return "", false
			}
		}
		return "open mode", true
	}
	return "", false
}

// Reach reports whether a connection to address a, naming name (empty:
// none), on port is allowed, and by which entry: an allowed name or
// address wins over deny_cidr; otherwise the address decides (in
// allowlist mode nothing else allows it). The caller has checked that name
// resolves to a.
func (p *Policy) Reach(name string, port int, a netip.Addr) (string, bool) {
	if name != "" {
		if by, ok := p.allowedName(name, port); ok {
			return by, true
		}
	}
	return p.AllowAddr(a)
}

// DeniedBy is the deny_cidr entry holding a, if any (for a clear refusal).
func (p *Policy) DeniedBy(a netip.Addr) string {
	a = a.Unmap()
	for _, c := range p.deny {
		if c.Contains(a) {
			return c.String()
		}
	}
	return ""
}
