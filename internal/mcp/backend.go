package mcp

import (
	"context"
	"io"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// Backend is what the tools act on. Two things have these methods, with
// these signatures: *client.Client (a Paddock server through its REST
// API; `paddock mcp`), and the sandbox manager in this process
// (Local; /mcp of `paddock serve` and `paddock mcp --embedded`), which
// acts as the caller each call's context carries. Errors carry errs codes
// (the client's through errs.Coded), so the tools word them the same way
// whichever it is.
type Backend interface {
	Create(ctx context.Context, spec wire.Spec) (wire.Sandbox, error)
	List(ctx context.Context, labels map[string]string) ([]wire.Sandbox, error)
	Get(ctx context.Context, id string) (wire.Sandbox, error)
	Delete(ctx context.Context, id string) error
	// SetTimeout sets a sandbox's remaining life to d.
	SetTimeout(ctx context.Context, id string, d time.Duration) (wire.Sandbox, error)
	// Pause and Resume freeze and thaw a sandbox (docs/state.md).
	Pause(ctx context.Context, id string) (wire.Sandbox, error)
	Resume(ctx context.Context, id string) (wire.Sandbox, error)
	// Snapshots and fork (docs/state.md).
	CreateSnapshot(ctx context.Context, id, name string) (wire.Snapshot, error)
	Snapshots(ctx context.Context) ([]wire.Snapshot, error)
	DeleteSnapshot(ctx context.Context, name string) error
	Fork(ctx context.Context, id string, count int) ([]wire.Sandbox, error)

	// ExecStream runs a command, copying its output to stdout and stderr
	// as it arrives.
	ExecStream(ctx context.Context, id string, req wire.ExecRequest, stdout, stderr io.Writer) (wire.ExecResult, error)

	StartProcess(ctx context.Context, id string, req wire.ProcessRequest) (wire.ProcessInfo, error)
	Processes(ctx context.Context, id string) ([]wire.ProcessInfo, error)
	Process(ctx context.Context, id, ref string) (wire.ProcessInfo, error)
	WaitProcess(ctx context.Context, id, ref string, timeout time.Duration) (wire.ProcessInfo, error)
	ProcessOutput(ctx context.Context, id, ref string, opt wire.OutputOptions, fn func(wire.OutputEvent) error) (wire.ProcessInfo, error)
	SignalProcess(ctx context.Context, id, ref, signal string, tree bool) (int, error)

	// ExecuteCode runs a cell in a code context (docs/code.md), calling
	// emit with each event as it comes.
	ExecuteCode(ctx context.Context, id string, req wire.CodeExecuteRequest, emit func(wire.CodeEvent) error) error

	// ReadLines reads a line range; the sandbox reads the file.
	ReadLines(ctx context.Context, id string, req wire.LinesRequest) (wire.LinesResult, error)
	WriteFile(ctx context.Context, id string, req wire.WriteRequest, body io.Reader, size int64) (wire.FileInfo, error)
	EditFile(ctx context.Context, id string, req wire.EditRequest) (wire.EditResult, error)
	ListFiles(ctx context.Context, id string, req wire.ListRequest) (wire.ListResult, error)
	FindFiles(ctx context.Context, id string, req wire.FindRequest) (wire.FindResult, error)
	SearchFiles(ctx context.Context, id string, req wire.SearchRequest) (wire.SearchResult, error)

	PortLinker
}

// PortLinker makes the link of a sandbox's port (api.PortLinks in a
// server; the client asks its server).
type PortLinker interface {
	PortURL(ctx context.Context, id string, port int, ttl time.Duration) (wire.PortURL, error)
}

// Local is the Backend of the sandbox manager in this process: its caller
// view (the caller is in each call's context), and links the server
// makes for its ports (nil: there is no HTTP server to reach them
// through).
func Local(c *sandbox.Caller, links PortLinker) Backend {
	if links == nil {
		links = noLinks{}
	}
	return local{c, links}
}

type local struct {
	*sandbox.Caller
	PortLinker
}

// noLinks is a server without an HTTP server (MCP over stdio, embedded).
type noLinks struct{}

func (noLinks) PortURL(context.Context, string, int, time.Duration) (wire.PortURL, error) {
	return wire.PortURL{}, errs.New(errs.CodeUnsupported, "this MCP server runs its own sandbox manager without an HTTP server, so sandbox ports have no URL; run `paddock serve` and point `paddock mcp` at it (PADDOCK_URL), or reach the port from inside the sandbox with exec")
}

func validPort(port int) error {
	if port < 1 || port > 65535 {
		return errs.Invalid("port must be between 1 and 65535")
	}
	return nil
}
