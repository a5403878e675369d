package policy

import (
	"net/netip"
	"sync/atomic"
)

// Reasons an address is refused.
const (
	ReasonUnspecified = "unspecified address"
	ReasonLoopback    = "loopback"
	ReasonPrivate     = "private network"
	ReasonLinkLocal   = "link-local"
	ReasonCGNAT       = "carrier-grade NAT range"
	ReasonMetadata    = "cloud metadata service"
	ReasonMulticast   = "multicast or broadcast"
	ReasonReserved    = "reserved range"
	ReasonDocs        = "documentation range"
	ReasonULA         = "unique local (private) IPv6"
	ReasonHost        = "an address of this host"
	ReasonSandboxes   = "the sandbox network"
	ReasonTranslated  = "translation range (embeds an address that is refused)"
)

type rangeReason struct {
	p      netip.Prefix
	reason string
}

func mustRanges(rs ...string) []rangeReason {
	out := make([]rangeReason, 0, len(rs)/2)
	for i := 0; i < len(rs); i += 2 {
		out = append(out, rangeReason{netip.MustParsePrefix(rs[i]), rs[i+1]})
	}
	return out
}

// alwaysRefused can never be allowed by an admin exception: reaching them
// would hand the sandbox the host itself (SSRF against local services).
var alwaysRefused = mustRanges(
	"0.0.0.0/8", ReasonUnspecified,
	"127.0.0.0/8", ReasonLoopback,
	"224.0.0.0/4", ReasonMulticast,
	"255.255.255.255/32", ReasonMulticast,
	"::/128", ReasonUnspecified,
	"::1/128", ReasonLoopback,
	"ff00::/8", ReasonMulticast,
)

// refused are the ranges that are not public destinations; an admin may
// open a CIDR inside them (--egress-allow-cidr) for internal services.
// Metadata services come first so that they are named as such
// (SSRF to 169.254.169.254 is how cloud credentials are stolen).
var refused = mustRanges(
	"169.254.169.254/32", ReasonMetadata,
	"169.254.170.2/32", ReasonMetadata, // ECS task metadata
	"100.100.100.200/32", ReasonMetadata, // Alibaba
	"fd00:ec2::254/128", ReasonMetadata, // EC2 over IPv6
	"10.0.0.0/8", ReasonPrivate,
	"172.16.0.0/12", ReasonPrivate,
	"192.168.0.0/16", ReasonPrivate,
	"100.64.0.0/10", ReasonCGNAT,
	"169.254.0.0/16", ReasonLinkLocal,
	"192.0.0.0/24", ReasonReserved,
	"192.0.2.0/24", ReasonDocs,
	"198.51.100.0/24", ReasonDocs,
	"203.0.113.0/24", ReasonDocs,
	"192.88.99.0/24", ReasonReserved,
	"198.18.0.0/15", ReasonReserved,
	"240.0.0.0/4", ReasonReserved,
	"fc00::/7", ReasonULA,
	"fe80::/10", ReasonLinkLocal,
	"fec0::/10", ReasonLinkLocal,
	"100::/64", ReasonReserved,
	"2001::/32", ReasonTranslated, // Teredo
	"2001:db8::/32", ReasonDocs,
	"2001:10::/28", ReasonReserved,
	"2001:20::/28", ReasonReserved,
	"64:ff9b:1::/48", ReasonTranslated,
	"::/96", ReasonReserved, // IPv4-compatible (deprecated)
)

// Guard decides which destination addresses are refused: the ranges
// above, the host's own addresses and the sandbox address pools (never),
// minus the admin's exceptions. Safe for concurrent use.
type Guard struct {
	except []netip.Prefix
	pools  []netip.Prefix
	host   atomic.Pointer[map[netip.Addr]bool]
}

// NewGuard returns a guard. except are admin exceptions; pools are the
// sandbox address pools (sandboxes must not reach one another).
func NewGuard(except, pools []netip.Prefix) *Guard {
	g := &Guard{except: append([]netip.Prefix(nil), except...), pools: append([]netip.Prefix(nil), pools...)}
	m := map[netip.Addr]bool{}
	g.host.Store(&m)
	return g
}

// SetHostAddrs replaces the set of the host's own addresses.
func (g *Guard) SetHostAddrs(addrs []netip.Addr) {
	m := make(map[netip.Addr]bool, len(addrs))
	for _, a := range addrs {
		m[a.Unmap().WithZone("")] = true
	}
	g.host.Store(&m)
}

// Check reports whether a may be connected to; if not, why.
func (g *Guard) Check(a netip.Addr) (reason string, ok bool) {
	if !a.IsValid() {
		return ReasonUnspecified, false
	}
	a = a.Unmap().WithZone("")
	if (*g.host.Load())[a] {
		return ReasonHost, false
	}
	for _, p := range g.pools {
		if p.Contains(a) {
			return ReasonSandboxes, false
		}
	}
	for _, r := range alwaysRefused {
		if r.p.Contains(a) {
			return r.reason, false
		}
	}
	// NAT64 and 6to4 carry an IPv4 address: judge that one, so that
	// 64:ff9b::a9fe:a9fe cannot stand in for 169.254.169.254.
	if v4, ok := embeddedV4(a); ok {
		if reason, ok := g.Check(v4); !ok {
			return ReasonTranslated + ": " + reason, false
		}
		return "", true
	}
	for _, p := range g.except {
		if p.Contains(a) {
			return "", true
		}
	}
	for _, r := range refused {
		if r.p.Contains(a) {
			return r.reason, false
		}
	}
	return "", true
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixToF4 = netip.MustParsePrefix("2002::/16")
)

func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToF4.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}
