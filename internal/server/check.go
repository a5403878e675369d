package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/wire"
)

// check refuses a configuration that cannot work, before anything is
// opened, and puts the ports domain in canonical form.
func (c *Config) check() error {
	if c.DataDir == "" {
		return errors.New("server: no data directory")
	}
	if (c.HTTP.TLSCert == "") != (c.HTTP.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if d := c.PortsDomain; d != "" {
		n, ok := policy.NormalizeName(d)
		if !ok || len(n) > 200 {
			return fmt.Errorf("--ports-domain %q: want a DNS name such as ports.example.com", d)
		}
		c.PortsDomain = n
	}
	switch c.DefaultRuntime {
	case "", wire.RuntimeNative, wire.RuntimeGVisor:
	default:
		return fmt.Errorf("--default-runtime %q: want %s or %s", c.DefaultRuntime, wire.RuntimeNative, wire.RuntimeGVisor)
	}
	if c.Runsc != "" {
		// Asked for by name, so a wrong one is the operator's to fix now,
		// not a surprise at the first gVisor sandbox.
		if _, err := gvisor.FindRunsc(c.Runsc); err != nil {
			return fmt.Errorf("--runsc %s: %s", c.Runsc, errs.Public(err))
		}
	}
	if c.DefaultRuntime == wire.RuntimeGVisor {
		// Every sandbox asked for without a runtime would be refused.
		if _, err := gvisor.FindRunsc(c.Runsc); err != nil {
			return fmt.Errorf("--default-runtime gvisor: %s", errs.Public(err))
		}
	}
	if n := c.Network; n != nil {
		if c.ExternalNetwork != nil {
			return errors.New("server: a sandbox network to build and an external one: pass one")
		}
		v4, v6, prefix := n.PoolV4, n.PoolV6, n.IfPrefix
		if v4 == "" {
			v4 = network.DefaultPoolV4
		}
		if v6 == "" {
			v6 = network.DefaultPoolV6
		}
		if prefix == "" {
			prefix = network.DefaultIfPrefix
		}
		if _, err := network.NewPlan(v4, strings.Replace(v6, "none", "", 1), prefix); err != nil {
			return fmt.Errorf("--net-pool: %w", err)
		}
	}
	return nil
}
