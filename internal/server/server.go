package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/e2b"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/internal/secret/inject"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/internal/template/tplsvc"
	"github.com/paddockhq/paddock/internal/tenant"
)

// ActionPermissions is the audit event of the data directory's modes
// fixed at start (datadir_linux.go).
const ActionPermissions = "server.permissions"

// Server is the house, open. Its fields are the parts, for the callers
// that drive them (tests, the bench); nil when left out. Do not replace
// them.
type Server struct {
	Store     *store.DB
	Templates *template.Registry
	Layers    *layers.Store // image templates' layers (templates.go)
	// TemplateService acts on templates for callers (templates.go).
	TemplateService *tplsvc.Service
	Cgroups         *cgroup.Host
	Disk            disk.Store // nil: tmpfs layers inside each sandbox
	LayerKind       string     // "xfs" or "tmpfs"
	Network         *network.Stack
	Backend         *Backend
	// GVisor is the gVisor runtime: *gvisor.Backend, or gvisor.Unavailable
	// saying why not (runtime_linux.go); nil off Linux.
	GVisor   runtime.Backend
	Quotas   *tenant.Admission // the manager's Admission (tenant quotas)
	Secrets  *secret.Store
	Manager  *sandbox.Manager
	Auth     *auth.Service // keys, tenants, sandbox tokens
	AdminKey string
	Browser  *browser.Service
	MCP      *mcp.Server // the one behind /mcp
	E2B      *e2b.Server
	API      *api.Server

	cfg         Config
	log         *slog.Logger
	obs         *obs // obs.go
	cas         *inject.CAStore
	web         *web // http.go
	handler     http.Handler
	endSessions func()
	closers     []closer
	shutdown    sync.Once
	closeOnce   sync.Once
	closeErr    error
}

type closer struct {
	what string
	f    func(context.Context) error
}

// Migrations are every package's tables, in the one database: the same
// set whatever parts a server runs, so that a data directory does not
// depend on flags.
func Migrations() []store.Migration {
	var ms []store.Migration
	for _, m := range [][]store.Migration{auth.Migrations, network.Migrations, secret.Migrations, inject.Migrations} {
		ms = append(ms, m...)
	}
	return ms
}

// Open builds the house from c, in order: data directory and its lock,
// audit log and metrics, store, templates, cgroups, writable layers,
// network, runtime, quotas, secrets, manager (started: it reattaches the
// sandboxes of an earlier server), browser service, authenticator, MCP,
// E2B, REST API. The caller checks for root. On error whatever was opened
// is closed again.
func Open(ctx context.Context, c Config) (_ *Server, err error) {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.KeyOut == nil {
		c.KeyOut = io.Discard // a generated key is in DATA/admin.key
	}
	if err := supported(); err != nil { // runtime_linux.go
		return nil, err
	}
	if err := c.check(); err != nil { // check.go
		return nil, err
	}
	s := &Server{cfg: c, log: c.Log}
	defer func() {
		if err != nil {
			_ = s.Close(context.Background())
		}
	}()
	fixed, err := secureDataDir(c.DataDir) // datadir_linux.go: 0700 directories, 0600 keys and databases
	if err != nil {
		return nil, err
	}
	for _, f := range fixed {
		s.log.Warn("data directory: a mode was too open; fixed", "path", f.Path, "from", f.From, "to", f.To)
	}
	unlock, err := lockDataDir(c.DataDir)
	if err != nil {
		return nil, err
	}
	s.onClose("data directory lock", unlock)
	raiseNoFile()
	if s.obs, err = openObs(&s.cfg); err != nil { // obs.go: audit log, metrics
		return nil, err
	}
	if s.obs != nil {
		s.onClose("audit log", s.obs.Close)
		if len(fixed) > 0 {
			if _, err := s.obs.audit.Append(ctx, audit.Entry{Action: ActionPermissions, Phase: audit.PhaseEvent,
				Args: map[string]any{"fixed": fixed}}); err != nil {
				return nil, fmt.Errorf("audit log: %w", err)
			}
		}
	}
	if s.Store, err = store.Open(c.DataDir, Migrations()...); err != nil {
		return nil, err
	}
	s.onClose("store", s.Store.Close)
	if s.Templates, err = template.Open(c.DataDir, s.log); err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	if err := s.openLayers(); err != nil { // templates.go: the layer store of image templates
		return nil, err
	}
	if err := s.openRuntime(ctx); err != nil { // runtime_linux.go: cgroups, layers, network, native runtime
		return nil, err
	}
	limits := sandbox.DefaultLimits(goruntime.NumCPU())
	if c.Limits != nil {
		limits = *c.Limits
	}
	if err := s.defaultRuntime(&limits); err != nil { // runtimes.go
		return nil, err
	}
	layerRAM := s.layerRAM(&limits, c.Limits != nil) // layers.go: tmpfs layers are RAM
	s.Quotas = tenant.NewAdmission(tenant.NewStore(s.Store.SQL()), limits)
	if layerRAM > 0 {
		s.Quotas.CountDiskAsMemory()
	}
	if err := s.openSecrets(); err != nil { // secrets.go: the secret store, egress CAs
		return nil, err
	}
	if err := s.openWeb(); err != nil { // http.go: hardening, TLS, the ports domain
		return nil, err
	}
	snaps, err := snapshot.Open(filepath.Join(c.DataDir, "snapshots")) // docs/state.md
	if err != nil {
		return nil, err
	}
	vols := s.openVolumes()      // volumes.go: nil where volumes cannot be kept
	observer := s.obs.observer() // obs.go: the audit log, then metrics
	if c.WrapObserver != nil {
		observer = c.WrapObserver(observer)
	}
	if err := s.openTemplateService(observer); err != nil { // templates.go
		return nil, err
	}
	s.Manager = sandbox.New(sandbox.Config{
		Limits:       limits,
		MaxSandboxes: c.MaxSandboxes,
		PoolSize:     s.poolSize(limits), // runtimes.go
		Files:        sandbox.FileLimits{MaxUploadBytes: c.MaxUploadBytes},
		LayerRAMMB:   layerRAM,
	}, sandbox.Deps{Log: s.log, Store: s.Store, Backend: s.Backend, Runtimes: s.runtimes(), Templates: s.TemplateService.ForManager(),
		Admission: s.admission(), Observer: observer, Snapshots: snaps, SnapshotQuota: s.Quotas.SnapshotQuotaBytes,
		Volumes: vols, VolumeQuota: s.Quotas.VolumeQuotaBytes, PausedQuota: s.Quotas.PausedQuota, ForkQuota: s.Quotas.ForkQuota})
	// Closed before the runtime below it, after the surfaces above it;
	// its error is Close's.
	s.closers = append(s.closers, closer{"manager", func(ctx context.Context) error {
		s.closeErr = s.Manager.Close(ctx)
		return nil
	}})
	s.bindNetwork() // network.go
	if err := s.bindSecrets(); err != nil {
		return nil, err
	}
	s.openBrowser() // surfaces.go
	if err := s.Manager.Start(ctx); err != nil {
		return nil, err
	}
	if s.AdminKey, err = auth.Bootstrap(c.DataDir, c.AdminKey, c.KeyOut); err != nil {
		return nil, err
	}
	secretKey, err := auth.LoadSecret(c.DataDir) // DATA/token.key signs sandbox tokens
	if err != nil {
		return nil, err
	}
	if s.Auth, err = auth.NewService(auth.Options{DB: s.Store.SQL(), Tenants: s.Quotas.Tenants(), AdminKey: s.AdminKey,
		Secret: secretKey, Log: s.log}); err != nil {
		return nil, err
	}
	s.onClose("authenticator", s.Auth.Close)
	mounts := map[string]http.Handler{}
	s.openMCP(ctx, mounts) // surfaces.go
	s.openE2B(mounts)
	s.openConsole(mounts)
	s.openAPI(mounts, s.web.harden)
	s.handler = s.API.Handler()
	return s, nil
}

// onClose registers f to run at Close, before everything opened earlier.
func (s *Server) onClose(what string, f func() error) {
	s.closers = append(s.closers, closer{what, func(context.Context) error { return f() }})
}

// Metrics are the server's metrics (nil without an audit log).
func (s *Server) Metrics() *metrics.Metrics {
	if s.obs == nil {
		return nil
	}
	return s.obs.metrics
}

// AuditLog is the server's audit log (nil with Audit.Disable).
func (s *Server) AuditLog() *audit.Log {
	if s.obs == nil {
		return nil
	}
	return s.obs.audit
}

// Recorder is the audit log's recorder: the surfaces' Auditor (nil with
// Audit.Disable).
func (s *Server) Recorder() *audit.Recorder { return s.obs.auditor() }

// Shutdown stops serving: MCP sessions end at once (their event streams
// would hold up a graceful shutdown) and their sandboxes go, while the
// HTTP servers started by Serve stop accepting and finish their requests
// until ctx ends. Sandboxes keep running. Close follows.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.shutdown.Do(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if s.endSessions != nil {
				s.endSessions()
			}
		}()
		err = s.web.shutdown(ctx)
		<-done
	})
	return err
}

// Close shuts down (see Shutdown) and releases everything, last opened
// first: the surfaces, the browser service, the manager (the warm pool
// goes; sandboxes keep running and are reattached by the next server),
// the runtime, network, layers, store, audit log and the data directory's
// lock. Errors past the manager's are logged; the manager's is returned.
// Idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if err := s.Shutdown(ctx); err != nil {
			s.log.Warn("shutdown", "err", err)
		}
		for i := len(s.closers) - 1; i >= 0; i-- {
			c := s.closers[i]
			if err := c.f(ctx); err != nil {
				s.log.Warn("close "+c.what, "err", err)
			}
		}
		s.closers = nil
	})
	return s.closeErr
}

// openLockFile opens DATA/paddock.lock, which lockDataDir locks.
func openLockFile(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, "paddock.lock"), os.O_RDWR|os.O_CREATE, 0o600)
}
