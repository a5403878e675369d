//go:build linux

package network

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// resolveIdentity settles and records the identity of instance
// o.Instance: what the store recorded, what is attached, and what the
// host's namespace already uses (addresses, routes, other instances'
// tables).
func resolveIdentity(ctx context.Context, o Options, ns *hostNS) (identity, error) {
	ids := idStore{o.DB}
	rec, recorded, err := ids.get(ctx)
	if err != nil {
		return identity{}, err
	}
	atts, err := attachStore{o.DB}.list(ctx)
	if err != nil {
		return identity{}, err
	}
	use, err := hostUsage(ns)
	if err != nil {
		return identity{}, fmt.Errorf("network: %w", err)
	}
	id, err := chooseIdentity(o.Instance, rec, recorded, len(atts) > 0, use)
	if err != nil {
		return identity{}, err
	}
	if id.ID != "" && id.ID != o.Instance {
		o.Log.Warn("network: keeping the recorded instance while its sandboxes are attached", "recorded", id.ID, "asked", o.Instance)
	}
	if id.ID == "" {
		o.Log.Info("network: sandboxes attached before instances existed keep the fixed names until none is left")
	}
	if err := ids.put(ctx, id); err != nil {
		return identity{}, err
	}
	return id, nil
}

// hostUsage lists the prefixes of the host namespace's addresses and
// routes, and its nftables tables.
func hostUsage(ns *hostNS) (hostUse, error) {
	var h *netlink.Handle
	var err error
	if ns.fd >= 0 {
		h, err = netlink.NewHandleAt(netns.NsHandle(ns.fd), unix.NETLINK_ROUTE)
	} else {
		h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
	}
	if err != nil {
		return hostUse{}, fmt.Errorf("netlink: %w", err)
	}
	defer h.Close()
	var u hostUse
	addrs, err := h.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return hostUse{}, fmt.Errorf("list addresses: %w", err)
	}
	for _, a := range addrs {
		if p, ok := prefixOf(a.IPNet); ok {
			u.prefixes = append(u.prefixes, p)
		}
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return hostUse{}, fmt.Errorf("list routes: %w", err)
	}
	for _, r := range routes {
		if p, ok := prefixOf(r.Dst); ok && p.Bits() > 0 { // a default route covers everything: not a use
			u.prefixes = append(u.prefixes, p)
		}
	}
	var opts []nftables.ConnOption
	if ns.fd >= 0 {
		opts = append(opts, nftables.WithNetNSFd(ns.fd))
	}
	c, err := nftables.New(opts...)
	if err != nil {
		return hostUse{}, fmt.Errorf("nftables: %w", err)
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyINet)
	if err != nil {
		return hostUse{}, fmt.Errorf("nftables: list tables: %w", err)
	}
	for _, t := range tables {
		u.tables = append(u.tables, t.Name)
	}
	return u, nil
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	bits, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), bits).Masked(), true
}

// addAnchors puts the instance's anchor addresses on the host
// namespace's loopback (already there after a restart is fine).
func (s *Stack) addAnchors() error {
	if len(s.anchor) == 0 {
		return nil
	}
	lo, err := s.h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("network: loopback: %w", err)
	}
	for _, a := range s.anchor {
		if err := s.h.AddrAdd(lo, nlAddr(netip.PrefixFrom(a, a.BitLen()))); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("network: the egress address %s: %w", a, err)
		}
	}
	return nil
}

// removeAnchors takes them away again (no sandbox is attached).
func (s *Stack) removeAnchors() {
	if len(s.anchor) == 0 || s.h == nil {
		return
	}
	lo, err := s.h.LinkByName("lo")
	if err != nil {
		return
	}
	for _, a := range s.anchor {
		if err := s.h.AddrDel(lo, nlAddr(netip.PrefixFrom(a, a.BitLen()))); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
			s.log.Warn("network: cannot remove the egress address", "addr", a.String(), "err", err)
		}
	}
}

// isGatewayProxy reports whether dst is the explicit proxy as a sandbox
// addresses it: a host-side address of this instance's pool, at the
// proxy's port.
func (s *Stack) isGatewayProxy(dst netip.AddrPort) bool {
	if dst.Port() != s.o.ProxyPort {
		return false
	}
	for _, p := range s.plan.Pools() {
		if p.Contains(dst.Addr()) {
			return true
		}
	}
	return false
}
