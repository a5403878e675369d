package server

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/console"
	"github.com/paddockhq/paddock/internal/e2b"
	"github.com/paddockhq/paddock/internal/mcp"
)

// openBrowser runs the sandboxes' browsers (docs/browser.md): the service
// behind /v1/sandboxes/{id}/browser and the browser MCP tools. It reaches
// the browsers only through the manager's primitives; the manager is told
// of it only to start the browsers of sandboxes created with one. The
// browsers are Debian's chromium inside each sandbox; closing the service
// drops the server's connections to them.
func (s *Server) openBrowser() {
	if s.cfg.Browser == nil {
		return
	}
	o := *s.cfg.Browser
	if o.Log == nil {
		o.Log = s.log
	}
	s.Browser = browser.New(s.Manager, o)
	s.Manager.SetBrowser(s.Browser)
	s.onClose("browser service", func() error { s.Browser.Close(); return nil })
}

// NewMCP is an MCP server over the manager (its Caller: each call acts as
// the request's caller, with the caller's rights), with the browser tools
// when there is a browser service: the one behind /mcp, or (paddock mcp
// --embedded) one served on stdio with o. links makes port URLs (nil:
// port_url says this server serves none).
func (s *Server) NewMCP(links mcp.PortLinker, o mcp.Options) (*mcp.Server, error) {
	if o.Log == nil {
		o.Log = s.log
	}
	if o.Version == "" {
		o.Version = s.cfg.Version
	}
	if s.Browser != nil {
		o.Browser = s.Browser.Caller()
	}
	if s.TemplateService != nil && o.Templates == nil {
		o.Templates = s.TemplateService
	}
	return mcp.New(mcp.Local(s.Manager.Caller(), links), o)
}

// openMCP is the MCP endpoint: /mcp (streamable HTTP) over the manager,
// authenticated by the same keys as REST and audited like it. Shutdown
// closes every MCP session and deletes its sandbox.
func (s *Server) openMCP(ctx context.Context, mounts map[string]http.Handler) {
	if !s.cfg.MCP {
		return
	}
	// MCP sessions live in memory: after a restart every session sandbox
	// from before is an orphan.
	if n := s.Manager.DeleteLabeled(ctx, mcp.SessionLabel); n > 0 {
		s.log.Info("deleted MCP session sandboxes left by the previous server", "count", n)
	}
	o := mcp.Options{AllowedOrigins: s.cfg.HTTP.AllowedOrigins, RateLimit: s.rateLimit(),
		HostChecked: true} // the hardening middleware checks Host
	if rec := s.obs.auditor(); rec != nil {
		o.Auditor = rec // every request recorded, as for REST
	}
	// Port links are the REST API's own: the same ports domain, tokens.
	srv, err := s.NewMCP(api.NewPortLinks(s.Manager, s.Auth, s.cfg.PortsDomain), o)
	if err != nil {
		// A tool that cannot be registered is a bug; the rest of the
		// server still works, and /mcp says why it does not.
		s.log.Error("MCP endpoint disabled", "err", err)
		mounts["/mcp"] = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"the MCP endpoint failed to start; see the server log"}}` + "\n"))
		})
		return
	}
	s.MCP = srv
	var once sync.Once
	s.endSessions = func() {
		once.Do(func() {
			cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := srv.Close(cctx); err != nil {
				s.log.Warn("MCP sessions did not all close; their sandboxes expire on their own", "err", err)
			}
		})
	}
	s.onClose("MCP sessions", func() error { s.endSessions(); return nil })
	mounts["/mcp"] = srv.Handler(s.Auth)
}

// e2bDefaultInternet is the internet access of an E2B create that does not
// say: E2B's default (internet), unless the operator turned it off or the
// server has no sandbox network to give.
func (s *Server) e2bDefaultInternet() bool {
	return !s.cfg.E2BNoDefaultInternet && s.cfg.Network != nil
}

// openE2B adds the E2B-compatible API (internal/e2b) to the mounts: the
// control plane (/sandboxes, /v2/sandboxes...) and envd (/health, /files,
// /process.Process/*, /filesystem.Filesystem/*), authenticated by the same
// keys (X-API-KEY: e2b_...) and audited like REST. A mount already taken
// is left alone.
func (s *Server) openE2B(mounts map[string]http.Handler) {
	if !s.cfg.E2B {
		return
	}
	o := e2b.Options{Log: s.log, Manager: s.Manager, Auth: s.Auth, Tokens: s.Auth, Templates: s.Templates,
		RateLimit: s.rateLimit(), DefaultInternet: s.e2bDefaultInternet(), PortsDomain: s.cfg.PortsDomain,
		MaxTemplateContext: s.cfg.MaxUploadBytes,
		Secrets:            s.Secrets} // nil: E2B's /secrets and rules naming secrets answer unsupported
	if s.TemplateService != nil && s.cfg.DataDir != "" {
		// E2B's template build API (Template.build): uploads staged in
		// DATA/e2b-template-files.
		o.Builder, o.TemplateDir = s.TemplateService, filepath.Join(s.cfg.DataDir, "e2b-template-files")
	}
	if rec := s.obs.auditor(); rec != nil {
		o.Auditor = rec // every request recorded, as for REST
	}
	srv, err := e2b.New(o)
	if err != nil {
		// A wiring bug; the rest of the server still works.
		s.log.Error("E2B-compatible API disabled", "err", err)
		return
	}
	s.E2B = srv
	s.onClose("E2B API", func() error { srv.Close(); return nil })
	addMounts(mounts, srv.Mounts(), s.log)
}

// openConsole adds the web console (internal/console) at /ui: it signs
// people in with the same keys, acts through the REST API as their key,
// and records sign-ins like API requests.
func (s *Server) openConsole(mounts map[string]http.Handler) {
	if !s.cfg.Console {
		return
	}
	o := console.Options{Auth: s.Auth, Sandboxes: s.Manager, AllowInsecure: s.cfg.InsecureListen, Log: s.log}
	if rec := s.obs.auditor(); rec != nil {
		o.Auditor = rec
	}
	if s.obs != nil && s.obs.audit != nil {
		o.Verifier = console.AuditVerifier(s.obs.audit.Dir(), s.obs.audit.PublicKey())
	}
	c := console.New(o)
	s.onClose("console", func() error { c.Close(); return nil })
	mounts[console.Prefix] = c.Handler()
	mounts[console.Prefix+"/"] = c.Handler()
}

// addMounts adds more to mounts, keeping whatever holds a pattern already.
func addMounts(mounts, more map[string]http.Handler, log *slog.Logger) {
	for pattern, h := range more {
		if _, taken := mounts[pattern]; taken {
			log.Error("E2B-compatible API: a mount is taken; not serving it", "pattern", pattern)
			continue
		}
		mounts[pattern] = h
	}
}

// openAPI is the REST API with the other surfaces mounted on its port,
// behind the middleware: metrics, hardening, audit error codes.
func (s *Server) openAPI(mounts map[string]http.Handler, harden []func(http.Handler) http.Handler) {
	o := api.Options{Log: s.log, Manager: s.Manager, Auth: s.Auth, Browser: s.Browser, Version: s.cfg.Version,
		PortsDomain: s.cfg.PortsDomain, Middleware: s.obs.middleware(harden...), Mounts: mounts, RateLimit: s.rateLimit()}
	if s.Secrets != nil {
		o.Secrets = s.Secrets
	}
	if s.TemplateService != nil {
		o.Templates = s.TemplateService
	}
	if rec := s.obs.auditor(); rec != nil {
		o.Auditor = rec
	}
	if e := s.E2B; e != nil {
		// E2B's sandbox URLs on the port hosts (internal/e2b/ports.go).
		o.HostPorts = map[int]api.HostPortHandler{}
		for port, h := range e.HostPorts() {
			o.HostPorts[port] = h
		}
		o.PortPolicy = func(id string, port int) api.PortPolicy {
			tenant, public, host := e.PortPolicy(id, port)
			return api.PortPolicy{Tenant: tenant, Public: public, Host: host}
		}
		o.PortTokenHeaders = []string{e2b.TrafficTokenHeader}
	}
	s.API = api.New(o)
}
