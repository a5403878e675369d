package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Modes of a sandbox's network.
const (
	ModeNone      = "none"      // loopback only
	ModeAllowlist = "allowlist" // named destinations only
	ModeOpen      = "open"      // any public destination
)

// Pattern is one allowlist entry: an exact host name or a "*." wildcard
// over every name below a registrable domain, with an optional port.
type Pattern struct {
	Name string // exact name, or the domain under the wildcard (without "*.")
	Wild bool   // matches names strictly below Name, never Name itself
	Port int    // 0: any port
}

// String is the canonical form, which ParsePattern accepts back.
func (p Pattern) String() string {
	s := p.Name
	if p.Wild {
		s = "*." + s
	}
	if p.Port != 0 {
		s += ":" + strconv.Itoa(p.Port)
	}
	return s
}

// Match reports whether the normalised name (see NormalizeName) on port
// is covered. port 0 asks about the name alone (DNS).
func (p Pattern) Match(name string, port int) bool {
	if p.Port != 0 && port != 0 && p.Port != port {
		return false
	}
	if !p.Wild {
		return name == p.Name
	}
	return len(name) > len(p.Name)+1 && strings.HasSuffix(name, p.Name) && name[len(name)-len(p.Name)-1] == '.'
}

const maxPatternLen = 2 + 253 + 6

// ParsePattern parses "example.com", "*.example.com", "example.com:443" or
// "*.example.com:8443". Names are case-insensitive and may end in a dot;
// internationalised names must be given in their xn-- form. A wildcard
// must sit over a registrable domain: "*", "*.com" or "*.co.uk" would let
// a sandbox reach (and leak data to) anyone who registers a name there.
func ParsePattern(s string) (Pattern, error) {
	var p Pattern
	s = strings.TrimSpace(s)
	if s == "" {
		return p, errors.New("empty domain")
	}
	if len(s) > maxPatternLen {
		return p, errors.New("too long")
	}
	host := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		if strings.Count(s, ":") > 1 || strings.HasPrefix(s, "[") {
			return p, errors.New("looks like an IPv6 address: give addresses in allow_cidr")
		}
		port, err := parsePort(s[i+1:])
		if err != nil {
			return p, err
		}
		host, p.Port = s[:i], port
	}
	if host == "*" || strings.HasPrefix(host, "*") && !strings.HasPrefix(host, "*.") {
		return p, errors.New("a wildcard must be \"*.\" followed by a domain, e.g. *.example.com")
	}
	rest, wild := strings.CutPrefix(host, "*.")
	name, err := normalize(rest)
	if err != nil {
		return p, err
	}
	p.Name, p.Wild = name, wild
	if wild {
		if ps, _ := publicsuffix.PublicSuffix(name); ps == name {
			return p, fmt.Errorf("*.%s would cover every domain registered under the public suffix %q", name, ps)
		}
	}
	return p, nil
}

func parsePort(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, errors.New("port must be 1-65535")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("port must be 1-65535")
		}
	}
	n, _ := strconv.Atoi(s)
	if n < 1 || n > 65535 {
		return 0, errors.New("port must be 1-65535")
	}
	return n, nil
}

// NormalizeName lower-cases a host name, strips one trailing dot, and
// reports whether it is a valid DNS host name (not an IP literal).
func NormalizeName(s string) (string, bool) {
	n, err := normalize(s)
	return n, err == nil
}

func normalize(s string) (string, error) {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", errors.New("empty domain")
	}
	if len(s) > 253 {
		return "", errors.New("domain longer than 253 characters")
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return "", errors.New("is an IP address: give addresses in allow_cidr")
	}
	b := []byte(s)
	start := 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == '.' {
			l := b[start:i]
			if len(l) == 0 {
				return "", errors.New("empty label (\"..\")")
			}
			if len(l) > 63 {
				return "", errors.New("label longer than 63 characters")
			}
			if l[0] == '-' || l[len(l)-1] == '-' {
				return "", errors.New("a label cannot start or end with '-'")
			}
			start = i + 1
			continue
		}
		switch c := b[i]; {
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		case c == '*':
			return "", errors.New("a wildcard must be the whole first label (*.example.com)")
		case c >= 0x80:
			return "", errors.New("non-ASCII name: give internationalised names in their xn-- form")
		default:
			return "", fmt.Errorf("invalid character %q", rune(c))
		}
	}
	last := b[strings.LastIndexByte(string(b), '.')+1:]
	numeric := true
	for _, c := range last {
		if c < '0' || c > '9' {
			numeric = false
			break
		}
	}
	if numeric {
		return "", errors.New("the last label is numeric: give IP addresses in allow_cidr")
	}
	return string(b), nil
}

// ParseCIDR parses an address prefix for allow_cidr or an admin exception:
// "203.0.113.0/24", "2001:db8::/32", or a bare address (one host). Host
// bits must be zero, so that what is written is what is allowed.
func ParseCIDR(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, errors.New("not an address or CIDR")
		}
		if a.Zone() != "" {
			return netip.Prefix{}, errors.New("zoned addresses are not allowed")
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("not a valid CIDR (e.g. 203.0.113.0/24)")
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, errors.New("give IPv4 prefixes in dotted form")
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("host bits are set (did you mean %s?)", p.Masked())
	}
	return p, nil
}

// Covers reports whether every name and port q matches p matches too (q
// is p or narrower): what a caller that may only narrow a policy may
// write in place of p.
func (p Pattern) Covers(q Pattern) bool {
	if p.Port != 0 && q.Port != p.Port {
		return false
	}
	if !p.Wild {
		return !q.Wild && q.Name == p.Name
	}
	if q.Wild {
		return q.Name == p.Name || p.Match(q.Name, 0)
	}
	return p.Match(q.Name, 0)
}
