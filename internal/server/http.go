package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/gate"
)

// web is the HTTP side: hardening middleware, limits, TLS, and the HTTP
// servers started by Serve.
type web struct {
	limits api.HTTPLimits
	tls    *tls.Config
	harden []func(http.Handler) http.Handler
	limit  *audit.KeyLimiter // each key's rate on every surface; nil: none

	mu      sync.Mutex
	servers []*http.Server
	closed  bool
}

// openWeb builds the hardening from the config. The names clients may use
// (the Host check against DNS rebinding) are the configured ones, this
// machine's hostname, the TLS certificate's names and the ports domain's.
func (s *Server) openWeb() error {
	h := &s.cfg.HTTP
	w := &web{limits: api.HTTPLimits{ReadHeaderTimeout: h.ReadHeaderTimeout, IdleTimeout: h.IdleTimeout,
		MaxConns: h.MaxConns, MaxConnsPerIP: h.MaxConnsPerIP}}
	if h.RateLimit > 0 {
		burst := h.RateBurst
		if burst <= 0 {
			burst = int(2 * h.RateLimit)
		}
		w.limit = audit.NewKeyLimiter(h.RateLimit, burst, 0)
	}
	hosts := append([]string{}, h.AllowedHosts...)
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts = append(hosts, name)
	}
	if h.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey)
		if err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
			hosts = append(hosts, leaf.DNSNames...)
			for _, ip := range leaf.IPAddresses {
				hosts = append(hosts, ip.String())
			}
		}
		w.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if d := s.cfg.PortsDomain; d != "" { // normalised by check
		hosts = append(hosts, "*."+d)
	}
	// The same allowed origins admit cross-site pages to the interactive
	// WebSockets, which check Origin on their own.
	wsOrigins, err := api.WebSocketOrigins(h.AllowedOrigins)
	if err != nil {
		return err
	}
	w.harden = []func(http.Handler) http.Handler{api.Harden(api.HardenOptions{AllowedHosts: hosts, ListenAddr: h.Listen,
		AllowedOrigins: h.AllowedOrigins, MaxBodyBytes: h.MaxBodyBytes, BodyIdleTimeout: h.BodyIdleTimeout, Log: s.log}), wsOrigins}
	s.web = w
	return nil
}

// Listen opens the configured listen address: TCP, the connection caps,
// then TLS if configured.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.HTTP.Listen)
	if err != nil {
		return nil, err
	}
	ln = api.LimitListener(ln, s.web.limits, s.web.tls == nil, s.log)
	if s.web.tls != nil {
		ln = tls.NewListener(ln, s.web.tls)
	}
	return ln, nil
}

// Serve serves the whole house on ln (from Listen) until Shutdown, which
// makes it return http.ErrServerClosed.
func (s *Server) Serve(ln net.Listener) error {
	hs := api.NewHTTPServer(s.Handler(), s.web.limits, s.log)
	s.web.mu.Lock()
	if s.web.closed {
		s.web.mu.Unlock()
		ln.Close()
		return http.ErrServerClosed
	}
	s.web.servers = append(s.web.servers, hs)
	s.web.mu.Unlock()
	return hs.Serve(ln)
}

// Handler is the house's HTTP handler: the REST API with the E2B API and
// /mcp mounted, behind the metrics, hardening and audit middleware.
func (s *Server) Handler() http.Handler { return s.handler }

// shutdownHTTP stops the servers started by Serve: no new connections,
// requests in flight finish until ctx ends.
func (w *web) shutdown(ctx context.Context) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	w.closed = true
	servers := w.servers
	w.servers = nil
	w.mu.Unlock()
	var first error
	for _, hs := range servers {
		if err := hs.Shutdown(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// rateLimit is the one per-key limiter every surface's gate shares (nil:
// none, or no audit log: the limit guards the log's growth).
func (s *Server) rateLimit() gate.Limiter {
	if s.web == nil || s.web.limit == nil || s.obs.auditor() == nil {
		return nil
	}
	return s.web.limit
}
