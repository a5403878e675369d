package mcp

import (
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// coreTools registers the tools every server has (the browser tools come
// with Options.Browser).
func coreTools(tb *Toolbox) {
	sandboxTools(tb)
	execTools(tb)
	processTools(tb)
	fileTools(tb)
	portTools(tb)
	pauseTools(tb)  // tools_pause.go
	memoryTools(tb) // tools_memory.go
	codeTools(tb)   // tools_code.go
	stateTools(tb)  // tools_state.go: snapshots, fork
	volumeTools(tb) // tools_volume.go
}

// sandboxDoc is how every tool describes its sandbox argument.
const sandboxDoc = "Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."

type sandboxInfo struct {
	ID        string            `json:"id" jsonschema:"The sandbox id."`
	State     string            `json:"state" jsonschema:"running, paused (sandbox_resume wakes it), or failed (then reason says why)."`
	Reason    string            `json:"reason,omitempty" jsonschema:"Why a failed sandbox stopped."`
	Template  string            `json:"template"`
	CPU       float64           `json:"cpu" jsonschema:"CPU cores."`
	MemoryMB  int64             `json:"memory_mb"`
	DiskMB    int64             `json:"disk_mb"`
	TimeoutS  int64             `json:"timeout_s" jsonschema:"Life in seconds from creation (or the last renewal)."`
	Labels    map[string]string `json:"labels,omitempty"`
	Network   string            `json:"network" jsonschema:"Outbound network mode: none, allowlist or open."`
	Allow     []string          `json:"allow,omitempty" jsonschema:"Domains an allowlist sandbox may reach."`
	CreatedAt time.Time         `json:"created_at"`
	ExpiresAt time.Time         `json:"expires_at" jsonschema:"When it is destroyed unless renewed."`
	Session   bool              `json:"session" jsonschema:"True for this MCP session's own sandbox."`
}

func infoOf(sb wire.Sandbox, session string) sandboxInfo {
	mode, allow := wire.NetNone, []string(nil)
	if n := sb.Spec.Network; n != nil && n.Mode != "" {
		mode, allow = n.Mode, n.Allow
	}
	return sandboxInfo{Network: mode, Allow: allow, ID: sb.ID, State: string(sb.State), Reason: sb.Reason, Template: sb.Spec.Template, CPU: sb.Spec.CPU,
		MemoryMB: sb.Spec.MemoryMB, DiskMB: sb.Spec.DiskMB, TimeoutS: sb.Spec.TimeoutS, Labels: sb.Spec.Labels,
		CreatedAt: sb.CreatedAt, ExpiresAt: sb.ExpiresAt, Session: session != "" && sb.ID == session}
}

type createIn struct {
	Template string             `json:"template,omitempty" jsonschema:"Template (root filesystem) to start from; default: the server's default, usually \"host\"."`
	CPU      float64            `json:"cpu,omitempty" jsonschema:"CPU cores, e.g. 0.5 or 2 (default: the server's or tenant's default)."`
	MemoryMB int64              `json:"memory_mb,omitempty" jsonschema:"Memory ceiling in MiB."`
	DiskMB   int64              `json:"disk_mb,omitempty" jsonschema:"Disk space for writes in MiB."`
	TimeoutS int64              `json:"timeout_s,omitempty" jsonschema:"Life in seconds, after which the sandbox is destroyed."`
	Labels   map[string]string  `json:"labels,omitempty" jsonschema:"Labels (key: value) to find it by later."`
	Env      map[string]string  `json:"env,omitempty" jsonschema:"Environment variables for every command run in it."`
	Network  string             `json:"network,omitempty" jsonschema:"Outbound network: \"none\" (default: loopback only), \"allowlist\" (only the domains in allow) or \"open\"; the server's policy may refuse."`
	Allow    []string           `json:"allow,omitempty" jsonschema:"For network allowlist: domains it may reach, e.g. \"pypi.org\" or \"*.github.com\" (optionally with :port)."`
	Snapshot string             `json:"snapshot,omitempty" jsonschema:"A snapshot (snapshot_list) whose files the sandbox starts with; its template is the snapshot's."`
	Volumes  []wire.VolumeMount `json:"volumes,omitempty" jsonschema:"Volumes (volume_list) to mount: [{name, path, read_only}]; path is absolute, e.g. /data."`
}

type listIn struct{}

type listOut struct {
	Sandboxes      []sandboxInfo `json:"sandboxes"`
	SessionSandbox string        `json:"session_sandbox" jsonschema:"Id of this session's own sandbox; empty until a tool call creates it."`
}

type deleteIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Id of the sandbox to delete."`
}

type deleteOut struct {
	Deleted string `json:"deleted" jsonschema:"Id of the deleted sandbox."`
}

func sandboxTools(tb *Toolbox) {
	Add(tb, Tool{Name: "sandbox_create", Need: rights.Of(rights.Write), Title: "Create a sandbox", Additive: true,
		Description: "Create an extra isolated Linux sandbox and return its id. You rarely need this: every other tool " +
			"uses this session's own sandbox when you omit `sandbox`. Create one for parallel or differently sized work " +
			"(cpu, memory_mb, disk_mb, timeout_s) or to reach the internet (network, allow: sandboxes have no network " +
			"by default), then pass its id as `sandbox`. It is NOT deleted with the session: " +
			"delete it with sandbox_delete when done (it also expires after timeout_s)."},
		func(c *Call, in createIn) (sandboxInfo, error) {
			spec := wire.Spec{Template: in.Template, Snapshot: in.Snapshot, CPU: in.CPU, MemoryMB: in.MemoryMB, DiskMB: in.DiskMB,
				TimeoutS: in.TimeoutS, Labels: in.Labels, Env: in.Env, Volumes: in.Volumes}
			if in.Network != "" || len(in.Allow) > 0 {
				mode := in.Network
				if mode == "" {
					mode = wire.NetAllowlist
				}
				spec.Network = &wire.Network{Mode: mode, Allow: in.Allow}
			}
			sb, err := c.Backend().Create(c.Context(), spec)
			if err != nil {
				return sandboxInfo{}, err
			}
			return infoOf(sb, ""), nil
		})

	Add(tb, Tool{Name: "sandbox_list", Need: rights.Of(rights.Read), Title: "List sandboxes", ReadOnly: true,
		Description: "List your sandboxes (id, state, size, expiry) and say which one is this session's own."},
		func(c *Call, _ listIn) (listOut, error) {
			l, err := c.Backend().List(c.Context(), nil)
			if err != nil {
				return listOut{}, err
			}
			own := c.SessionSandbox()
			out := listOut{Sandboxes: make([]sandboxInfo, 0, len(l)), SessionSandbox: own}
			for _, sb := range l {
				out.Sandboxes = append(out.Sandboxes, infoOf(sb, own))
			}
			return out, nil
		})

	Add(tb, Tool{Name: "sandbox_delete", Need: rights.Of(rights.Write), Title: "Delete a sandbox", Idempotent: true,
		Description: "Destroy a sandbox and everything in it (files, processes). Deleting this session's own sandbox is " +
			"allowed: the next tool call without `sandbox` then gets a fresh one."},
		func(c *Call, in deleteIn) (deleteOut, error) {
			if in.Sandbox == "" {
				return deleteOut{}, newToolError(errs.CodeInvalid, "Give `sandbox`: the id of the sandbox to delete (sandbox_list shows them).")
			}
			if err := c.Backend().Delete(c.Context(), in.Sandbox); err != nil {
				if isNotFound(err) {
					return deleteOut{}, errNoSandbox(in.Sandbox)
				}
				return deleteOut{}, err
			}
			if c.sess != nil {
				c.sess.forget(in.Sandbox)
			}
			return deleteOut{Deleted: in.Sandbox}, nil
		})
}
