package mcp

import (
	"bytes"
	"context"
	"io"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// ManagerOptions tune a ManagerBackend.
type ManagerOptions struct {
	// PublicURL is the base URL clients reach the server at, for port
	// URLs; empty: the URL of the MCP request (Host header), and no port
	// URLs at all over stdio.
	PublicURL string
	// PortsSupported reports whether the server serves the exposed-port
	// route (nil: it does not).
	PortsSupported func() bool
}

// ManagerBackend runs the tools on a sandbox manager in this process. The
// caller is the Scope in each call's context (gate.Scope); the manager
// checks what it may do, as for every surface.
type ManagerBackend struct {
	m *sandbox.Manager
	o ManagerOptions
}

// NewManagerBackend returns a Backend over m.
func NewManagerBackend(m *sandbox.Manager, o ManagerOptions) *ManagerBackend {
	return &ManagerBackend{m: m, o: o}
}

// scope is the caller of a tool call (the manager checks what it may do).
func scope(ctx context.Context) sandbox.Scope { return gate.Scope(ctx) }

func (b *ManagerBackend) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	sc := scope(ctx)
	return b.m.Create(ctx, sc, spec)
}

func (b *ManagerBackend) List(ctx context.Context) ([]sandbox.Sandbox, error) {
	return b.m.List(ctx, scope(ctx), nil)
}

func (b *ManagerBackend) Get(ctx context.Context, id string) (sandbox.Sandbox, error) {
	sc := scope(ctx)
	return b.m.Get(ctx, sc, id)
}

func (b *ManagerBackend) Delete(ctx context.Context, id string) error {
	sc := scope(ctx)
	return b.m.Delete(ctx, sc, id)
}

func (b *ManagerBackend) Renew(ctx context.Context, id string, d time.Duration) (sandbox.Sandbox, error) {
	sc := scope(ctx)
	return b.m.SetTimeout(ctx, sc, id, d)
}

// writerOut adapts two writers to the guest's output callbacks.
type writerOut struct{ out, err io.Writer }

func (w writerOut) Stdout(p []byte) error { _, err := w.out.Write(p); return err }
func (w writerOut) Stderr(p []byte) error { _, err := w.err.Write(p); return err }

func (b *ManagerBackend) Exec(ctx context.Context, id string, req sandbox.ExecRequest, stdout, stderr io.Writer) (sandbox.ExecResult, error) {
	sc := scope(ctx)
	// Streaming: the tool keeps a bounded head and tail itself, so the
	// guest need not cut the output off.
	return b.m.Exec(ctx, sc, id, req, nil, writerOut{stdout, stderr}, true)
}

func (b *ManagerBackend) StartProcess(ctx context.Context, id string, req sandbox.ProcessRequest) (sandbox.ProcessInfo, error) {
	sc := scope(ctx)
	return b.m.StartProcess(ctx, sc, id, req)
}

func (b *ManagerBackend) Processes(ctx context.Context, id string) ([]sandbox.ProcessInfo, error) {
	sc := scope(ctx)
	return b.m.Processes(ctx, sc, id)
}

func (b *ManagerBackend) Process(ctx context.Context, id, ref string) (sandbox.ProcessInfo, error) {
	sc := scope(ctx)
	return b.m.Process(ctx, sc, id, ref)
}

func (b *ManagerBackend) WaitProcess(ctx context.Context, id, ref string, timeout time.Duration) (sandbox.ProcessInfo, error) {
	sc := scope(ctx)
	return b.m.WaitProcess(ctx, sc, id, ref, timeout)
}

func (b *ManagerBackend) ProcessOutput(ctx context.Context, id, ref string, from map[string]int64, fn func(Chunk) error) (sandbox.ProcessInfo, error) {
	sc := scope(ctx)
	return b.m.ProcessOutput(ctx, sc, id, ref, sandbox.OutputOptions{From: wire.FromOffsets(from)}, func(ev sandbox.OutputEvent) error {
		return fn(Chunk{Stream: ev.Stream, Offset: ev.Offset, Data: ev.Data, Dropped: ev.Dropped})
	})
}

func (b *ManagerBackend) SignalProcess(ctx context.Context, id, ref, signal string, tree bool) (int, error) {
	sc := scope(ctx)
	return b.m.SignalProcess(ctx, sc, id, ref, signal, tree)
}

func (b *ManagerBackend) ReadFile(ctx context.Context, id, path string) (io.ReadCloser, int64, error) {
	sc := scope(ctx)
	fr, err := b.m.ReadFile(ctx, sc, id, sandbox.ReadFileRequest{Path: path})
	if err != nil {
		return nil, 0, err
	}
	return fr.Body, fr.Size, nil
}

func (b *ManagerBackend) WriteFile(ctx context.Context, id string, req sandbox.WriteRequest, data []byte) (sandbox.FileInfo, error) {
	sc := scope(ctx)
	return b.m.WriteFile(ctx, sc, id, req, bytes.NewReader(data), int64(len(data)))
}

func (b *ManagerBackend) EditFile(ctx context.Context, id string, req sandbox.EditRequest) (sandbox.EditResult, error) {
	sc := scope(ctx)
	return b.m.EditFile(ctx, sc, id, req)
}

func (b *ManagerBackend) ListFiles(ctx context.Context, id string, req sandbox.ListRequest) (sandbox.ListResult, error) {
	sc := scope(ctx)
	return b.m.ListFiles(ctx, sc, id, req)
}

func (b *ManagerBackend) FindFiles(ctx context.Context, id string, req sandbox.FindRequest) (sandbox.FindResult, error) {
	sc := scope(ctx)
	return b.m.FindFiles(ctx, sc, id, req)
}

func (b *ManagerBackend) SearchFiles(ctx context.Context, id string, req sandbox.SearchRequest) (sandbox.SearchResult, error) {
	sc := scope(ctx)
	return b.m.SearchFiles(ctx, sc, id, req)
}

func (b *ManagerBackend) PortURL(ctx context.Context, id string, port int) (string, error) {
	sc := scope(ctx)
	if err := validPort(port); err != nil {
		return "", err
	}
	if _, err := b.m.Get(ctx, sc, id); err != nil {
		return "", err
	}
	if b.o.PortsSupported == nil || !b.o.PortsSupported() {
		return "", errNoPorts()
	}
	base := b.o.PublicURL
	if base == "" {
		base = baseURLFrom(ctx)
	}
	if base == "" {
		return "", errs.New(errs.CodeUnsupported, "this MCP server runs its own sandbox manager without an HTTP server, so sandbox ports have no URL; run `paddock serve` and point `paddock mcp` at it (PADDOCK_URL), or reach the port from inside the sandbox with exec")
	}
	return strings.TrimRight(base, "/") + portPath(id, port), nil
}
