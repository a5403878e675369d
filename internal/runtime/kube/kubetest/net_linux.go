//go:build linux

package kubetest

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"

	"github.com/vishvananda/netlink"
)

// hostNet is the node's pod network: a bridge carrying the node IP, the
// pods' /24 and the service /24 next to it, and the nftables tables that
// isolate it (see netpol.go for what they enforce).
type hostNet struct {
	Bridge  string
	NodeIP  netip.Addr
	PodCIDR netip.Prefix
	SvcCIDR netip.Prefix
	Table   string // nftables tables (inet and bridge) of this cluster
}

// setupNet creates the bridge on a /23 of 10.0.0.0/8 that no address or
// route of the host overlaps.
func setupNet(suffix string) (*hostNet, error) {
	pods, err := freeSubnet()
	if err != nil {
		return nil, err
	}
	a := pods.Addr().As4()
	a[2]++
	n := &hostNet{Bridge: "pkt" + suffix, PodCIDR: pods, SvcCIDR: netip.PrefixFrom(netip.AddrFrom4(a), 24),
		NodeIP: pods.Addr().Next(), Table: "paddock_kubetest_" + suffix}
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: n.Bridge}}
	if err := netlink.LinkAdd(br); err != nil {
		return nil, fmt.Errorf("create bridge %s: %w", n.Bridge, err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: n.NodeIP.AsSlice(), Mask: net.CIDRMask(24, 32)}}
	if err := netlink.AddrAdd(br, addr); err != nil {
		n.teardown()
		return nil, fmt.Errorf("address the bridge: %w", err)
	}
	if err := netlink.LinkSetUp(br); err != nil {
		n.teardown()
		return nil, fmt.Errorf("bring the bridge up: %w", err)
	}
	// Pods never talk to each other at layer 2 (the bridge table drops
	// every frame between ports). The host answers their ARP for each
	// other (private-VLAN proxy ARP, at once) and routes between them, so
	// that every packet between pods crosses the host's inet forward hook,
	// where conntrack works and NetworkPolicy is enforced. Forwarding is
	// on for this bridge only; ip_forward stays as it was.
	for _, s := range [][2]string{
		{"net/ipv4/conf/" + n.Bridge + "/forwarding", "1"},
		{"net/ipv4/conf/" + n.Bridge + "/proxy_arp", "1"},
		{"net/ipv4/conf/" + n.Bridge + "/proxy_arp_pvlan", "1"},
		{"net/ipv4/conf/" + n.Bridge + "/send_redirects", "0"},
		{"net/ipv4/neigh/" + n.Bridge + "/proxy_delay", "0"},
		{"net/ipv6/conf/" + n.Bridge + "/disable_ipv6", "1"},
	} {
		if err := os.WriteFile("/proc/sys/"+s[0], []byte(s[1]), 0); err != nil {
			n.teardown()
			return nil, fmt.Errorf("sysctl %s: %w", s[0], err)
		}
	}
	if err := n.apply(renderRuleset(n, nil)); err != nil {
		n.teardown()
		return nil, err
	}
	return n, nil
}

// apply replaces this cluster's tables with ruleset in one transaction.
func (n *hostNet) apply(ruleset string) error {
	var pre bytes.Buffer
	// Declaring then deleting makes the replacement work whether or not
	// the tables exist yet; nft applies the whole file atomically.
	fmt.Fprintf(&pre, "table inet %s {}\ndelete table inet %s\ntable bridge %s {}\ndelete table bridge %s\n",
		n.Table, n.Table, n.Table, n.Table)
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(pre.String() + ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// teardown removes the tables and the bridge (its sysctls go with it).
// Pods' veths are gone once their network namespaces are.
func (n *hostNet) teardown() error {
	var problems []string
	for _, fam := range []string{"inet", "bridge"} {
		out, err := exec.Command("nft", "list", "table", fam, n.Table).CombinedOutput()
		if err != nil {
			continue // no such table
		}
		_ = out
		if out, err := exec.Command("nft", "delete", "table", fam, n.Table).CombinedOutput(); err != nil {
			problems = append(problems, fmt.Sprintf("nft delete table %s %s: %s", fam, n.Table, bytes.TrimSpace(out)))
		}
	}
	if l, err := netlink.LinkByName(n.Bridge); err == nil {
		if err := netlink.LinkDel(l); err != nil {
			problems = append(problems, fmt.Sprintf("delete bridge %s: %v", n.Bridge, err))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// freeSubnet picks a /23 in 10.64.0.0/10 that overlaps nothing on the
// host (other helpers' namespaces and bridges live there too).
func freeSubnet() (netip.Prefix, error) {
	var used []netip.Prefix
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return netip.Prefix{}, err
	}
	for _, a := range addrs {
		if p, ok := prefixOf(a.IPNet); ok {
			used = append(used, p)
		}
	}
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: 0}, 0)
	if err != nil {
		return netip.Prefix{}, err
	}
	for _, r := range routes {
		if p, ok := prefixOf(r.Dst); ok && p.Bits() > 0 {
			used = append(used, p)
		}
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	start := binary.BigEndian.Uint32(b[:])
	const slots = 1 << 13 // /23s in a /10
	for i := uint32(0); i < slots; i++ {
		k := (start + i) % slots
		v := uint32(10)<<24 | 64<<16 | k<<9
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], v)
		cand := netip.PrefixFrom(netip.AddrFrom4(a), 23)
		clash := false
		for _, u := range used {
			if u.Overlaps(cand) {
				clash = true
				break
			}
		}
		if !clash {
			return netip.PrefixFrom(cand.Addr(), 24), nil
		}
	}
	return netip.Prefix{}, errors.New("no free /23 in 10.64.0.0/10 for the pod network")
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP.To4())
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a, ones).Masked(), true
}
