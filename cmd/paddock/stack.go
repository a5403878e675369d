package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/runtime/native"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/template"
)

// stack is the sandbox service behind every surface: audit log and
// metrics, store, templates, cgroups, writable layers, the native runtime,
// tenant quotas, the manager and the authenticator. paddock serve puts the
// REST API (and /mcp) in front of it; paddock mcp --embedded, the MCP
// server on stdio. One construction, so the two cannot drift apart.
type stack struct {
	ob        *obs
	db        *store.DB
	tpls      *template.Registry
	cg        *cgroup.Host
	layerKind string
	mgr       *sandbox.Manager
	authn     *auth.Service
	sec       *secrets         // serve_secrets.go
	browser   *browser.Service // serve_browser.go
	closers   []func()
}

// openStack builds the stack from serve's flags (the caller has checked
// for root). A generated admin key is announced on keyOut. Close the
// stack when done; the manager is the caller's to Close first.
func openStack(ctx context.Context, log *slog.Logger, f *serveFlags, keyOut io.Writer) (st *stack, err error) {
	st = &stack{}
	defer func() {
		if err != nil {
			st.Close()
			st = nil
		}
	}()
	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return st, fmt.Errorf("data directory: %w", err)
	}
	unlock, err := lockDataDir(f.data)
	if err != nil {
		return st, err
	}
	st.onClose(unlock)
	raiseNoFile()
	if st.ob, err = startObs(f, log); err != nil { // serve_audit.go: audit log, metrics
		return st, err
	}
	st.onClose(func() { _ = st.ob.Close() })

	if st.db, err = store.Open(f.data, secretMigrations(netMigrations(auth.Migrations))...); err != nil { // serve_network.go, serve_secrets.go
		return st, err
	}
	st.onClose(func() { _ = st.db.Close() })
	if st.tpls, err = template.Open(f.data, log); err != nil {
		return st, fmt.Errorf("templates: %w", err)
	}
	if st.cg, err = cgroup.Detect("/sys/fs/cgroup", f.cgroupPrefix); err != nil {
		return st, fmt.Errorf("cgroups: %w", err)
	}
	if f.favorDynMods {
		if changed, err := cgroup.FavorDynMods(); err != nil {
			log.Warn("cannot set favordynmods; sandbox starts will be slower", "err", err)
		} else if changed {
			log.Info("remounted cgroup2 with favordynmods (faster cgroup migrations, host-wide)")
		}
	}
	imgSize, err := layersSize(f)
	if err != nil {
		return st, err
	}
	layers, why, err := disk.Open(disk.Options{Dir: filepath.Join(f.data, "layers"), ImageSize: imgSize})
	if err != nil {
		return st, fmt.Errorf("writable layers: %w", err)
	}
	st.layerKind = "tmpfs"
	if layers != nil {
		st.onClose(func() { _ = layers.Close() })
		st.layerKind = layers.Kind()
	} else {
		log.Warn("writable layers are tmpfs inside each sandbox (RAM, counted against its memory)", "reason", why)
	}
	netw, err := openNetwork(ctx, &f.net, st.db, log) // serve_network.go: veths, nftables, egress proxy and resolver
	if err != nil {
		return st, err
	}
	st.onClose(netw.Close)
	rt, err := native.New(native.Options{DataDir: f.data, Log: log, Cgroups: st.cg, Disk: layers, UIDBase: f.uidBase,
		Network: netw.runtime()})
	if err != nil {
		return st, err
	}
	st.onClose(func() { _ = rt.Close() })

	limits := sandbox.DefaultLimits(goruntime.NumCPU())
	quotas := newQuotas(st.db, limits) // serve_auth.go
	// serve_secrets.go: the secret store, egress CAs, secret injection
	sec, err := openSecrets(st, f, netw, quotas, log)
	if err != nil {
		return st, err
	}
	maxUp, err := parseSizeMB(f.maxUpload)
	if err != nil || maxUp < 1 {
		return st, fmt.Errorf("--max-upload: invalid size %q", f.maxUpload)
	}
	st.mgr = sandbox.New(sandbox.Config{
		Limits:       limits,
		MaxSandboxes: f.maxSandboxes,
		PoolSize:     f.pool,
		Files:        sandbox.FileLimits{MaxUploadBytes: maxUp << 20},
	}, sandbox.Deps{Log: log, Store: st.db, Backend: rt, Templates: st.tpls, Admission: sec.admission(quotas), Observer: st.ob.Observer})
	netw.bind(st.mgr, st.ob.metrics)
	if err := sec.bind(st, st.mgr); err != nil {
		return st, err
	}
	openBrowser(st, log) // serve_browser.go: the sandboxes' browsers
	if err := st.mgr.Start(ctx); err != nil {
		return st, err
	}
	key, err := auth.Bootstrap(f.data, os.Getenv("PADDOCK_ADMIN_KEY"), keyOut)
	if err != nil {
		return st, err
	}
	if st.authn, err = newAuthn(f.data, st.db, key, quotas, log); err != nil { // serve_auth.go
		return st, err
	}
	st.onClose(func() { _ = st.authn.Close() })
	return st, nil
}

func (st *stack) onClose(f func()) { st.closers = append(st.closers, f) }

// Close releases the stack, last opened first.
func (st *stack) Close() {
	for i := len(st.closers) - 1; i >= 0; i-- {
		st.closers[i]()
	}
	st.closers = nil
}
