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
type Policy struct {
	Mode     string
	patterns []Pattern
	cidrs    []netip.Prefix
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

// Compile validates and compiles a policy. An empty mode means none.
func Compile(mode string, allow, cidrs []string) (*Policy, error) {
	if mode == "" {
		mode = ModeNone
	}
	p := &Policy{Mode: mode}
	switch mode {
	case ModeNone:
		if len(allow) > 0 || len(cidrs) > 0 {
			return nil, &InvalidError{Field: "network.allow", Problem: "needs network mode allowlist"}
		}
		return p, nil
	case ModeOpen:
		if len(allow) > 0 || len(cidrs) > 0 {
			return nil, &InvalidError{Field: "network.allow", Problem: "open mode reaches every public destination; an allowlist needs mode allowlist"}
		}
		return p, nil
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

// AllowName reports whether the normalised name on port may be reached by
// name, and by which entry. In open mode every name may (the address the
// name resolves to is checked separately); port 0 asks for any port.
func (p *Policy) AllowName(name string, port int) (string, bool) {
	switch p.Mode {
	case ModeOpen:
		return "open mode", true
	case ModeAllowlist:
		for _, pat := range p.patterns {
			if pat.Match(name, port) {
				return pat.String(), true
			}
		}
	}
	return "", false
}

// AllowAddr reports whether an IP destination may be reached as such (an
// IP literal, or an address no allowed name resolved to): in allowlist
// mode only inside allow_cidr; in open mode always (forbidden ranges are
// the Guard's business).
func (p *Policy) AllowAddr(a netip.Addr) (string, bool) {
	a = a.Unmap()
	switch p.Mode {
	case ModeOpen:
		return "open mode", true
	case ModeAllowlist:
		for _, c := range p.cidrs {
			if c.Contains(a) {
				return c.String(), true
			}
		}
	}
	return "", false
}
