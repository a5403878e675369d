package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/api"
)

// httpFlags are serve's HTTP hardening options.
type httpFlags struct {
	allowedHosts, allowedOrigins []string
	maxBody                      string
	bodyIdle, readHeader, idle   time.Duration
	maxConns, maxConnsPerIP      int
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
}

// web is the HTTP side of serve: hardening middleware, server, listener.
type web struct {
	f      *serveFlags
	log    *slog.Logger
	limits api.HTTPLimits
	tls    *tls.Config
	harden []func(http.Handler) http.Handler
}

func newWeb(f *serveFlags, log *slog.Logger) (*web, error) {
	h := &f.http
	w := &web{f: f, log: log, limits: api.HTTPLimits{ReadHeaderTimeout: h.readHeader, IdleTimeout: h.idle,
		MaxConns: h.maxConns, MaxConnsPerIP: h.maxConnsPerIP}}
	hosts := append([]string{}, h.allowedHosts...)
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts = append(hosts, name)
	}
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("TLS: %w", err)
		}
		if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
			hosts = append(hosts, leaf.DNSNames...)
			for _, ip := range leaf.IPAddresses {
				hosts = append(hosts, ip.String())
			}
		}
		w.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	maxBody, err := parseSizeMB(h.maxBody)
	if err != nil || maxBody < 1 {
		return nil, fmt.Errorf("--max-body: %q: want a size of at least 1M", h.maxBody)
	}
	for _, o := range h.allowedOrigins {
		if _, err := parseOrigin(o); err != nil {
			return nil, fmt.Errorf("--allowed-origin: %w", err)
		}
	}
	idle := h.bodyIdle
	if idle == 0 {
		idle = -1 // off
	}
	// The same --allowed-origin values admit cross-site pages to the
	// interactive WebSockets, which check Origin on their own.
	wsOrigins, err := api.WebSocketOrigins(h.allowedOrigins)
	if err != nil {
		return nil, err
	}
	w.harden = []func(http.Handler) http.Handler{api.Harden(api.HardenOptions{AllowedHosts: hosts, ListenAddr: f.listen,
		AllowedOrigins: h.allowedOrigins, MaxBodyBytes: maxBody << 20, BodyIdleTimeout: idle, Log: log}), wsOrigins}
	return w, nil
}

func parseOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("%q: want scheme://host[:port]", o)
	}
	return o, nil
}

// server is the http.Server for h.
func (w *web) server(h http.Handler) *http.Server {
	return api.NewHTTPServer(h, w.limits, w.log)
}

// listen opens the listener: TCP, connection caps, then TLS if configured.
func (w *web) listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", w.f.listen)
	if err != nil {
		return nil, err
	}
	ln = api.LimitListener(ln, w.limits, w.tls == nil, w.log)
	if w.tls != nil {
		ln = tls.NewListener(ln, w.tls)
	}
	return ln, nil
}
