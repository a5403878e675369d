//go:build linux

package network

import (
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// The host-side enforcement, one inet table for IPv4 and IPv6. Every rule
// matches sandbox interfaces by their name prefix, so attaching or
// detaching a sandbox touches no rule (it costs no netlink message here),
// and the whole table is replaced atomically on start.
//
//	chain antispoof { type filter hook prerouting priority mangle
//	    iifname "pdk*" fib saddr . iif oif missing drop }
//	chain redirect { type nat hook prerouting priority dstnat
//	    iifname "pdk*" udp dport 53 redirect to :DNS
//	    iifname "pdk*" tcp dport 53 redirect to :DNS
//	    iifname "pdk*" meta l4proto tcp redirect to :PROXY }
//	chain input { type filter hook input priority filter
//	    iifname "pdk*" ct state established,related accept
//	    iifname "pdk*" tcp dport PROXY accept
//	    iifname "pdk*" udp dport DNS accept
//	    iifname "pdk*" tcp dport DNS accept
//	    iifname "pdk*" icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept
//	    iifname "pdk*" meta l4proto tcp reject with tcp reset
//	    iifname "pdk*" reject with icmpx port-unreachable
//	    iifname != "pdk*" tcp dport { PROXY, DNS } reject with tcp reset
//	    iifname != "pdk*" udp dport DNS reject with icmpx port-unreachable }
//	chain forward { type filter hook forward priority filter
//	    iifname "pdk*" reject with icmpx admin-prohibited
//	    oifname "pdk*" drop }
//
// With an instance identity (anchor addresses set) the redirects are
// dnat to the instance's own anchor address, where alone its proxy and
// resolver listen, and the guard rules for other interfaces match that
// address only: another server's rules and ports are left alone.
type ruleset struct {
	table     string
	prefix    string
	proxyPort uint16
	dnsPort   uint16
	anchor4   netip.Addr // invalid: redirect, listeners on wildcard addresses
	anchor6   netip.Addr
}

// anchored reports whether the rules dnat to anchor addresses.
func (r ruleset) anchored() bool { return r.anchor4.IsValid() }

// toProxy sends what matched to port: redirect (to the interface's own
// address), or dnat to the anchor of the packet's family.
func (r ruleset) toProxy(add func(...expr.Any), match []expr.Any, port uint16) {
	if !r.anchored() {
		add(cat(match, redirect(port))...)
		return
	}
	for _, a := range []netip.Addr{r.anchor4, r.anchor6} {
		if a.IsValid() {
			add(cat(nfproto(a), match, dnat(a, port))...)
		}
	}
}

// guardPort refuses other interfaces' packets to port with verdict: on
// any address, or on the anchors only.
func (r ruleset) guardPort(add func(...expr.Any), notIif []expr.Any, proto byte, port uint16, verdict []expr.Any) {
	if !r.anchored() {
		add(cat(notIif, l4(proto), dport(port), verdict)...)
		return
	}
	for _, a := range []netip.Addr{r.anchor4, r.anchor6} {
		if a.IsValid() {
			add(cat(nfproto(a), daddr(a), notIif, l4(proto), dport(port), verdict)...)
		}
	}
}

func (r ruleset) install(nsfd int) error {
	var opts []nftables.ConnOption
	if nsfd >= 0 {
		opts = append(opts, nftables.WithNetNSFd(nsfd))
	}
	c, err := nftables.New(opts...)
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	t := &nftables.Table{Family: nftables.TableFamilyINet, Name: r.table}
	// add + delete + add in one transaction: replaces whatever an earlier
	// server left, atomically (no moment without the rules).
	c.AddTable(t)
	c.DelTable(t)
	t = c.AddTable(t)
	chain := func(name string, typ nftables.ChainType, hook *nftables.ChainHook, prio *nftables.ChainPriority) *nftables.Chain {
		return c.AddChain(&nftables.Chain{Name: name, Table: t, Type: typ, Hooknum: hook, Priority: prio})
	}
	anti := chain("antispoof", nftables.ChainTypeFilter, nftables.ChainHookPrerouting, nftables.ChainPriorityMangle)
	nat := chain("redirect", nftables.ChainTypeNAT, nftables.ChainHookPrerouting, nftables.ChainPriorityNATDest)
	in := chain("input", nftables.ChainTypeFilter, nftables.ChainHookInput, nftables.ChainPriorityFilter)
	fwd := chain("forward", nftables.ChainTypeFilter, nftables.ChainHookForward, nftables.ChainPriorityFilter)
	add := func(ch *nftables.Chain, exprs ...expr.Any) {
		c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: exprs})
	}
	iif := r.ifMatch(unix.NFT_META_IIFNAME, expr.CmpOpEq)
	oif := r.ifMatch(unix.NFT_META_OIFNAME, expr.CmpOpEq)
	notIif := r.ifMatch(unix.NFT_META_IIFNAME, expr.CmpOpNeq)

	// A sandbox speaks only from its own addresses: another sandbox's
	// source address would make the proxy apply that sandbox's policy.
	add(anti, cat(iif,
		[]expr.Any{&expr.Fib{Register: 1, FlagSADDR: true, FlagIIF: true, ResultOIF: true},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{0, 0, 0, 0}},
			&expr.Verdict{Kind: expr.VerdictDrop}})...)

	// Every DNS query goes to the resolver, whatever server it was sent
	// to (a hard-coded 8.8.8.8 must not bypass the allowlist, nor carry
	// data out in query names).
	addNat := func(e ...expr.Any) { add(nat, e...) }
	r.toProxy(addNat, cat(iif, l4(unix.IPPROTO_UDP), dport(53)), r.dnsPort)
	r.toProxy(addNat, cat(iif, l4(unix.IPPROTO_TCP), dport(53)), r.dnsPort)
	// Every TCP connection goes to the proxy, on any port: programs that
	// ignore proxy variables are governed too.
	r.toProxy(addNat, cat(iif, l4(unix.IPPROTO_TCP)), r.proxyPort)

	rst := []expr.Any{&expr.Reject{Type: unix.NFT_REJECT_TCP_RST}}
	unreach := []expr.Any{&expr.Reject{Type: unix.NFT_REJECT_ICMPX_UNREACH, Code: unix.NFT_REJECT_ICMPX_PORT_UNREACH}}
	add(in, cat(iif, ctState(expr.CtStateBitESTABLISHED|expr.CtStateBitRELATED), accept())...)
	// Every TCP packet of a sandbox was redirected to one of these two
	// ports (a connection to the proxy's own address and port is a no-op
	// redirect, so conntrack does not mark it as NATed: do not ask).
	add(in, cat(iif, l4(unix.IPPROTO_TCP), dport(r.proxyPort), accept())...)
	add(in, cat(iif, l4(unix.IPPROTO_UDP), dport(r.dnsPort), accept())...)
	add(in, cat(iif, l4(unix.IPPROTO_TCP), dport(r.dnsPort), accept())...)
	// Neighbour discovery, without which IPv6 does not work on the link.
	add(in, cat(iif, l4(unix.IPPROTO_ICMPV6),
		[]expr.Any{&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 0, Len: 1},
			&expr.Range{Op: expr.CmpOpEq, Register: 1, FromData: []byte{135}, ToData: []byte{136}}},
		accept())...)
	// Everything else from a sandbox to the host fails fast: the host's
	// own services (the API, sshd, ...) are never reachable.
	add(in, cat(iif, l4(unix.IPPROTO_TCP), rst)...)
	add(in, cat(iif, unreach)...)
	// Nobody but a sandbox may reach the proxy and resolver (on wildcard
	// addresses, or on the anchor).
	addIn := func(e ...expr.Any) { add(in, e...) }
	r.guardPort(addIn, notIif, unix.IPPROTO_TCP, r.proxyPort, rst)
	r.guardPort(addIn, notIif, unix.IPPROTO_TCP, r.dnsPort, rst)
	r.guardPort(addIn, notIif, unix.IPPROTO_UDP, r.dnsPort, unreach)

	// Nothing is routed onward from or to a sandbox, whatever ip_forward
	// says: the proxy is the only way out.
	add(fwd, cat(iif, []expr.Any{&expr.Reject{Type: unix.NFT_REJECT_ICMPX_UNREACH, Code: unix.NFT_REJECT_ICMPX_ADMIN_PROHIBITED}})...)
	add(fwd, cat(oif, drop())...)
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables: install table %s: %w", r.table, err)
	}
	return nil
}

// remove deletes the table (tests; a server keeps it across restarts).
func (r ruleset) remove(nsfd int) error {
	var opts []nftables.ConnOption
	if nsfd >= 0 {
		opts = append(opts, nftables.WithNetNSFd(nsfd))
	}
	c, err := nftables.New(opts...)
	if err != nil {
		return err
	}
	t := &nftables.Table{Family: nftables.TableFamilyINet, Name: r.table}
	c.AddTable(t)
	c.DelTable(t)
	return c.Flush()
}

func (r ruleset) ifMatch(key uint32, op expr.CmpOp) []expr.Any {
	// Comparing only len(prefix) bytes makes this a prefix match, as
	// nft's "pdk*".
	return []expr.Any{&expr.Meta{Key: expr.MetaKey(key), Register: 1},
		&expr.Cmp{Op: op, Register: 1, Data: []byte(r.prefix)}}
}

func cat(parts ...[]expr.Any) []expr.Any {
	var out []expr.Any
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func l4(proto byte) []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}}}
}

func dport(p uint16) []expr.Any {
	return []expr.Any{&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(p)}}
}

func redirect(p uint16) []expr.Any {
	return []expr.Any{&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(p)},
		&expr.Redir{RegisterProtoMin: 1}}
}

func ctState(bits uint32) []expr.Any {
	return []expr.Any{&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(bits), Xor: binaryutil.NativeEndian.PutUint32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)}}
}

// nfproto matches the family of a.
func nfproto(a netip.Addr) []expr.Any {
	fam := byte(unix.NFPROTO_IPV4)
	if a.Is6() {
		fam = unix.NFPROTO_IPV6
	}
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{fam}}}
}

// daddr matches destination address a (after nfproto(a)).
func daddr(a netip.Addr) []expr.Any {
	off, n := uint32(16), uint32(4)
	if a.Is6() {
		off, n = 24, 16
	}
	return []expr.Any{&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: n},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: a.AsSlice()}}
}

// dnat sends the packet to a:port (after nfproto(a)).
func dnat(a netip.Addr, port uint16) []expr.Any {
	fam := uint32(unix.NFPROTO_IPV4)
	if a.Is6() {
		fam = unix.NFPROTO_IPV6
	}
	return []expr.Any{&expr.Immediate{Register: 1, Data: a.AsSlice()},
		&expr.Immediate{Register: 2, Data: binaryutil.BigEndian.PutUint16(port)},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: fam, RegAddrMin: 1, RegProtoMin: 2, Specified: true}}
}

func accept() []expr.Any { return []expr.Any{&expr.Verdict{Kind: expr.VerdictAccept}} }
func drop() []expr.Any   { return []expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}} }
