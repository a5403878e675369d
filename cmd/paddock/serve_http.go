package main

import (
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/server"
)

// httpFlags are serve's HTTP hardening options.
type httpFlags struct {
	allowedHosts, allowedOrigins []string
	maxBody                      string
	bodyIdle, readHeader, idle   time.Duration
	maxConns, maxConnsPerIP      int
	rateLimit                    float64
	rateBurst                    int
}

func (h *httpFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&h.allowedHosts, "allowed-host", nil, "a name clients use to reach this server (Host header; repeatable; *.domain or * for any). localhost, loopback, the listen address, this machine's hostname and the TLS certificate's names are always allowed")
	fs.StringArrayVar(&h.allowedOrigins, "allowed-origin", nil, "a browser origin (scheme://host[:port]) allowed to call the API cross-site, with CORS (repeatable; none by default)")
	fs.StringVar(&h.maxBody, "max-body", "1G", "largest request body")
	fs.DurationVar(&h.bodyIdle, "body-idle-timeout", api.DefaultBodyIdleTimeout, "cut off a request body that sends nothing for this long")
	fs.DurationVar(&h.readHeader, "read-header-timeout", api.DefaultReadHeaderTimeout, "time a client has to send a request's headers")
	fs.DurationVar(&h.idle, "idle-timeout", api.DefaultIdleTimeout, "close keep-alive connections idle for this long")
	fs.IntVar(&h.maxConns, "max-connections", api.DefaultMaxConns, "concurrent connections (-1: no limit)")
	fs.IntVar(&h.maxConnsPerIP, "max-connections-per-ip", api.DefaultMaxConnsPerIP, "concurrent connections from one client address (-1: no limit; raise it behind a proxy)")
	fs.Float64Var(&h.rateLimit, "rate-limit", defaultRateLimit, "requests a second each API key may make on average, on every surface (each is audited; over it: 429 with Retry-After; 0: no limit)")
	fs.IntVar(&h.rateBurst, "rate-burst", defaultRateBurst, "requests an API key may make at once before --rate-limit applies")
}

// The per-key rate's defaults: far above what one agent's SDK makes, far
// below what grows the audit log by megabytes a second (a record pair is
// ~0.6 KB: 200/s is at most ~120 KB/s per key).
const (
	defaultRateLimit = 200
	defaultRateBurst = 400
)

// config is the server's HTTP configuration: the flags checked, TLS
// loaded by the server (internal/server adds the certificate's names,
// this machine's hostname and the ports domain to the allowed hosts).
func (h *httpFlags) config(f *serveFlags) (server.HTTPConfig, error) {
	maxBody, err := parseSizeMB(h.maxBody)
	if err != nil || maxBody < 1 {
		return server.HTTPConfig{}, fmt.Errorf("--max-body: %q: want a size of at least 1M", h.maxBody)
	}
	for _, o := range h.allowedOrigins {
		if _, err := parseOrigin(o); err != nil {
			return server.HTTPConfig{}, fmt.Errorf("--allowed-origin: %w", err)
		}
	}
	if h.rateLimit < 0 || h.rateBurst < 0 {
		return server.HTTPConfig{}, fmt.Errorf("--rate-limit and --rate-burst must not be negative")
	}
	idle := h.bodyIdle
	if idle == 0 {
		idle = -1 // off
	}
	return server.HTTPConfig{Listen: f.listen, TLSCert: f.tlsCert, TLSKey: f.tlsKey,
		AllowedHosts: append([]string{}, h.allowedHosts...), AllowedOrigins: append([]string{}, h.allowedOrigins...),
		MaxBodyBytes: maxBody << 20, BodyIdleTimeout: idle, ReadHeaderTimeout: h.readHeader, IdleTimeout: h.idle,
		MaxConns: h.maxConns, MaxConnsPerIP: h.maxConnsPerIP, RateLimit: h.rateLimit, RateBurst: h.rateBurst}, nil
}

func parseOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("%q: want scheme://host[:port]", o)
	}
	return o, nil
}
