package guestapi

import "time"

// Version is the guest protocol version; the host refuses a guest that
// reports another one (a binary upgraded under a running sandbox).
const Version = 1

// Users a workload may run as.
const (
	UserRoot = "root" // uid 0 inside the sandbox, no capabilities
	UserUser = "user" // uid 1000
)

// Overlay is one overlayfs the guest mounts: Lower (a path in the guest's
// mount namespace where the host attached an id-mapped, read-only tree) at
// Path inside the new root.
type Overlay struct {
	Path  string `json:"path"`
	Lower string `json:"lower"`
}

// Config is what the host sends on the setup channel.
type Config struct {
	Version  int    `json:"version"`
	ID       string `json:"id"`
	Hostname string `json:"hostname"`

	// With the Config come two descriptors (SCM_RIGHTS): the mount
	// directory, which holds the staging points and NewRoot, and the
	// writable layer (quota'd, owned by the sandbox's root). RootLower,
	// Overlays[].Lower and NewRoot are relative to the mount directory.
	RootLower string `json:"root_lower"` // lower layer of "/"
	// RootLowers, when set, replace RootLower: the lower layers of "/",
	// top first (an image template's layer stack).
	RootLowers []string  `json:"root_lowers,omitempty"`
	Overlays   []Overlay `json:"overlays"`  // further lowers at sub-paths (e.g. /usr)
	NewRoot    string    `json:"new_root"`  // an empty directory to build the root on
	ShmBytes   int64     `json:"shm_bytes"` // size of /dev/shm

	CgroupVersion   int    `json:"cgroup_version"`
	CgroupExecDir   string `json:"cgroup_exec_dir"`   // where exec sub-groups go ("" = none)
	CgroupMemoryDir string `json:"cgroup_memory_dir"` // where OOM counters are read ("" = none)

	Hosts      string `json:"hosts"`       // content of /etc/hosts
	ResolvConf string `json:"resolv_conf"` // content of /etc/resolv.conf

	// Env is the sandbox-wide environment, under each exec's own.
	Env map[string]string `json:"env,omitempty"`
	// Image carries an image template's defaults (nil: none).
	Image *ImageDefaults `json:"image,omitempty"`
	// ExtraFiles are written into the root before hardening (e.g. a CA
	// bundle for the egress proxy), path → content.
	ExtraFiles map[string]string `json:"extra_files,omitempty"`
	// Volumes are mounts the host staged (id-mapped, nosuid, nodev, maybe
	// read-only) at Stage, relative to the mount directory, to be moved
	// to Path in the new root (docs/state.md, "Volumes").
	Volumes []Volume `json:"volumes,omitempty"`
}

// Volume is one staged volume mount.
type Volume struct {
	Path  string `json:"path"`
	Stage string `json:"stage"`
}

// ImageDefaults are what an image template's config asks of commands
// that do not say otherwise.
type ImageDefaults struct {
	WorkDir string `json:"work_dir,omitempty"` // default working directory
	// User, when set, is the identity UserUser stands for in this sandbox
	// (the image's non-root USER) and the default user of commands.
	User *ImageUser `json:"user,omitempty"`
}

// ImageUser is an image's USER resolved against its own /etc/passwd.
type ImageUser struct {
	UID  uint32 `json:"uid"`
	GID  uint32 `json:"gid"`
	Name string `json:"name"`
	Home string `json:"home"`
}

// Ready is the guest's answer on the setup channel.
type Ready struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Pid   int    `json:"pid"` // the guest's pid in its own namespace (always 1)
	// LayerFD is the agent's descriptor on the writable layer (the second
	// setup descriptor), held for the sandbox's life so that a restarted
	// server can copy it (pidfd_getfd) to capture the layer; 0: none.
	LayerFD int `json:"layer_fd,omitempty"`
	// Phases times the guest's setup steps, for the host's debug log.
	Phases string `json:"phases,omitempty"`
	// MainAt and ConfigAt are when the guest entered main and received its
	// Config (Unix nanoseconds), for the same log.
	MainAt   int64 `json:"main_at,omitempty"`
	ConfigAt int64 `json:"config_at,omitempty"`
}

// Health is the answer of GET /v1/health.
type Health struct {
	Version int     `json:"version"`
	Uptime  float64 `json:"uptime_s"`
	Procs   int     `json:"procs"`
	// DiskBytes and DiskInodes are what the writable layer holds.
	DiskBytes  int64 `json:"disk_bytes"`
	DiskInodes int64 `json:"disk_inodes"`
}

// ExecRequest asks the guest to run one command.
type ExecRequest struct {
	Argv      []string          `json:"argv"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	User      string            `json:"user,omitempty"`
	Stdin     []byte            `json:"stdin,omitempty"`
	TimeoutMs int64             `json:"timeout_ms,omitempty"`
	// MaxOutput caps the bytes forwarded per stream (0: no cap). Output
	// past the cap is drained and counted but not sent.
	MaxOutput int64 `json:"max_output,omitempty"`
	// StdinStream: the rest of the request body after the JSON line is the
	// command's stdin, streamed (Stdin is then ignored).
	StdinStream bool `json:"stdin_stream,omitempty"`
}

// ExecResult is the final frame of an exec.
type ExecResult struct {
	ExitCode        int     `json:"exit_code"`
	Signal          string  `json:"signal,omitempty"` // e.g. "SIGKILL" when killed by a signal
	OOMKilled       bool    `json:"oom_killed,omitempty"`
	TimedOut        bool    `json:"timed_out,omitempty"`
	DurationMs      float64 `json:"duration_ms"`
	StdoutBytes     int64   `json:"stdout_bytes"`
	StderrBytes     int64   `json:"stderr_bytes"`
	StdoutTruncated bool    `json:"stdout_truncated,omitempty"`
	StderrTruncated bool    `json:"stderr_truncated,omitempty"`
	Pid             int     `json:"pid,omitempty"`
}

// Error is the payload of an error frame.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// RangeSize is set for a read range that starts past the end of the
	// file: the file's size (the error is then a *RangeError).
	RangeSize *int64 `json:"range_size,omitempty"`
}

// DefaultWaitDelay is how long an exec waits, after its main process exits,
// for background children still holding its stdout/stderr to close them.
const DefaultWaitDelay = 250 * time.Millisecond
