//go:build linux

package network

import (
	"fmt"

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
type ruleset struct {
	table     string
	prefix    string
	proxyPort uint16
	dnsPort   uint16
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
	add(nat, cat(iif, l4(unix.IPPROTO_UDP), dport(53), redirect(r.dnsPort))...)
	add(nat, cat(iif, l4(unix.IPPROTO_TCP), dport(53), redirect(r.dnsPort))...)
	// Every TCP connection goes to the proxy, on any port: programs that
	// ignore proxy variables are governed too.
	add(nat, cat(iif, l4(unix.IPPROTO_TCP), redirect(r.proxyPort))...)

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
	// The proxy and resolver listen on wildcard addresses: nobody but a
	// sandbox may reach them.
	add(in, cat(notIif, l4(unix.IPPROTO_TCP), dport(r.proxyPort), rst)...)
	add(in, cat(notIif, l4(unix.IPPROTO_TCP), dport(r.dnsPort), rst)...)
	add(in, cat(notIif, l4(unix.IPPROTO_UDP), dport(r.dnsPort), unreach)...)

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

func accept() []expr.Any { return []expr.Any{&expr.Verdict{Kind: expr.VerdictAccept}} }
func drop() []expr.Any   { return []expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}} }
