package server

import (
	"crypto/x509"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Config is what a server is made of. Fields mirror paddock serve's flags
// (and errors about them name the flag); a nil or false optional part is
// left out. Open fills unset sizes with serve's defaults.
type Config struct {
	DataDir string // --data; made 0700 if missing, locked while open
	Log     *slog.Logger
	Version string // reported by /healthz, the audit log, MCP

	// AdminKey is the bootstrap admin key ($PADDOCK_ADMIN_KEY); "" reads
	// DATA/admin.key, or makes one there and announces it on KeyOut.
	AdminKey string
	KeyOut   io.Writer

	CgroupPrefix string // --cgroup-prefix
	FavorDynMods bool   // --cgroup-favordynmods (a host-wide remount)
	UIDBase      int    // --uid-base
	Slots        int    // uid ranges, bounding sandboxes alive at once; 0: the runtime's default
	// LayersSize is the size of the sparse image that holds every writable
	// layer (--layers-size); 0: half the free disk, between 1 GiB and 1 TiB.
	LayersSize     int64
	MaxUploadBytes int64           // --max-upload; 0: the manager's default
	Limits         *sandbox.Limits // nil: sandbox.DefaultLimits for this machine
	PoolSize       int             // --pool
	MaxSandboxes   int             // --max-sandboxes; 0: the manager's default
	// Runsc is the runsc binary of gVisor sandboxes (--runsc); "": where
	// scripts/deps.sh builds it. One given here must be usable (Open
	// refuses it otherwise); a missing default only leaves gVisor out.
	Runsc string
	// DefaultRuntime is the runtime of a spec that names none
	// (--default-runtime): "" or "native", or "gvisor" (Open then refuses
	// to start without a usable runsc). Warm sandboxes stay native.
	DefaultRuntime string

	Audit AuditConfig
	HTTP  HTTPConfig
	// Templates configures image templates (templates.go).
	Templates TemplatesConfig

	// Network builds serve's sandbox network (nil: --no-network, loopback
	// only). A host that cannot run it gets a warning and loopback only.
	Network *NetworkConfig
	// ExternalNetwork is a sandbox network the caller built and wires
	// itself (tests' stacks in namespaces of their own); the server only
	// hands it to the runtime. Not with Network.
	ExternalNetwork runtime.Network

	// Secrets opens the secret store (/v1/secrets, DATA/secrets.key) and,
	// with a Network, injects secrets at the egress proxy. nil: neither.
	Secrets *SecretsConfig
	// PortsDomain serves sandbox ports at PORT-SANDBOX.DOMAIN too
	// (--ports-domain); its names become allowed hosts.
	PortsDomain string

	// Browser runs the sandboxes' browsers (docs/browser.md) with these
	// options; nil: no browser service.
	Browser *browser.Options
	// E2B mounts the E2B-compatible API on the API's port.
	E2B bool
	// E2BNoDefaultInternet: an E2B create that does not say
	// allow_internet_access gets no network (serve's
	// --e2b-default-internet=false); by default it gets internet, as
	// E2B's API gives. Tenants' network_modes bound it either way.
	E2BNoDefaultInternet bool
	// MCP mounts MCP (streamable HTTP) at /mcp.
	MCP bool
	// Console serves the web console at /ui (internal/console).
	Console bool
	// InsecureListen is serve's --insecure-listen: the console then signs
	// people in over plain HTTP on a non-loopback listener too.
	InsecureListen bool

	// WrapObserver, if set, wraps the manager's Observer (the audit log
	// and metrics). Tests use it to let their cleanup proceed over a log
	// they broke on purpose.
	WrapObserver func(sandbox.Observer) sandbox.Observer
}

// AuditConfig is the audit log and the metrics (docs/audit.md,
// docs/observability.md).
type AuditConfig struct {
	// Disable runs without audit log, metrics or tracing: the manager has
	// no Observer and the API no Auditor (benchmarks of the bare path).
	Disable            bool
	Sync               audit.SyncMode // --audit-sync; "": the log's default
	SyncInterval       time.Duration  // --audit-sync-interval
	FailOpen           bool           // --audit-fail-open
	Webhook            string         // --audit-webhook
	SegmentBytes       int64          // --audit-segment-size
	MaxSegments        int            // --audit-max-segments
	CheckpointEvery    int            // --audit-checkpoint-every
	CheckpointInterval time.Duration  // --audit-checkpoint-interval
	MaxBytes           int64          // --audit-max-bytes: retention by size (0: keep all)
	MaxAge             time.Duration  // --audit-max-age: retention by age (0: keep all)
	ArchiveDir         string         // --audit-archive-dir: expired segments move here
	MinFreeBytes       int64          // --audit-min-free: low-disk alarm threshold (0: default)
	// MetricsListen also serves /metrics without a key there
	// (--metrics-listen; the caller checks it is loopback).
	MetricsListen string
	OTLPEndpoint  string // --otlp-endpoint
	// WebhookDrain is how long Close keeps delivering queued violations
	// (0: 10 s; negative: not at all).
	WebhookDrain time.Duration
}

// HTTPConfig is the HTTP side: hardening, limits, listener, TLS.
type HTTPConfig struct {
	Listen         string // --listen, e.g. 127.0.0.1:7070
	TLSCert        string // --tls-cert (PEM file); with TLSKey
	TLSKey         string // --tls-key
	AllowedHosts   []string
	AllowedOrigins []string // checked scheme://host[:port] values
	// MaxBodyBytes caps request bodies; 0: the API's default.
	MaxBodyBytes int64
	// BodyIdleTimeout cuts off a silent request body; 0: the API's
	// default, negative: off.
	BodyIdleTimeout   time.Duration
	ReadHeaderTimeout time.Duration // 0: the API's default
	IdleTimeout       time.Duration // 0: the API's default
	MaxConns          int           // 0: the API's default, -1: no limit
	MaxConnsPerIP     int           // 0: the API's default, -1: no limit
	// RateLimit is each key's rate of audited requests on every surface
	// (--rate-limit, per second; 0: none) and RateBurst how many it may
	// make at once (--rate-burst; 0: twice the rate, at least 1).
	RateLimit float64
	RateBurst int
}

// NetworkConfig is serve's sandbox network (docs/network.md): veths, the
// nftables table, the egress proxy and resolver.
type NetworkConfig struct {
	// HostNS is the network namespace that holds the host side; "" is
	// this process's own (tests pass one they made).
	HostNS         string
	PoolV4, PoolV6 string // --net-pool-v4, --net-pool-v6 ("none": IPv4 only); "": defaults
	// IfPrefix names the host-side interfaces and Table the nftables
	// table; "": serve's.
	IfPrefix, Table    string
	ProxyPort, DNSPort uint16 // --egress-proxy-port, --egress-dns-port; 0: serve's
	// Upstreams answer allowed names (--dns-upstream); nil: this host's
	// resolv.conf, empty and non-nil: none.
	Upstreams []netip.AddrPort
	Static    map[string][]netip.Addr // --dns-host
	AllowCIDR []netip.Prefix          // --egress-allow-cidr
}

// SecretsConfig is the secret store and secret injection (docs/network.md
// "Secrets").
type SecretsConfig struct {
	// UpstreamRoots are the roots the egress proxy trusts when it connects
	// to hosts that get secrets (--egress-upstream-ca); nil: the system's.
	UpstreamRoots *x509.CertPool
}
