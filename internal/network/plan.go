package network

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
)

// Plan is the address plan: slot i of the pool is the IPv4 /30 number i
// (host side .1, sandbox .2) and the IPv6 /64 number i (host ::1,
// sandbox ::2), on the host interface Prefix+hex(i).
type Plan struct {
	V4     netip.Prefix
	V6     netip.Prefix // invalid: no IPv6
	Prefix string       // interface name prefix
	Slots  int
}

// Defaults of the plan.
const (
	DefaultPoolV4   = "10.201.0.0/16"
	DefaultPoolV6   = "fd70:6164:646b::/48"
	DefaultIfPrefix = "pdk"
)

// NewPlan checks a pool configuration. v6 may be "" for IPv4 only.
func NewPlan(v4, v6, prefix string) (Plan, error) {
	var p Plan
	var err error
	if p.V4, err = netip.ParsePrefix(v4); err != nil || !p.V4.Addr().Is4() || p.V4.Masked() != p.V4 {
		return p, fmt.Errorf("IPv4 pool %q: want a network such as 10.201.0.0/16", v4)
	}
	if p.V4.Bits() > 28 || p.V4.Bits() < 8 {
		return p, fmt.Errorf("IPv4 pool %s: its length must be /8 to /28", v4)
	}
	p.Slots = 1 << (30 - p.V4.Bits())
	if v6 != "" {
		if p.V6, err = netip.ParsePrefix(v6); err != nil || !p.V6.Addr().Is6() || p.V6.Addr().Is4In6() || p.V6.Masked() != p.V6 {
			return p, fmt.Errorf("IPv6 pool %q: want a network such as fd70:6164:646b::/48", v6)
		}
		if p.V6.Bits() > 62 {
			return p, fmt.Errorf("IPv6 pool %s: its length must be at most /62", v6)
		}
		if n := 64 - p.V6.Bits(); n < 31 && 1<<n < p.Slots {
			p.Slots = 1 << n
		}
	}
	if p.Slots > 1<<20 {
		p.Slots = 1 << 20
	}
	if prefix == "" || len(prefix) > 9 {
		return p, errors.New("interface prefix must be 1-9 characters")
	}
	for _, c := range prefix {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return p, fmt.Errorf("interface prefix %q: lower-case letters and digits only", prefix)
		}
	}
	p.Prefix = prefix
	return p, nil
}

// Slot are the addresses of one slot.
type Slot struct {
	Index        int
	IfName       string
	HostV4, SbV4 netip.Addr // on a /30
	HostV6, SbV6 netip.Addr // on a /64 (invalid without IPv6)
}

// Slot returns slot i's addresses.
func (p Plan) Slot(i int) Slot {
	s := Slot{Index: i, IfName: p.Prefix + strconv.FormatInt(int64(i), 16)}
	b := p.V4.Addr().As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n += uint32(i) * 4
	s.HostV4 = netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n + 1)})
	s.SbV4 = netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n + 2)})
	if p.V6.IsValid() {
		a := p.V6.Addr().As16()
		// slot number in bits [V6.Bits(), 64)
		hi := uint64(a[0])<<56 | uint64(a[1])<<48 | uint64(a[2])<<40 | uint64(a[3])<<32 |
			uint64(a[4])<<24 | uint64(a[5])<<16 | uint64(a[6])<<8 | uint64(a[7])
		hi |= uint64(i)
		for k := 0; k < 8; k++ {
			a[k] = byte(hi >> (56 - 8*k))
		}
		a[15] = 1
		s.HostV6 = netip.AddrFrom16(a)
		a[15] = 2
		s.SbV6 = netip.AddrFrom16(a)
	}
	return s
}

// Pools are the plan's prefixes (sandboxes may never reach them).
func (p Plan) Pools() []netip.Prefix {
	out := []netip.Prefix{p.V4}
	if p.V6.IsValid() {
		out = append(out, p.V6)
	}
	return out
}

// slotOf parses an interface name of this plan back to its slot.
func (p Plan) slotOf(ifname string) (int, bool) {
	if len(ifname) <= len(p.Prefix) || ifname[:len(p.Prefix)] != p.Prefix {
		return 0, false
	}
	n, err := strconv.ParseInt(ifname[len(p.Prefix):], 16, 32)
	if err != nil || n < 0 || int(n) >= p.Slots || p.Slot(int(n)).IfName != ifname {
		return 0, false
	}
	return int(n), true
}
