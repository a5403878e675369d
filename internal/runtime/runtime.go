// Package runtime defines the small interface between the sandbox manager
// and the backends that actually run sandboxes (native Linux namespaces by
// default; gVisor and Kubernetes would implement the same interface).
package runtime

import (
	"context"
	"encoding/json"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/wire"
)

// Limits are one sandbox's resource ceilings.
type Limits struct {
	CPU         float64 // cores
	MemoryBytes int64
	DiskBytes   int64
	DiskInodes  int64
	Pids        int64
}

// Config is what a backend needs to start one sandbox.
type Config struct {
	ID string
	// Tenant owns the sandbox ("" for a warm-pool member not yet claimed);
	// backends may label their resources with it.
	Tenant   string
	Template *template.Template
	Limits   Limits
	Hostname string
	Env      map[string]string
	// Network is the sandbox's egress policy; nil (or mode "none") means
	// loopback only, and no Network attachment is made.
	Network *NetPolicy
	// Layer, if set, is a capture (FSCapturer) the writable layer starts
	// with: restored before the guest runs (backends with FSRestorer).
	Layer LayerSource
	// Volumes are host directories to mount into the sandbox (backends
	// that implement VolumeMounter; docs/state.md).
	Volumes []VolumeMount
}

// VolumeMount is one volume in a sandbox: host directory Source at Path.
type VolumeMount struct {
	Name     string
	Source   string
	Path     string
	ReadOnly bool
}

// VolumeMounter is a backend that mounts Config.Volumes.
type VolumeMounter interface {
	MountsVolumes() bool
}

// Stats is a reading of a live sandbox's consumption: the REST API's
// wire.Stats, one type on both sides.
type Stats = wire.Stats

// Instance is one running sandbox.
type Instance interface {
	ID() string
	// Guest is the client for the sandbox's guest agent.
	Guest() *guestapi.Client
	// Record is the backend's state to persist, for Reattach after a restart.
	Record() json.RawMessage
	// Done is closed when the sandbox's agent has exited for any reason.
	Done() <-chan struct{}
	// SetLimits changes CPU, memory and pids ceilings of the live sandbox.
	SetLimits(Limits) error
	Stats() (Stats, error)
}

// Backend runs sandboxes.
type Backend interface {
	Name() string
	// Create starts a sandbox and returns once its guest is ready.
	Create(ctx context.Context, cfg Config) (Instance, error)
	// Reattach finds a sandbox started by an earlier server process. It
	// fails (and the caller then calls Cleanup) if the sandbox is gone or
	// cannot be proven to be the same one.
	Reattach(ctx context.Context, id string, rec json.RawMessage) (Instance, error)
	// Destroy kills a sandbox and releases everything it held.
	Destroy(ctx context.Context, inst Instance) error
	// Cleanup releases whatever a sandbox that cannot be reattached left.
	Cleanup(ctx context.Context, id string, rec json.RawMessage) error
	// Sweep releases resources of sandboxes whose ids are not in keep
	// (left by a crash between creating resources and recording them).
	Sweep(ctx context.Context, keep map[string]bool) (int, error)
	Close() error
}
