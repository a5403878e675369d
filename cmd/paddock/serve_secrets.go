package main

import (
	"crypto/x509"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/server"
)

// secretFlags are serve's options for secret injection and exposed ports
// (docs/network.md "Secrets", docs/ports.md).
type secretFlags struct {
	upstreamCAs []string
	portsDomain string
}

func (s *secretFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&s.upstreamCAs, "egress-upstream-ca", nil, "PEM file of extra roots the egress proxy trusts when it connects to hosts that get secrets, besides the system's (repeatable; for internal CAs and tests)")
	fs.StringVar(&s.portsDomain, "ports-domain", "", "serve sandbox ports at PORT-SANDBOX.DOMAIN too (a wildcard DNS name pointing at this server); its names become allowed hosts")
}

// config is the server's secret store and injection: the extra upstream
// roots read here (the ports domain is checked by the server).
func (s *secretFlags) config() (*server.SecretsConfig, error) {
	c := &server.SecretsConfig{}
	if len(s.upstreamCAs) == 0 {
		return c, nil
	}
	var err error
	if c.UpstreamRoots, err = x509.SystemCertPool(); err != nil {
		c.UpstreamRoots = x509.NewCertPool()
	}
	for _, file := range s.upstreamCAs {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--egress-upstream-ca: %w", err)
		}
		if !c.UpstreamRoots.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("--egress-upstream-ca %s: no PEM certificate in it", file)
		}
	}
	return c, nil
}
