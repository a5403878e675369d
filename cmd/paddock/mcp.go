package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/server"
)

// mcpFlags are paddock mcp's options.
type mcpFlags struct {
	embedded     bool
	network      bool
	data         string
	pool         int
	maxSandboxes int
	uidBase      int
	cgroupPrefix string
	logLevel     string
}

func newMCPCmd(e *env) *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP on stdio: sandboxes as tools for Claude, Cursor, LangGraph...",
		Long: `Serve the Model Context Protocol on stdin/stdout, for an MCP client that starts
this command (Claude Desktop, Cursor, langchain-mcp-adapters; see docs/mcp.md).

By default the tools act through the Paddock server at $PADDOCK_URL (default
` + client.DefaultURL + `) with the key in $PADDOCK_API_KEY, exactly as the REST
API would: the same tenant, scopes and audit trail.

With --embedded, no server is needed: this process runs its own sandbox
manager (Linux, as root), with its state in --data.

A tool call that names no sandbox uses this session's own sandbox, created on
first use and deleted when the client disconnects.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCP(cmd.Context(), e, &f) },
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.embedded, "embedded", false, "run a sandbox manager in this process instead of using a server (Linux, root)")
	fs.BoolVar(&f.network, "network", false, "with --embedded: give sandboxes serve's egress network (proxy, resolver, nftables; not alongside a paddock serve on this host, whose addresses and ports it would share); default: loopback only")
	fs.StringVar(&f.data, "data", "", "with --embedded: data directory (default $XDG_DATA_HOME/paddock or ~/.local/share/paddock)")
	fs.IntVar(&f.pool, "pool", 1, "with --embedded: warm sandboxes kept ready")
	fs.IntVar(&f.maxSandboxes, "max-sandboxes", 64, "with --embedded: sandboxes alive at once")
	fs.IntVar(&f.uidBase, "uid-base", 2_000_000_000, "with --embedded: first host uid given to sandboxes (must not overlap another Paddock's range)")
	fs.StringVar(&f.cgroupPrefix, "cgroup-prefix", "paddock-mcp", "with --embedded: cgroup holding the sandboxes (must differ from any other Paddock's)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	return cmd
}

func runMCP(ctx context.Context, e *env, f *mcpFlags) error {
	log, err := newLogger(e, f.logLevel)
	if err != nil {
		return err
	}
	if f.embedded {
		return runMCPEmbedded(ctx, e, f, log)
	}
	c := e.client()
	if c.Key() == "" {
		fmt.Fprintf(e.stderr, "paddock mcp: PADDOCK_API_KEY is not set; the server at %s will refuse every call\n", c.BaseURL())
	}
	// The client has the tools' methods, the browser tools' included: the
	// server's REST API does the work.
	srv, err := mcp.New(c, mcp.Options{Log: log, Version: version, Browser: c})
	if err != nil {
		return err
	}
	return srv.ServeStdio(ctx, e.stdin, e.stdout, auth.Principal{})
}

// embeddedPrincipal is who acts in embedded mode (in the audit log):
// the local user, as the default tenant, without admin rights.
var embeddedPrincipal = auth.Principal{KeyID: "mcp-embedded", Tenant: auth.DefaultTenant,
	Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}}

func runMCPEmbedded(ctx context.Context, e *env, f *mcpFlags, log *slog.Logger) error {
	if goruntime.GOOS != "linux" {
		return errors.New("paddock mcp --embedded runs sandboxes in this process and needs Linux; elsewhere, point plain `paddock mcp` at a Paddock server (PADDOCK_URL, PADDOCK_API_KEY)")
	}
	if os.Geteuid() != 0 {
		return errors.New("paddock mcp --embedded needs root (it creates namespaces, cgroups and mounts): run it with sudo, or run `sudo paddock serve` once and use plain `paddock mcp` with PADDOCK_URL and PADDOCK_API_KEY")
	}
	sf, err := embeddedServeFlags(f)
	if err != nil {
		return err
	}
	if dataDirBusy(sf.data) {
		return fmt.Errorf("another Paddock is using %s: one `paddock mcp --embedded` runs per data directory; to share sandboxes between MCP clients, run `sudo paddock serve` and point plain `paddock mcp` at it (or pass another --data, --cgroup-prefix and --uid-base)", sf.data)
	}
	cfg, err := sf.config(log)
	if err != nil {
		return err
	}
	// No HTTP here: the REST, E2B and MCP endpoints are serve's.
	cfg.E2B, cfg.MCP = false, false
	// stdout is the protocol: a generated admin key is announced on stderr.
	cfg.KeyOut = e.stderr
	st, err := server.Open(ctx, cfg) // internal/server: the same wiring as serve
	if err != nil {
		return err
	}
	// No port URLs over stdio: no REST API serves them.
	srv, err := st.NewMCP(nil, mcp.Options{Log: log, Version: version})
	if err != nil {
		_ = st.Close(context.Background())
		return err
	}
	serveErr := srv.ServeStdio(ctx, e.stdin, e.stdout, embeddedPrincipal)
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Close(cctx); err != nil && serveErr == nil {
		serveErr = err
	}
	return serveErr
}

// embeddedServeFlags are serve's settings for an embedded stack: serve's
// defaults (audit log included), with this command's data directory,
// sizes and host ranges.
func embeddedServeFlags(f *mcpFlags) (*serveFlags, error) {
	var sf serveFlags
	defaults := pflag.NewFlagSet("serve-defaults", pflag.ContinueOnError)
	defaults.SetOutput(io.Discard)
	sf.register(defaults) // registering sets every field to serve's default
	sf.data = f.data
	if sf.data == "" {
		base := os.Getenv("XDG_DATA_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("no --data and no home directory: %w", err)
			}
			base = filepath.Join(home, ".local", "share")
		}
		sf.data = filepath.Join(base, "paddock")
	}
	sf.pool, sf.maxSandboxes, sf.uidBase, sf.cgroupPrefix = f.pool, f.maxSandboxes, f.uidBase, f.cgroupPrefix
	// A host-wide cgroup remount is serve's call to make, not a tool's;
	// and the egress network's addresses, ports and interface names are
	// host-wide, so it is off unless asked for.
	sf.favorDynMods = false
	sf.net.disable = !f.network
	return &sf, nil
}

// dataDirBusy reports whether a server holds dir's lock (internal/server
// takes it), to say something more useful than server.Open would.
func dataDirBusy(dir string) bool {
	fd, err := os.Open(filepath.Join(dir, "paddock.lock"))
	if err != nil {
		return false
	}
	defer fd.Close()
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(fd.Fd()), syscall.LOCK_UN)
	return false
}
