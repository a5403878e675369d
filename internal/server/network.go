package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/egress"

	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/runtime"
)

// openNetwork builds the sandboxes' network (veths, nftables, egress proxy
// and resolver). A bad address plan is an error; a host that cannot run
// it (no nftables...) gets a warning and sandboxes with loopback only.
// Both nil: no network of the server's own.
func (s *Server) openNetwork(ctx context.Context) error {
	c := s.cfg.Network
	if c == nil {
		if s.cfg.ExternalNetwork == nil {
			s.log.Info("sandbox networking disabled (--no-network)")
		}
		return nil
	}
	st, err := network.New(ctx, network.Options{DB: s.Store.SQL(), Log: s.log, HostNS: c.HostNS, Instance: s.Instance(), // instance.go
		PoolV4: c.PoolV4, PoolV6: c.PoolV6,
		IfPrefix: c.IfPrefix, Table: c.Table, ProxyPort: c.ProxyPort, DNSPort: c.DNSPort, Upstreams: c.Upstreams,
		Static: c.Static, AllowCIDR: c.AllowCIDR,
		Egress: egress.Options{TenantOf: network.StoreTenants(s.Store)}}) // per-tenant egress limits
	if err != nil {
		s.log.Warn("sandbox networking unavailable: sandboxes get loopback only", "err", err)
		return nil
	}
	s.Network = st
	s.onClose("sandbox network", st.Close)
	proxy, dns := st.Ports()
	s.log.Info("sandbox networking ready", "instance", s.Instance(), "pool_v4", st.Plan().V4.String(), "table", st.Table(),
		"interfaces", st.Plan().Prefix+"*", "proxy_port", proxy, "dns_port", dns, "static_names", len(c.Static), "admin_cidrs", len(c.AllowCIDR))
	return nil
}

// runtimeNetwork is what the runtime attaches sandboxes with (nil: none).
func (s *Server) runtimeNetwork() runtime.Network {
	if s.Network != nil {
		return s.Network
	}
	return s.cfg.ExternalNetwork
}

// bindNetwork reports the proxy's decisions to the manager (whose
// Observer is the audit log) and to the metrics.
func (s *Server) bindNetwork() {
	if s.Network == nil {
		return
	}
	s.Network.Egress().SetSink(network.Events(s.Manager))
	if s.obs != nil {
		s.Network.Egress().SetMetrics(s.obs.metrics)
	}
}
