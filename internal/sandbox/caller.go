package sandbox

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// Caller is the manager as its callers use it: the methods of the REST
// client (package client) with the same signatures, each acting as the
// caller its context carries (rights.FromContext; a context without one
// may do nothing). A surface declares the backend it needs as an
// interface (the MCP tools do), and both this and *client.Client satisfy
// it: the sandboxes of this process or of a server, with one
// implementation each and no copy kept by hand.
type Caller struct{ m *Manager }

// Caller returns the manager's caller view.
func (m *Manager) Caller() *Caller { return &Caller{m: m} }

// Create makes a sandbox.
func (c *Caller) Create(ctx context.Context, spec Spec) (Sandbox, error) {
	return c.m.Create(ctx, rights.FromContext(ctx), spec)
}

// List returns the sandboxes whose labels include all of labels.
func (c *Caller) List(ctx context.Context, labels map[string]string) ([]Sandbox, error) {
	return c.m.List(ctx, rights.FromContext(ctx), labels)
}

// Get returns one sandbox.
func (c *Caller) Get(ctx context.Context, id string) (Sandbox, error) {
	return c.m.Get(ctx, rights.FromContext(ctx), id)
}

// Delete destroys a sandbox.
func (c *Caller) Delete(ctx context.Context, id string) error {
	return c.m.Delete(ctx, rights.FromContext(ctx), id)
}

// SetTimeout sets the remaining life of a sandbox.
func (c *Caller) SetTimeout(ctx context.Context, id string, d time.Duration) (Sandbox, error) {
	return c.m.SetTimeout(ctx, rights.FromContext(ctx), id, d)
}

// Stats reads a sandbox's consumption.
func (c *Caller) Stats(ctx context.Context, id string) (Stats, error) {
	return c.m.Stats(ctx, rights.FromContext(ctx), id)
}

// Network returns a sandbox's network policy.
func (c *Caller) Network(ctx context.Context, id string) (Network, error) {
	return c.m.Network(ctx, rights.FromContext(ctx), id)
}

// SetNetwork changes a running sandbox's network policy.
func (c *Caller) SetNetwork(ctx context.Context, id string, n Network) (Network, error) {
	return c.m.SetNetwork(ctx, rights.FromContext(ctx), id, n)
}

// writers adapts two writers to an exec's output.
type writers struct{ out, err io.Writer }

func (w writers) Stdout(p []byte) error { _, err := w.out.Write(p); return err }
func (w writers) Stderr(p []byte) error { _, err := w.err.Write(p); return err }

// Exec runs a command and returns its output, capped per stream by the
// guest (the server's default unless req says).
func (c *Caller) Exec(ctx context.Context, id string, req ExecRequest) (wire.ExecResponse, error) {
	var out, errb bytes.Buffer
	res, err := c.m.Exec(ctx, rights.FromContext(ctx), id, req, nil, writers{&out, &errb}, false)
	return wire.ExecResponse{ExecResult: res, Stdout: out.String(), Stderr: errb.String()}, err
}

// ExecStream runs a command, copying its output to stdout and stderr as
// it arrives (uncapped unless req says: the caller keeps what it wants).
func (c *Caller) ExecStream(ctx context.Context, id string, req ExecRequest, stdout, stderr io.Writer) (ExecResult, error) {
	return c.m.Exec(ctx, rights.FromContext(ctx), id, req, nil, writers{stdout, stderr}, true)
}

// StartProcess starts a background process.
func (c *Caller) StartProcess(ctx context.Context, id string, req ProcessRequest) (ProcessInfo, error) {
	return c.m.StartProcess(ctx, rights.FromContext(ctx), id, req)
}

// Processes lists a sandbox's running and recently exited processes.
func (c *Caller) Processes(ctx context.Context, id string) ([]ProcessInfo, error) {
	return c.m.Processes(ctx, rights.FromContext(ctx), id)
}

// Process describes one process (ref: a pid, a process id, "tag:NAME").
func (c *Caller) Process(ctx context.Context, id, ref string) (ProcessInfo, error) {
	return c.m.Process(ctx, rights.FromContext(ctx), id, ref)
}

// KillProcess kills a process and everything it started.
func (c *Caller) KillProcess(ctx context.Context, id, ref string) (ProcessInfo, error) {
	return c.m.KillProcess(ctx, rights.FromContext(ctx), id, ref)
}

// SignalProcess sends a signal to a process (or with tree to its tree)
// and returns how many got it.
func (c *Caller) SignalProcess(ctx context.Context, id, ref, signal string, tree bool) (int, error) {
	return c.m.SignalProcess(ctx, rights.FromContext(ctx), id, ref, signal, tree)
}

// WaitProcess waits up to timeout for a process to exit.
func (c *Caller) WaitProcess(ctx context.Context, id, ref string, timeout time.Duration) (ProcessInfo, error) {
	return c.m.WaitProcess(ctx, rights.FromContext(ctx), id, ref, timeout)
}

// WriteStdin streams r to a process's input.
func (c *Caller) WriteStdin(ctx context.Context, id, ref string, r io.Reader) (int64, error) {
	return c.m.WriteStdin(ctx, rights.FromContext(ctx), id, ref, r)
}

// CloseStdin closes a process's input.
func (c *Caller) CloseStdin(ctx context.Context, id, ref string) error {
	return c.m.CloseStdin(ctx, rights.FromContext(ctx), id, ref)
}

// ResizeProcess changes the size of a process's terminal.
func (c *Caller) ResizeProcess(ctx context.Context, id, ref string, size PTYSize) error {
	return c.m.ResizeProcess(ctx, rights.FromContext(ctx), id, ref, size)
}

// ProcessOutput streams a process's output to fn and returns its state
// at the end of the stream.
func (c *Caller) ProcessOutput(ctx context.Context, id, ref string, opt OutputOptions, fn func(OutputEvent) error) (ProcessInfo, error) {
	return c.m.ProcessOutput(ctx, rights.FromContext(ctx), id, ref, opt, fn)
}

// OpenFile opens a file, or a range of it.
func (c *Caller) OpenFile(ctx context.Context, id string, req ReadFileRequest) (*File, error) {
	return c.m.ReadFile(ctx, rights.FromContext(ctx), id, req)
}

// WriteFile streams body (size bytes, or -1 if unknown) into a file.
func (c *Caller) WriteFile(ctx context.Context, id string, req WriteRequest, body io.Reader, size int64) (FileInfo, error) {
	return c.m.WriteFile(ctx, rights.FromContext(ctx), id, req, body, size)
}

// StatFile describes a path.
func (c *Caller) StatFile(ctx context.Context, id string, req StatRequest) (FileInfo, error) {
	return c.m.StatFile(ctx, rights.FromContext(ctx), id, req)
}

// ListFiles lists a directory.
func (c *Caller) ListFiles(ctx context.Context, id string, req ListRequest) (ListResult, error) {
	return c.m.ListFiles(ctx, rights.FromContext(ctx), id, req)
}

// MakeDir makes a directory.
func (c *Caller) MakeDir(ctx context.Context, id string, req MkdirRequest) (FileInfo, error) {
	return c.m.MakeDir(ctx, rights.FromContext(ctx), id, req)
}

// MoveFile renames a path.
func (c *Caller) MoveFile(ctx context.Context, id string, req MoveRequest) (FileInfo, error) {
	return c.m.MoveFile(ctx, rights.FromContext(ctx), id, req)
}

// RemoveFile removes a path.
func (c *Caller) RemoveFile(ctx context.Context, id string, req RemoveRequest) (RemoveResult, error) {
	return c.m.RemoveFile(ctx, rights.FromContext(ctx), id, req)
}

// EditFile changes a file in place.
func (c *Caller) EditFile(ctx context.Context, id string, req EditRequest) (EditResult, error) {
	return c.m.EditFile(ctx, rights.FromContext(ctx), id, req)
}

// ReadLines reads a line range of a text file.
func (c *Caller) ReadLines(ctx context.Context, id string, req LinesRequest) (LinesResult, error) {
	return c.m.ReadLines(ctx, rights.FromContext(ctx), id, req)
}

// FindFiles globs for paths.
func (c *Caller) FindFiles(ctx context.Context, id string, req FindRequest) (FindResult, error) {
	return c.m.FindFiles(ctx, rights.FromContext(ctx), id, req)
}

// SearchFiles greps files.
func (c *Caller) SearchFiles(ctx context.Context, id string, req SearchRequest) (SearchResult, error) {
	return c.m.SearchFiles(ctx, rights.FromContext(ctx), id, req)
}

// DownloadArchive streams a directory (or file) as tar, gzip'd if asked.
func (c *Caller) DownloadArchive(ctx context.Context, id string, req ArchiveRequest) (io.ReadCloser, error) {
	return c.m.DownloadArchive(ctx, rights.FromContext(ctx), id, req)
}

// UploadArchive extracts a tar (or tar.gz) stream into a directory.
func (c *Caller) UploadArchive(ctx context.Context, id string, req ExtractRequest, body io.Reader, size int64) (ExtractResult, error) {
	return c.m.UploadArchive(ctx, rights.FromContext(ctx), id, req, body, size)
}
