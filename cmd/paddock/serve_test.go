package main

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/audit"
)

// parseServe parses args as paddock serve's flags.
func parseServe(t *testing.T, args ...string) *serveFlags {
	t.Helper()
	var f serveFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

// serve's defaults make the whole house: every optional part on, sizes
// and timeouts as documented (docs/operations.md).
func TestServeConfigDefaults(t *testing.T) {
	t.Setenv("PADDOCK_ADMIN_KEY", "")
	c, err := parseServe(t).config(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != defaultDataDir || c.PoolSize != 2 || c.MaxSandboxes != 1000 || c.UIDBase != 1_000_000 ||
		c.CgroupPrefix != "" || !c.FavorDynMods || c.MaxUploadBytes != 16<<30 || c.LayersSize != 0 {
		t.Errorf("sizes and ranges: %+v", c)
	}
	if c.Network == nil || c.Secrets == nil || c.Browser == nil || !c.E2B || !c.MCP || c.Audit.Disable {
		t.Errorf("a part is off: network %v secrets %v browser %v e2b %v mcp %v audit off %v",
			c.Network != nil, c.Secrets != nil, c.Browser != nil, c.E2B, c.MCP, c.Audit.Disable)
	}
	if n := c.Network; n != nil && (n.ProxyPort != 0 || n.DNSPort != 0 || n.Upstreams != nil || n.HostNS != "") {
		t.Errorf("network: %+v", *n)
	}
	h := c.HTTP
	if h.Listen != "127.0.0.1:7070" || h.MaxBodyBytes != 1<<30 || h.BodyIdleTimeout != 30*time.Second || h.TLSCert != "" ||
		h.RateLimit != 200 || h.RateBurst != 400 {
		t.Errorf("http: %+v", h)
	}
	a := c.Audit
	if a.Sync != audit.SyncInterval || a.SegmentBytes != 64<<20 || a.CheckpointEvery != 1000 || a.FailOpen {
		t.Errorf("audit: %+v", a)
	}
}

func TestServeConfigFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		check func(t *testing.T, f *serveFlags)
		err   string
	}{
		{args: []string{"--no-network"}, check: func(t *testing.T, f *serveFlags) {
			if c, _ := f.config(nil); c.Network != nil {
				t.Error("--no-network builds a network")
			}
		}},
		{args: []string{"--body-idle-timeout", "0"}, check: func(t *testing.T, f *serveFlags) {
			if c, _ := f.config(nil); c.HTTP.BodyIdleTimeout >= 0 {
				t.Errorf("--body-idle-timeout 0 is %v, want off (negative)", c.HTTP.BodyIdleTimeout)
			}
		}},
		{args: []string{"--dns-host", "Git.Internal=10.20.0.5", "--dns-upstream", "10.0.0.53", "--egress-allow-cidr", "10.20.0.0/16"},
			check: func(t *testing.T, f *serveFlags) {
				c, err := f.config(nil)
				if err != nil {
					t.Fatal(err)
				}
				n := c.Network
				if len(n.Static["git.internal"]) != 1 || len(n.Upstreams) != 1 || n.Upstreams[0].Port() != 53 || len(n.AllowCIDR) != 1 {
					t.Errorf("network: %+v", *n)
				}
			}},
		{args: []string{"--layers-size", "2G", "--max-upload", "1G"}, check: func(t *testing.T, f *serveFlags) {
			if c, _ := f.config(nil); c.LayersSize != 2<<30 || c.MaxUploadBytes != 1<<30 {
				t.Errorf("sizes: %d %d", c.LayersSize, c.MaxUploadBytes)
			}
		}},
		{args: []string{"--runsc", "/opt/runsc", "--default-runtime", "gvisor"}, check: func(t *testing.T, f *serveFlags) {
			if c, _ := f.config(nil); c.Runsc != "/opt/runsc" || c.DefaultRuntime != "gvisor" {
				t.Errorf("--runsc, --default-runtime are %q, %q in the config", c.Runsc, c.DefaultRuntime)
			}
		}},
		{args: []string{"--max-upload", "0"}, err: `--max-upload: invalid size "0"`},
		{args: []string{"--layers-size", "lots"}, err: "--layers-size: "},
		{args: []string{"--max-body", "0"}, err: `--max-body: "0": want a size of at least 1M`},
		{args: []string{"--rate-limit", "-1"}, err: "--rate-limit and --rate-burst must not be negative"},
		{args: []string{"--allowed-origin", "example.com"}, err: "--allowed-origin: "},
		{args: []string{"--audit-sync", "sometimes"}, err: "--audit-sync: "},
		{args: []string{"--audit-segment-size", "big"}, err: "--audit-segment-size: "},
		{args: []string{"--metrics-listen", "0.0.0.0:9464"}, err: "metrics without a key are served on loopback only"},
		{args: []string{"--dns-host", "nope"}, err: `--dns-host "nope": want NAME=IP`},
		{args: []string{"--egress-allow-cidr", "10.0.0.0/99"}, err: `--egress-allow-cidr "10.0.0.0/99"`},
		{args: []string{"--dns-upstream", "resolver"}, err: `--dns-upstream "resolver": want IP or IP:PORT`},
		{args: []string{"--egress-upstream-ca", "/nonexistent.pem"}, err: "--egress-upstream-ca: "},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f := parseServe(t, tc.args...)
			if tc.check != nil {
				tc.check(t, f)
				return
			}
			if _, err := f.config(nil); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("config = %v, want %q", err, tc.err)
			}
		})
	}
}

// paddock mcp --embedded is serve's house without the host-wide parts
// unless asked for, and without HTTP (its MCP is on stdio).
func TestMCPEmbeddedConfig(t *testing.T) {
	for _, network := range []bool{false, true} {
		sf, err := embeddedServeFlags(&mcpFlags{data: "/tmp/x", pool: 1, maxSandboxes: 8, uidBase: 2_000_000_000,
			cgroupPrefix: "paddock-mcp", network: network})
		if err != nil {
			t.Fatal(err)
		}
		c, err := sf.config(nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.FavorDynMods || (c.Network != nil) != network || c.DataDir != "/tmp/x" || c.PoolSize != 1 ||
			c.CgroupPrefix != "paddock-mcp" || c.Secrets == nil || c.Browser == nil {
			t.Errorf("--network=%v: %+v", network, c)
		}
	}
}

// Every serve flag has its row in docs/operations.md's flag table, so an
// operator reading the docs sees every knob the binary has.
func TestServeFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	var f serveFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f.register(fs)
	n := 0
	fs.VisitAll(func(fl *pflag.Flag) {
		n++
		if !strings.Contains(string(doc), "| `--"+fl.Name+"` |") {
			t.Errorf("--%s is not in docs/operations.md's flag table", fl.Name)
		}
	})
	if n < 20 {
		t.Fatalf("serve registers %d flags: the test reads the wrong flag set", n)
	}
}
