//go:build linux

package network

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// sandboxIf is the name of the interface inside a sandbox.
const sandboxIf = "eth0"

// createLink makes the veth pair of slot: the host end in the host
// namespace, the other end created directly in the namespace of pid, both
// addressed, the sandbox's default routes through the host end. About ten
// netlink messages; no process is started.
func (s *Stack) createLink(slot Slot, pid int) error {
	sbns, err := netns.GetFromPath("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return fmt.Errorf("network: the sandbox's namespace: %w", err)
	}
	defer sbns.Close()
	return s.createLinkIn(slot, sbns)
}

// createLinkIn is createLink into the namespace sbns (a sandbox's, or one
// prepared for a sandbox: prepare_linux.go).
func (s *Stack) createLinkIn(slot Slot, sbns netns.NsHandle) error {
	la := netlink.NewLinkAttrs()
	la.Name = slot.IfName
	la.Flags = net.FlagUp
	veth := &netlink.Veth{LinkAttrs: la, PeerName: sandboxIf, PeerNamespace: netlink.NsFd(int(sbns))}
	if err := s.h.LinkAdd(veth); err != nil {
		return fmt.Errorf("network: create %s: %w", slot.IfName, err)
	}
	if veth.Index == 0 {
		return fmt.Errorf("network: %s vanished after creation", slot.IfName)
	}
	host := []netip.Prefix{netip.PrefixFrom(slot.HostV4, 30)}
	sb := []netip.Prefix{netip.PrefixFrom(slot.SbV4, 30)}
	if slot.HostV6.IsValid() {
		host = append(host, netip.PrefixFrom(slot.HostV6, 64))
		sb = append(sb, netip.PrefixFrom(slot.SbV6, 64))
	}
	for _, p := range host {
		if err := s.h.AddrAdd(veth, nlAddr(p)); err != nil {
			return fmt.Errorf("network: address %s on %s: %w", p, slot.IfName, err)
		}
	}
	sh, err := netlink.NewHandleAt(sbns, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("network: netlink in the sandbox: %w", err)
	}
	defer sh.Close()
	peer, err := sh.LinkByName(sandboxIf)
	if err != nil {
		return fmt.Errorf("network: the sandbox's interface: %w", err)
	}
	// Up first: IPv6 installs an address's prefix route only on a link
	// that is up, and the default route needs it.
	if err := sh.LinkSetUp(peer); err != nil {
		return fmt.Errorf("network: the sandbox's interface up: %w", err)
	}
	for _, p := range sb {
		if err := sh.AddrAdd(peer, nlAddr(p)); err != nil {
			return fmt.Errorf("network: the sandbox's address %s: %w", p, err)
		}
	}
	gws := []netip.Addr{slot.HostV4}
	if slot.HostV6.IsValid() {
		gws = append(gws, slot.HostV6)
	}
	for _, gw := range gws {
		r := &netlink.Route{LinkIndex: peer.Attrs().Index, Gw: gw.AsSlice(), Flags: int(netlink.FLAG_ONLINK)}
		if gw.Is6() {
			r.Family = netlink.FAMILY_V6
		} else {
			r.Family = netlink.FAMILY_V4
		}
		if err := sh.RouteAdd(r); err != nil {
			return fmt.Errorf("network: the sandbox's route via %s: %w", gw, err)
		}
	}
	return nil
}

// nlAddr is an interface address; IPv6 ones skip duplicate address
// detection (no other node shares the link, and DAD would leave the
// address unusable for a second).
func nlAddr(p netip.Prefix) *netlink.Addr {
	a := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
	if p.Addr().Is6() {
		a.Flags = unix.IFA_F_NODAD
	}
	return a
}

// deleteLink removes a host-side interface (and with it the pair). Gone
// already (the sandbox's namespace died and took its end along) is fine.
func (s *Stack) deleteLink(name string) error {
	l, err := s.h.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("network: find %s: %w", name, err)
	}
	if err := s.h.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("network: delete %s: %w", name, err)
	}
	return nil
}

func readFileLimit(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}
