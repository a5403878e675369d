package main

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/server"
)

// netFlags are paddock serve's sandbox-network options (docs/network.md).
type netFlags struct {
	disable            bool
	dnsHosts, allowNet []string
	upstreams          []string
	poolV4, poolV6     string
	proxyPort, dnsPort uint16
}

func (n *netFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&n.disable, "no-network", false, "give sandboxes no network at all (modes allowlist and open are refused)")
	fs.StringArrayVar(&n.dnsHosts, "dns-host", nil, "static name for the egress resolver, NAME=IP (repeatable; the address is still subject to the refused ranges)")
	fs.StringArrayVar(&n.allowNet, "egress-allow-cidr", nil, "an exception to the always-refused private ranges, e.g. 10.20.0.0/16 for internal services (repeatable)")
	fs.StringArrayVar(&n.upstreams, "dns-upstream", nil, "resolver the egress resolver asks for allowed names, IP[:PORT] (repeatable; default: this host's /etc/resolv.conf)")
	fs.StringVar(&n.poolV4, "net-pool-v4", "", "IPv4 addresses of sandboxes, split into one /30 each (default: a free /16 of 10.128.0.0/9, chosen from --data's identity and kept)")
	fs.StringVar(&n.poolV6, "net-pool-v6", "", `IPv6 addresses of sandboxes, one /64 each ("none" for IPv4 only; default: a unique local /48 derived from --data)`)
	fs.Uint16Var(&n.proxyPort, "egress-proxy-port", 0, "host-side port of the egress proxy, reachable from sandboxes only (default: derived from --data, 15100-15899)")
	fs.Uint16Var(&n.dnsPort, "egress-dns-port", 0, "host-side port of the egress resolver, reachable from sandboxes only (default: the proxy's port + 1)")
}

// config is the server's sandbox network (nil: --no-network). Bad flags
// are errors here; a host that cannot run the network is the server's to
// report (a warning, and loopback only).
func (n *netFlags) config() (*server.NetworkConfig, error) {
	if n.disable {
		return nil, nil
	}
	static := map[string][]netip.Addr{}
	for _, kv := range n.dnsHosts {
		name, ip, ok := strings.Cut(kv, "=")
		nm, valid := policy.NormalizeName(strings.TrimSpace(name))
		a, err := netip.ParseAddr(strings.TrimSpace(ip))
		if !ok || !valid || err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("--dns-host %q: want NAME=IP, e.g. git.internal=10.20.0.5", kv)
		}
		static[nm] = append(static[nm], a.Unmap())
	}
	var allow []netip.Prefix
	for _, c := range n.allowNet {
		p, err := policy.ParseCIDR(c)
		if err != nil {
			return nil, fmt.Errorf("--egress-allow-cidr %q: %v", c, err)
		}
		allow = append(allow, p)
	}
	var ups []netip.AddrPort
	for _, u := range n.upstreams {
		ap, err := netip.ParseAddrPort(u)
		if err != nil {
			a, aerr := netip.ParseAddr(strings.Trim(u, "[]"))
			if aerr != nil {
				return nil, fmt.Errorf("--dns-upstream %q: want IP or IP:PORT", u)
			}
			ap = netip.AddrPortFrom(a, 53)
		}
		ups = append(ups, ap)
	}
	return &server.NetworkConfig{PoolV4: n.poolV4, PoolV6: n.poolV6, ProxyPort: n.proxyPort, DNSPort: n.dnsPort,
		Upstreams: ups, Static: static, AllowCIDR: allow}, nil
}
