package wire

import "time"

// State of a sandbox.
type State string

// States.
const (
	StateRunning State = "running"
	StateFailed  State = "failed" // the guest exited on its own; resources released
	StatePaused  State = "paused" // frozen in place (docs/state.md)
	// StateHibernated: checkpointed to disk, RAM released (gVisor only;
	// docs/state.md).
	StateHibernated State = "hibernated"
)

// Sandbox is one sandbox.
type Sandbox struct {
	ID        string    `json:"id"`
	Tenant    string    `json:"tenant"`
	State     State     `json:"state"`
	Spec      Spec      `json:"spec"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Reason    string    `json:"reason,omitempty"` // why a failed sandbox stopped
	FromPool  bool      `json:"from_pool,omitempty"`
	// PausedAt is when a paused sandbox was paused; while paused,
	// ExpiresAt is when it is destroyed unless resumed (paused_timeout_s)
	// and RemainingMS the life it gets back on resume.
	PausedAt    *time.Time `json:"paused_at,omitempty"`
	RemainingMS int64      `json:"remaining_ms,omitempty"`
	// Forks are the live sandboxes forked from this one (its fork tree's
	// children; the parent is Spec.ForkOf). Filled by GET of one sandbox.
	Forks []string `json:"forks,omitempty"`
}

// Spec is what a caller asks for (POST /v1/sandboxes). Zero fields take
// the tenant's, then the server's defaults.
type Spec struct {
	Template string            `json:"template,omitempty"`
	CPU      float64           `json:"cpu,omitempty"`       // cores
	MemoryMB int64             `json:"memory_mb,omitempty"` // RAM ceiling
	DiskMB   int64             `json:"disk_mb,omitempty"`   // writable layer quota
	Pids     int64             `json:"pids,omitempty"`      // task ceiling
	TimeoutS int64             `json:"timeout_s,omitempty"` // life, then the sandbox is destroyed
	Labels   map[string]string `json:"labels,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Network  *Network          `json:"network,omitempty"`
	Browser  bool              `json:"browser,omitempty"` // start a browser at create; larger default limits
	// Runtime isolates the sandbox: RuntimeNative (omitted: the default)
	// or RuntimeGVisor (docs/gvisor.md).
	Runtime string `json:"runtime,omitempty"`

	// Lifecycle (docs/state.md). AutoResume: calls that need a paused
	// sandbox resume it first instead of answering sandbox_paused.
	AutoResume bool `json:"auto_resume,omitempty"`
	// PausedTimeoutS bounds how long it may stay paused (default 7 days).
	PausedTimeoutS int64 `json:"paused_timeout_s,omitempty"`
	// OnTimeout is what its timeout does: OnTimeoutKill (default),
	// OnTimeoutPause or (gVisor) OnTimeoutHibernate.
	OnTimeout string `json:"on_timeout,omitempty"`
	// IdlePauseAfterS pauses it after that long without exec, file,
	// process or port traffic (0: never).
	IdlePauseAfterS int64 `json:"idle_pause_after_s,omitempty"`

	// Snapshot, at create, is a snapshot (docs/state.md) the sandbox's
	// files start from; its template is the snapshot's.
	Snapshot string `json:"snapshot,omitempty"`
	// ForkOf is the sandbox this one was forked from (set by the server
	// on a fork; refused in a create request).
	ForkOf string `json:"fork_of,omitempty"`
	// Volumes are mounted at create (docs/state.md, "Volumes").
	Volumes []VolumeMount `json:"volumes,omitempty"`
}

// Runtimes.
const (
	RuntimeNative = "native" // Linux namespaces, seccomp, Landlock on the host's kernel
	RuntimeGVisor = "gvisor" // gVisor's kernel (runsc): the workload never reaches the host's
)

// RuntimeInfo is one runtime a server knows (GET /healthz).
type RuntimeInfo struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Version   string `json:"version,omitempty"` // runsc's, for gVisor
	Reason    string `json:"reason,omitempty"`  // why it is not available
}

// What a sandbox's timeout does (Spec.OnTimeout).
const (
	OnTimeoutKill  = "kill"
	OnTimeoutPause = "pause"
	// OnTimeoutHibernate checkpoints it to disk (gVisor only).
	OnTimeoutHibernate = "hibernate"
)

// Network is the egress policy of a sandbox (docs/network.md).
type Network struct {
	Mode string `json:"mode"` // NetNone, NetAllowlist or NetOpen
	// Allow are the destinations of allowlist mode: "example.com",
	// "*.example.com" (names below it), each with an optional ":port".
	Allow []string `json:"allow,omitempty"`
	// AllowCIDR are IP destinations allowlist mode may reach as such (IP
	// literals); the always-refused ranges stay refused.
	AllowCIDR []string `json:"allow_cidr,omitempty"`
	// DenyCIDR are address ranges open mode refuses (IPs or CIDRs); with
	// any, Allow and AllowCIDR are exceptions to them (an allowed entry
	// wins over a denied one).
	DenyCIDR []string `json:"deny_cidr,omitempty"`
	// Inject adds the tenant's secrets to requests for named hosts, as
	// the egress proxy forwards them.
	Inject []InjectRule `json:"inject,omitempty"`
}

// Network modes.
const (
	NetNone      = "none" // loopback only
	NetAllowlist = "allowlist"
	NetOpen      = "open"
)

// InjectRule is one entry of a network policy's inject: HTTPS requests
// the sandbox sends to Host get header Header set to Value, a template
// whose {secret:NAME} placeholders (if any) are the tenant's secrets. Host is a
// name, for port 443, or "name:port".
type InjectRule struct {
	Host   string `json:"host"`
	Header string `json:"header"`
	Value  string `json:"value"`
}

// SandboxList is GET /v1/sandboxes.
type SandboxList struct {
	Sandboxes []Sandbox `json:"sandboxes"`
}

// TimeoutRequest is POST /v1/sandboxes/{id}/timeout.
type TimeoutRequest struct {
	TimeoutS int64 `json:"timeout_s"`
}

// Stats is a sandbox's consumption (GET /v1/sandboxes/{id}/stats).
type Stats struct {
	MemoryBytes     int64         `json:"memory_bytes"`
	MemoryPeakBytes int64         `json:"memory_peak_bytes"`
	OOMKills        int64         `json:"oom_kills"`
	Pids            int64         `json:"pids"`
	CPUUsage        time.Duration `json:"cpu_usage_ns"`
	CPUThrottled    time.Duration `json:"cpu_throttled_ns"`
	DiskBytes       int64         `json:"disk_bytes"`
	DiskInodes      int64         `json:"disk_inodes"`
}
