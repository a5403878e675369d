package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
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
	fs.StringVar(&n.poolV4, "net-pool-v4", network.DefaultPoolV4, "IPv4 addresses of sandboxes, split into one /30 each")
	fs.StringVar(&n.poolV6, "net-pool-v6", network.DefaultPoolV6, `IPv6 addresses of sandboxes, one /64 each ("none" for IPv4 only)`)
	fs.Uint16Var(&n.proxyPort, "egress-proxy-port", 15001, "host-side port of the egress proxy (reachable from sandboxes only)")
	fs.Uint16Var(&n.dnsPort, "egress-dns-port", 15053, "host-side port of the egress resolver (reachable from sandboxes only)")
}

// netMigrations adds the network's table to the store's migrations.
func netMigrations(ms []store.Migration) []store.Migration {
	return append(append([]store.Migration{}, ms...), network.Migrations...)
}

// sandboxNet is the sandboxes' network, once built.
type sandboxNet struct{ st *network.Stack }

// runtime is what the native backend attaches sandboxes with (nil: no
// network).
func (n *sandboxNet) runtime() runtime.Network {
	if n == nil || n.st == nil {
		return nil
	}
	return n.st
}

// bind reports the proxy's decisions to the manager (its Observer: the
// audit log) and to the metrics.
func (n *sandboxNet) bind(mgr network.EventRecorder, m egress.Recorder) {
	if n == nil || n.st == nil {
		return
	}
	n.st.Egress().SetSink(network.Events(mgr))
	n.st.Egress().SetMetrics(m)
}

// Close stops the proxy and resolver (interfaces stay for the next start).
func (n *sandboxNet) Close() {
	if n != nil && n.st != nil {
		_ = n.st.Close()
	}
}

// openNetwork builds the sandboxes' network from the flags. Bad flags are
// errors; a host that cannot do it (no nftables...) gets a warning and a
// server whose sandboxes have loopback only.
func openNetwork(ctx context.Context, f *netFlags, db *store.DB, log *slog.Logger) (*sandboxNet, error) {
	if f.disable {
		log.Info("sandbox networking disabled (--no-network)")
		return &sandboxNet{}, nil
	}
	static := map[string][]netip.Addr{}
	for _, kv := range f.dnsHosts {
		name, ip, ok := strings.Cut(kv, "=")
		n, valid := policy.NormalizeName(strings.TrimSpace(name))
		a, err := netip.ParseAddr(strings.TrimSpace(ip))
		if !ok || !valid || err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("--dns-host %q: want NAME=IP, e.g. git.internal=10.20.0.5", kv)
		}
		static[n] = append(static[n], a.Unmap())
	}
	var allow []netip.Prefix
	for _, c := range f.allowNet {
		p, err := policy.ParseCIDR(c)
		if err != nil {
			return nil, fmt.Errorf("--egress-allow-cidr %q: %v", c, err)
		}
		allow = append(allow, p)
	}
	var ups []netip.AddrPort
	for _, u := range f.upstreams {
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
	if _, err := network.NewPlan(f.poolV4, strings.Replace(f.poolV6, "none", "", 1), network.DefaultIfPrefix); err != nil {
		return nil, fmt.Errorf("--net-pool: %w", err)
	}
	st, err := network.New(ctx, network.Options{DB: db.SQL(), Log: log, PoolV4: f.poolV4, PoolV6: f.poolV6,
		ProxyPort: f.proxyPort, DNSPort: f.dnsPort, Upstreams: ups, Static: static, AllowCIDR: allow,
		Egress: egress.Options{TenantOf: network.StoreTenants(db)}}) // per-tenant egress limits
	if err != nil {
		log.Warn("sandbox networking unavailable: sandboxes get loopback only", "err", err)
		return &sandboxNet{}, nil
	}
	log.Info("sandbox networking ready", "pool_v4", st.Plan().V4.String(), "proxy_port", f.proxyPort,
		"dns_port", f.dnsPort, "static_names", len(static), "admin_cidrs", len(allow))
	return &sandboxNet{st: st}, nil
}
