package dockerfile

import (
	"context"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/paddockhq/paddock/internal/layers"
)

// Runner executes one RUN step. The server's (dockerfile/sandboxrunner)
// runs it in a Paddock sandbox whose root is an overlay of Lowers and
// leaves its writable layer in Upper; the builder then turns Upper into
// the step's layer.
type Runner interface {
	Run(ctx context.Context, req RunRequest) (RunResult, error)
}

// RunRequest is one RUN step.
type RunRequest struct {
	Lowers  []string // the stack so far: layer directories, top first (overlay lowerdir order); read-only
	Upper   string   // an empty directory: the runner leaves the step's overlay upper directory there
	Cmd     []string // argv (shell form is already wrapped in the stage's SHELL)
	Env     []string // KEY=VALUE
	WorkDir string   // absolute; the runner creates it when missing
	UID     int      // sandbox ids the command runs as
	GID     int
	Network string    // "none" (default) or "allowlist"
	Allow   []string  // hosts reachable with "allowlist"
	Output  io.Writer // the command's stdout and stderr, interleaved
}

// RunResult is what a Runner reports. ExitCode is the command's; a
// non-zero one is a failed step, not a Runner error. Owners in Upper are
// host ids IDBase+n for sandbox id n when IDRange > 0 (a sandbox whose
// root is an unprivileged host uid).
type RunResult struct {
	ExitCode        int
	IDBase, IDRange int
}

// Fetcher downloads ADD's URLs under the build's network policy: the
// server's refuses every URL under "none" and reaches only Allow's hosts
// under "allowlist" (sandboxrunner.Fetcher). Without one, ADD of a URL is
// refused.
type Fetcher interface {
	// Fetch writes the body of url to w, at most max bytes, and returns
	// the file name to use when the destination is a directory.
	Fetch(ctx context.Context, url string, net NetPolicy, w io.Writer, max int64) (name string, err error)
}

// NetPolicy is a build's network: Mode "none" or "allowlist" with Allow.
type NetPolicy struct {
	Mode  string
	Allow []string
}

// Base is a stage's starting point.
type Base struct {
	Layers []layers.Layer // bottom first; held by the lease given to Resolve
	Config v1.ConfigFile
	ID     string // stable identity of the content (a digest), for the step cache
}

// BaseResolver resolves FROM. The builder handles scratch and earlier
// stages itself.
type BaseResolver interface {
	Resolve(ctx context.Context, ref string, lease *layers.Lease) (Base, error)
}

// Event is one build log event (streamed as NDJSON by the REST API).
type Event struct {
	Step        int    `json:"step,omitempty"` // 1-based over all stages
	Steps       int    `json:"steps,omitempty"`
	Stage       string `json:"stage,omitempty"`
	Instruction string `json:"instruction,omitempty"`
	Cached      bool   `json:"cached,omitempty"`
	Output      string `json:"output,omitempty"` // RUN output, in chunks
	Message     string `json:"message,omitempty"`
}
