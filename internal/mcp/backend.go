package mcp

import (
	"context"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Backend is what the tools act on. Two implementations: ManagerBackend
// (the sandbox manager in this process; the caller is the auth.Principal
// in the context) and ClientBackend (a Paddock server through the REST
// client; the caller is the client's key). Errors carry errs codes.
type Backend interface {
	Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error)
	List(ctx context.Context) ([]sandbox.Sandbox, error)
	Get(ctx context.Context, id string) (sandbox.Sandbox, error)
	Delete(ctx context.Context, id string) error
	// Renew sets a sandbox's remaining life to d.
	Renew(ctx context.Context, id string, d time.Duration) (sandbox.Sandbox, error)

	// Exec runs a command, streaming its output to stdout and stderr.
	Exec(ctx context.Context, id string, req sandbox.ExecRequest, stdout, stderr io.Writer) (sandbox.ExecResult, error)

	StartProcess(ctx context.Context, id string, req sandbox.ProcessRequest) (sandbox.ProcessInfo, error)
	Processes(ctx context.Context, id string) ([]sandbox.ProcessInfo, error)
	Process(ctx context.Context, id, ref string) (sandbox.ProcessInfo, error)
	WaitProcess(ctx context.Context, id, ref string, timeout time.Duration) (sandbox.ProcessInfo, error)
	// ProcessOutput sends the output kept from the offsets in from (per
	// stream; a stream without one starts at its oldest byte kept) to fn,
	// without following, and returns the process's state.
	ProcessOutput(ctx context.Context, id, ref string, from map[string]int64, fn func(Chunk) error) (sandbox.ProcessInfo, error)
	SignalProcess(ctx context.Context, id, ref, signal string, tree bool) (int, error)

	// ReadFile opens a whole file; close the reader.
	ReadFile(ctx context.Context, id, path string) (io.ReadCloser, int64, error)
	WriteFile(ctx context.Context, id string, req sandbox.WriteRequest, data []byte) (sandbox.FileInfo, error)
	EditFile(ctx context.Context, id string, req sandbox.EditRequest) (sandbox.EditResult, error)
	ListFiles(ctx context.Context, id string, req sandbox.ListRequest) (sandbox.ListResult, error)
	FindFiles(ctx context.Context, id string, req sandbox.FindRequest) (sandbox.FindResult, error)
	SearchFiles(ctx context.Context, id string, req sandbox.SearchRequest) (sandbox.SearchResult, error)

	// PortURL is the URL at which the server exposes a sandbox's port.
	PortURL(ctx context.Context, id string, port int) (string, error)
}

// Chunk is a piece of a background process's output. With Data empty it
// only reports that Dropped bytes before Offset were lost.
type Chunk struct {
	Stream  string
	Offset  int64
	Data    []byte
	Dropped int64
}

type baseURLKey struct{}

// withBaseURL records the URL the caller reached this server at (for
// port URLs).
func withBaseURL(ctx context.Context, u string) context.Context {
	return context.WithValue(ctx, baseURLKey{}, u)
}

func baseURLFrom(ctx context.Context) string {
	u, _ := ctx.Value(baseURLKey{}).(string)
	return u
}

// portPath is the server's route for an exposed port (the network API).
func portPath(id string, port int) string {
	return "/v1/sandboxes/" + url.PathEscape(id) + "/ports/" + strconv.Itoa(port) + "/"
}

// HasPortsRoute reports whether an OpenAPI paths set (its keys) has the
// exposed-port route.
func HasPortsRoute(paths []string) bool {
	for _, p := range paths {
		if strings.HasPrefix(p, "/v1/sandboxes/{") && strings.Contains(p, "/ports/{") {
			return true
		}
	}
	return false
}

func errNoPorts() error {
	return errs.New(errs.CodeUnsupported, "this Paddock server does not expose sandbox ports yet (its API has no /v1/sandboxes/{id}/ports/{port}/ route); reach the service from inside the sandbox instead, e.g. exec `curl -s http://127.0.0.1:PORT/`")
}

func validPort(port int) error {
	if port < 1 || port > 65535 {
		return errs.Invalid("port must be between 1 and 65535")
	}
	return nil
}
