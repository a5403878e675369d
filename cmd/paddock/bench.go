package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/bench"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/server"
)

// benchFlags are paddock bench's options.
type benchFlags struct {
	embedded, asJSON, list     bool
	scenarios                  []string
	runs, concurrency, density int
	runsc, egressURL, logLevel string
	uidBase                    int
	dnsHosts, allowCIDRs       []string // embedded: serve's --dns-host, --egress-allow-cidr
}

func newBenchCmd(e *env) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure Paddock, side by side with fork/exec, bubblewrap, runc and gVisor",
		Long: `Measure a Paddock server end to end through its API: sandbox create → exec →
delete (cold, from the warm pool, with network), exec round trips (serial and
concurrent), concurrent creates, density (N idle sandboxes: memory, server
RSS, responsiveness), files, MCP; and in the same run a plain fork/exec of
/bin/true (the floor) and, when installed, bubblewrap, runc and gVisor's
runsc, each as a ratio to Paddock's one-shot.

Against the server at $PADDOCK_URL with $PADDOCK_API_KEY, or with --embedded
against stacks built in this process exactly as paddock serve builds its own
(Linux, root): one without warm pool for the cold scenarios, one with a pool
of 2 for the warm ones. Every sandbox the bench makes is deleted, also on
Ctrl-C. Scenarios the server cannot run are reported as unavailable, peers
that are not installed as missing — never skipped silently.

See docs/benchmarks.md for the method.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd.Context(), e, &f) },
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.embedded, "embedded", false, "measure stacks built in this process (Linux, root) instead of a server")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.BoolVar(&f.list, "list", false, "list the scenarios and exit")
	fs.StringArrayVar(&f.scenarios, "scenario", nil, "run only this scenario, or those below this name, e.g. peer (repeatable; default: all)")
	fs.IntVar(&f.runs, "runs", 100, "iterations of each latency scenario")
	fs.IntVar(&f.concurrency, "concurrency", 4, "parallel clients of the concurrent scenarios")
	fs.IntVar(&f.density, "density", 100, "idle sandboxes kept alive by the density scenario (e.g. 500, 1000)")
	fs.StringVar(&f.runsc, "runsc", "", "gVisor runsc binary (default: PATH, then ~/.cache/paddock/runsc/runsc)")
	fs.StringVar(&f.egressURL, "egress-url", "", "an http URL on this machine that the server's egress allows, for the egress scenario")
	fs.StringArrayVar(&f.dnsHosts, "dns-host", nil, "with --embedded: serve's --dns-host NAME=IP, e.g. the --egress-url's host (repeatable)")
	fs.StringArrayVar(&f.allowCIDRs, "egress-allow-cidr", nil, "with --embedded: serve's --egress-allow-cidr, e.g. the --egress-url's address (repeatable)")
	fs.IntVar(&f.uidBase, "uid-base", 0, "with --embedded: first host uid of the bench's sandboxes (default: a random range that no other Paddock default uses)")
	fs.StringVar(&f.logLevel, "log-level", "error", "with --embedded: log level of the embedded servers on stderr")
	return cmd
}

func runBench(ctx context.Context, e *env, f *benchFlags) error {
	if f.list {
		for _, n := range bench.Names() {
			fmt.Fprintf(e.stdout, "%-38s %s\n", n, bench.Describe(n))
		}
		return nil
	}
	if _, err := bench.Select(f.scenarios); err != nil {
		return err
	}
	// Zero would mean "the default" to the library; on the command line it
	// is a mistake.
	for _, v := range []struct {
		name string
		n    int
	}{{"runs", f.runs}, {"concurrency", f.concurrency}, {"density", f.density}} {
		if v.n < 1 {
			return fmt.Errorf("--%s must be at least 1", v.name)
		}
	}
	log, err := newLogger(e, f.logLevel)
	if err != nil {
		return err
	}
	hc := benchHTTPClient(f.concurrency)
	var prov bench.Provider
	if f.embedded {
		eb, err := newEmbeddedBench(f, log, hc)
		if err != nil {
			return err
		}
		prov = eb
	} else {
		c := e.client().WithHTTPClient(hc)
		if c.Key() == "" {
			return fmt.Errorf("PADDOCK_API_KEY is not set (the server at %s needs a key); or use --embedded", c.BaseURL())
		}
		prov = remoteBench{c: c}
	}
	var progress io.Writer
	if fd, ok := e.stderr.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(fd.Fd())) {
		progress = e.stderr
	}
	rep, err := bench.Run(ctx, bench.Options{Provider: prov, Scenarios: f.scenarios, Runs: f.runs,
		Concurrency: f.concurrency, Density: f.density, Runsc: f.runsc, EgressURL: f.egressURL,
		Progress: progress, Version: version, Log: log})
	if rep != nil {
		var perr error
		if f.asJSON {
			perr = rep.WriteJSON(e.stdout)
		} else {
			perr = rep.WriteTable(e.stdout)
		}
		if err == nil {
			err = perr
		}
	}
	return err
}

// benchHTTPClient keeps enough idle connections for c concurrent callers:
// with Go's default of two, concurrent requests would keep reconnecting
// and measure TCP set-up instead of Paddock.
func benchHTTPClient(c int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = max(100, 2*c)
	t.MaxIdleConnsPerHost = max(16, 2*c)
	return &http.Client{Transport: t}
}

// remoteBench is a server elsewhere: its own settings (pool) decide.
type remoteBench struct{ c *client.Client }

func (r remoteBench) Open(context.Context, int) (*bench.Stack, error) {
	return &bench.Stack{Client: r.c, Pool: -1, PID: bench.ServerPID(r.c.BaseURL())}, nil
}

// embeddedBench builds serve's stack in this process, on a loopback
// listener, in a temporary data directory with its own cgroup prefix and
// uid range, so it disturbs no other Paddock on the host.
type embeddedBench struct {
	f       *benchFlags
	log     *slog.Logger
	hc      *http.Client
	uidBase int
	opened  int
}

func newEmbeddedBench(f *benchFlags, log *slog.Logger, hc *http.Client) (*embeddedBench, error) {
	if goruntime.GOOS != "linux" {
		return nil, errors.New("paddock bench --embedded runs sandboxes in this process and needs Linux")
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("paddock bench --embedded needs root (it creates namespaces, cgroups and mounts): run it with sudo, or measure a running server with PADDOCK_URL and PADDOCK_API_KEY")
	}
	b := &embeddedBench{f: f, log: log, hc: hc, uidBase: f.uidBase}
	if b.uidBase == 0 {
		b.uidBase = randomBenchUIDBase()
	}
	return b, nil
}

// randomBenchUIDBase picks a 65536-aligned start in [3.6e9, 3.9e9]: its
// 4096 ranges end below the bench's runc bundle (4.2e9), far above
// serve's default (1e6) and paddock mcp --embedded's (2e9).
func randomBenchUIDBase() int {
	var b [8]byte
	_, _ = rand.Read(b[:])
	const lo, hi = 3_600_000_000, 3_900_000_000
	n := int(binary.LittleEndian.Uint64(b[:]) % uint64((hi-lo)/65536))
	return (lo/65536 + n) * 65536
}

// benchSlots is the native backend's default number of uid ranges, which
// bounds the sandboxes alive at once.
const benchSlots = 4096

func (b *embeddedBench) Open(ctx context.Context, pool int) (_ *bench.Stack, err error) {
	b.opened++
	// On the filesystem of serve's default data directory, so that the
	// audit log's and the store's fsyncs cost what they cost a server
	// (/tmp may be RAM); the name is short: Unix socket paths are limited
	// to 108 bytes.
	parent := filepath.Dir(defaultDataDir)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "pdkb")
	if err != nil {
		return nil, err
	}
	prefix := fmt.Sprintf("paddock-bench-%d-%d", os.Getpid(), b.opened)
	var srv *server.Server
	dropTable := func() {}
	defer func() {
		if err != nil {
			if srv != nil {
				_ = srv.Close(context.Background())
			}
			dropTable()
			removeBenchDir(dir, prefix)
		}
	}()
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	alive := max(b.f.density, b.f.runs, b.f.concurrency) + pool + 16
	sf := benchServeFlags(dir, pool, min(alive, benchSlots), b.uidBase, prefix)
	sf.net.dnsHosts, sf.net.allowNet = b.f.dnsHosts, b.f.allowCIDRs
	var netNote string
	dropTable, netNote = benchNetwork(sf)
	cfg, err := sf.config(b.log) // serve's configuration from serve's flags
	if err != nil {
		return nil, err
	}
	// internal/server: serve's construction; a generated key stays in the
	// bench's data directory.
	cfg.KeyOut = io.Discard
	if srv, err = server.Open(ctx, cfg); err != nil {
		return nil, err
	}
	ln, err := srv.Listen()
	if err != nil {
		return nil, err
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.log.Error("embedded bench server stopped", "err", err)
		}
	}()
	closeStack := func(ctx context.Context) error {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		// Whatever the bench's own cleanup missed goes too.
		scope := sandbox.Scope{Tenant: auth.DefaultTenant, Actor: "bench", Rights: rights.All}
		list, _ := srv.Manager.List(ctx, scope, nil)
		for _, sb := range list {
			_ = srv.Manager.Delete(ctx, scope, sb.ID)
		}
		err := srv.Close(ctx) // waits for the runtime's pending teardowns
		dropTable()
		removeBenchDir(dir, prefix)
		return err
	}

	return &bench.Stack{
		Client:        client.New("http://"+ln.Addr().String(), srv.AdminKey).WithHTTPClient(b.hc),
		Embedded:      true,
		Pool:          pool,
		PID:           os.Getpid(),
		Live:          srv.Cgroups.List,
		CgroupVersion: fmt.Sprintf("v%d", int(srv.Cgroups.Version())),
		LayerStore:    srv.LayerKind,
		NoNetwork:     netNote,
		Close:         closeStack,
	}, nil
}

// benchServeFlags are serve's settings (its defaults, audit log,
// favordynmods and sandbox networking included) with the bench's data
// directory, sizes and host ranges, listening on a loopback port of the
// kernel's choice.
func benchServeFlags(data string, pool, maxSandboxes, uidBase int, prefix string) *serveFlags {
	var sf serveFlags
	defaults := pflag.NewFlagSet("serve-defaults", pflag.ContinueOnError)
	defaults.SetOutput(io.Discard)
	sf.register(defaults) // registering sets each field to serve's default
	sf.data, sf.listen = data, "127.0.0.1:0"
	sf.pool, sf.maxSandboxes, sf.uidBase, sf.cgroupPrefix = pool, maxSandboxes, uidBase, prefix
	return &sf
}
