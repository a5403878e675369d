package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/api"
)

// serveFlags are paddock serve's options.
type serveFlags struct {
	listen, data, tlsCert, tlsKey, logLevel string
	cgroupPrefix                            string
	runsc                                   string // serve_gvisor.go
	insecureListen, favorDynMods            bool
	pool, maxSandboxes, uidBase             int
	layersSize, maxUpload                   string
	http                                    httpFlags   // serve_http.go
	obs                                     obsFlags    // serve_audit.go
	net                                     netFlags    // serve_network.go
	sec                                     secretFlags // serve_secrets.go
}

const defaultDataDir = "/var/lib/paddock"

func newServeCmd(e *env) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Paddock server",
		Long: `Run the Paddock server: the REST API, the sandbox manager and the native
runtime, with state in SQLite under --data.

The admin key is $PADDOCK_ADMIN_KEY if set; otherwise one is generated on the
first start, written to DATA/admin.key (0600) and printed once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd.Context(), e, &f) },
	}
	f.register(cmd.Flags())
	return cmd
}

// register adds serve's flags to fs, setting f to their defaults (also
// how paddock mcp --embedded gets serve's defaults: mcp.go).
func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "127.0.0.1:7070", "address to listen on")
	fs.StringVar(&f.data, "data", defaultDataDir, "data directory (state, templates, layers, keys)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (PEM)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.BoolVar(&f.insecureListen, "insecure-listen", false, "allow a non-loopback address without TLS")
	fs.IntVar(&f.pool, "pool", 2, "warm sandboxes kept ready for the default template (0 disables)")
	fs.IntVar(&f.maxSandboxes, "max-sandboxes", 1000, "sandboxes alive at once, warm pool included")
	fs.IntVar(&f.uidBase, "uid-base", 1_000_000, "first host uid given to sandboxes (65536 each)")
	fs.StringVar(&f.layersSize, "layers-size", "", "size of the sparse image holding all writable layers (default: half the free disk, at most 1T)")
	fs.StringVar(&f.maxUpload, "max-upload", "16G", "largest single file write or archive upload (the sandbox's disk quota applies too)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.cgroupPrefix, "cgroup-prefix", "paddock", "name of the cgroup that holds every sandbox's group")
	fs.StringVar(&f.runsc, "runsc", "", "runsc binary for gVisor sandboxes (default: where make deps builds it)")
	fs.BoolVar(&f.favorDynMods, "cgroup-favordynmods", true, "remount cgroup2 with favordynmods: sandbox starts several ms faster, fork/exit slightly slower (host-wide)")
	f.http.register(fs)
	f.obs.register(fs)
	f.net.register(fs)
	f.sec.register(fs)
}

func serve(ctx context.Context, e *env, f *serveFlags) error {
	log, err := newLogger(e, f.logLevel)
	if err != nil {
		return err
	}
	if err := checkListen(f); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("paddock serve needs root (it creates namespaces, cgroups and mounts)")
	}
	st, err := openStack(ctx, log, f, e.stdout) // stack.go: shared with paddock mcp --embedded
	if err != nil {
		return err
	}
	defer st.Close()
	web, err := newWeb(f, log) // serve_http.go: hardening, limits, TLS
	if err != nil {
		return err
	}
	srv := api.New(api.Options{Log: log, Manager: st.mgr, Auth: st.authn, Templates: st.tpls, Version: version,
		Secrets: st.secretStore(), PortsDomain: f.sec.portsDomain, // serve_secrets.go
		Auditor: st.ob.Auditor, Middleware: st.ob.middleware(web.harden...), Mounts: withE2B(mcpMounts(ctx, f, st, log), st, log)}) // serve_mcp.go: /mcp; serve_e2b.go: E2B API
	hs := web.server(srv.Handler())
	ln, err := web.listen()
	if err != nil {
		return err
	}
	gvisorStatus(log, f.runsc)
	log.Info("paddock serving", "listen", ln.Addr().String(), "data", f.data, "cgroups", int(st.cg.Version()),
		"layers", st.layerKind, "version", version)
	fmt.Fprintf(e.stderr, "paddock: listening on %s\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests; sandboxes keep running and are reattached on restart")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return st.mgr.Close(sctx)
}

func newLogger(e *env, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: l})), nil
}

// checkListen refuses to expose the API in clear text beyond this host.
func checkListen(f *serveFlags) error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback && f.tlsCert == "" && !f.insecureListen {
		return fmt.Errorf("refusing to listen on %s without TLS: pass --tls-cert/--tls-key, or --insecure-listen if a proxy in front terminates TLS", f.listen)
	}
	return nil
}

func layersSize(f *serveFlags) (int64, error) {
	if f.layersSize != "" {
		mb, err := parseSizeMB(f.layersSize)
		if err != nil {
			return 0, fmt.Errorf("--layers-size: %w", err)
		}
		return mb << 20, nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(f.data, &st); err != nil {
		return 0, err
	}
	free := int64(st.Bavail) * st.Bsize / 2
	if free > 1<<40 {
		free = 1 << 40
	}
	if free < 1<<30 {
		free = 1 << 30
	}
	return free, nil
}

// lockDataDir keeps two servers off one data directory.
func lockDataDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "paddock.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another paddock server is using %s", dir)
	}
	return func() { f.Close() }, nil
}

// raiseNoFile lifts the soft open-file limit to the hard one: every
// sandbox holds a few descriptors here.
func raiseNoFile() {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) == nil && r.Cur < r.Max {
		r.Cur = r.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
	}
}
