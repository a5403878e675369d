package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/server"
)

// serveFlags are paddock serve's options.
type serveFlags struct {
	listen, data, tlsCert, tlsKey, logLevel string
	cgroupPrefix, runsc, defaultRuntime     string
	insecureListen, favorDynMods            bool
	e2bDefaultInternet                      bool
	pool, maxSandboxes, uidBase             int
	layersSize, maxUpload                   string
	http                                    httpFlags     // serve_http.go
	obs                                     obsFlags      // serve_audit.go
	net                                     netFlags      // serve_network.go
	sec                                     secretFlags   // serve_secrets.go
	tpl                                     templateFlags // template_serve.go
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
	fs.StringVar(&f.cgroupPrefix, "cgroup-prefix", "", "name of the cgroup that holds every sandbox's group (default: paddock-ID, ID derived from --data; \"paddock\" for a data directory whose sandboxes already use it)")
	fs.StringVar(&f.runsc, "runsc", "", "runsc binary for gVisor sandboxes (default: where make deps builds it)")
	fs.StringVar(&f.defaultRuntime, "default-runtime", "native", "runtime of sandboxes whose spec names none: native or gvisor")
	fs.BoolVar(&f.e2bDefaultInternet, "e2b-default-internet", true, "an E2B create that does not say allow_internet_access gets internet, as E2B's API gives (false: no network); tenants' network_modes apply either way")
	fs.BoolVar(&f.favorDynMods, "cgroup-favordynmods", true, "remount cgroup2 with favordynmods: sandbox starts several ms faster, fork/exit slightly slower (host-wide)")
	f.http.register(fs)
	f.obs.register(fs)
	f.net.register(fs)
	f.sec.register(fs)
	f.tpl.register(fs)
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
	cfg, err := f.config(log)
	if err != nil {
		return err
	}
	// A generated admin key is printed once.
	cfg.KeyOut = e.stdout
	srv, err := server.Open(ctx, cfg) // internal/server: shared with bench --embedded and mcp --embedded
	if err != nil {
		return err
	}
	ln, err := srv.Listen() // connection caps, TLS
	if err != nil {
		_ = srv.Close(context.Background())
		return err
	}
	log.Info("paddock serving", "listen", ln.Addr().String(), "data", f.data, "cgroups", int(srv.Cgroups.Version()),
		"layers", srv.LayerKind, "version", version)
	fmt.Fprintf(e.stderr, "paddock: listening on %s\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		_ = srv.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests; sandboxes keep running and are reattached on restart")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return srv.Close(sctx)
}

// config is the server's configuration from serve's flags: every flag
// parsed here, so that a bad one is reported before anything is opened.
func (f *serveFlags) config(log *slog.Logger) (server.Config, error) {
	c := server.Config{DataDir: f.data, Log: log, Version: version, AdminKey: os.Getenv("PADDOCK_ADMIN_KEY"),
		CgroupPrefix: f.cgroupPrefix, FavorDynMods: f.favorDynMods, UIDBase: f.uidBase,
		Runsc: f.runsc, DefaultRuntime: f.defaultRuntime,
		PoolSize: f.pool, MaxSandboxes: f.maxSandboxes, PortsDomain: f.sec.portsDomain,
		Browser: &browser.Options{}, E2B: true, MCP: true, Console: true, InsecureListen: f.insecureListen,
		E2BNoDefaultInternet: !f.e2bDefaultInternet}
	var err error
	if c.Audit, err = f.obs.config(f); err != nil { // serve_audit.go
		return c, err
	}
	if c.HTTP, err = f.http.config(f); err != nil { // serve_http.go
		return c, err
	}
	if c.Network, err = f.net.config(); err != nil { // serve_network.go
		return c, err
	}
	if c.Secrets, err = f.sec.config(); err != nil { // serve_secrets.go
		return c, err
	}
	if f.layersSize != "" {
		mb, err := parseSizeMB(f.layersSize)
		if err != nil {
			return c, fmt.Errorf("--layers-size: %w", err)
		}
		c.LayersSize = mb << 20
	}
	if c.Templates, err = f.tpl.config(); err != nil { // template_serve.go
		return c, err
	}
	maxUp, err := parseSizeMB(f.maxUpload)
	if err != nil || maxUp < 1 {
		return c, fmt.Errorf("--max-upload: invalid size %q", f.maxUpload)
	}
	c.MaxUploadBytes = maxUp << 20
	return c, nil
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
