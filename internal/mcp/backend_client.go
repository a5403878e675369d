package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// ClientBackend runs the tools on a Paddock server through the REST
// client (`paddock mcp`): the server authenticates, scopes and audits
// every call under the client's key.
type ClientBackend struct {
	c *client.Client

	mu    sync.Mutex
	ports *bool // the server serves exposed ports, once known
}

// NewClientBackend returns a Backend over c.
func NewClientBackend(c *client.Client) *ClientBackend { return &ClientBackend{c: c} }

// clientErr turns the client's errors into coded ones with messages for
// the person (or model) who configured this server.
func (b *ClientBackend) clientErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		code := errs.Code(ce.Code)
		switch code {
		case errs.CodeUnauthenticated:
			return errs.New(code, "the Paddock server at %s refused the API key (%s): set PADDOCK_API_KEY in this MCP server's environment to a valid key", b.c.BaseURL(), ce.Message)
		case "":
			code = errs.CodeInternal
		}
		if strings.HasPrefix(ce.Code, "http_") {
			return errs.New(errs.CodeUnavailable, "the Paddock server at %s answered %s", b.c.BaseURL(), ce.Message)
		}
		return errs.New(code, "%s", ce.Message)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.CodeTimeout, err, "the call was cancelled or timed out")
	}
	// Transport failures carry only the server's URL, which the user
	// configured: safe and useful to show.
	return errs.Wrap(errs.CodeUnavailable, err, "cannot reach the Paddock server at %s; is `paddock serve` running there (PADDOCK_URL)?", b.c.BaseURL())
}

func (b *ClientBackend) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	sb, err := b.c.Create(ctx, spec)
	return sb, b.clientErr(err)
}

func (b *ClientBackend) List(ctx context.Context) ([]sandbox.Sandbox, error) {
	l, err := b.c.List(ctx, nil)
	return l, b.clientErr(err)
}

func (b *ClientBackend) Get(ctx context.Context, id string) (sandbox.Sandbox, error) {
	sb, err := b.c.Get(ctx, id)
	return sb, b.clientErr(err)
}

func (b *ClientBackend) Delete(ctx context.Context, id string) error {
	return b.clientErr(b.c.Delete(ctx, id))
}

func (b *ClientBackend) Renew(ctx context.Context, id string, d time.Duration) (sandbox.Sandbox, error) {
	sb, err := b.c.SetTimeout(ctx, id, d)
	return sb, b.clientErr(err)
}

func (b *ClientBackend) Exec(ctx context.Context, id string, req sandbox.ExecRequest, stdout, stderr io.Writer) (sandbox.ExecResult, error) {
	res, err := b.c.ExecStream(ctx, id, req, stdout, stderr)
	return res, b.clientErr(err)
}

func (b *ClientBackend) StartProcess(ctx context.Context, id string, req sandbox.ProcessRequest) (sandbox.ProcessInfo, error) {
	info, err := b.c.StartProcess(ctx, id, req)
	return info, b.clientErr(err)
}

func (b *ClientBackend) Processes(ctx context.Context, id string) ([]sandbox.ProcessInfo, error) {
	l, err := b.c.Processes(ctx, id)
	return l, b.clientErr(err)
}

func (b *ClientBackend) Process(ctx context.Context, id, ref string) (sandbox.ProcessInfo, error) {
	info, err := b.c.Process(ctx, id, client.ProcessRef(ref))
	return info, b.clientErr(err)
}

func (b *ClientBackend) WaitProcess(ctx context.Context, id, ref string, timeout time.Duration) (sandbox.ProcessInfo, error) {
	info, err := b.c.WaitProcess(ctx, id, client.ProcessRef(ref), timeout)
	return info, b.clientErr(err)
}

// fromString encodes per-stream offsets as the REST API's from parameter.
func fromString(from map[string]int64) string {
	if len(from) == 0 {
		return ""
	}
	names := make([]string, 0, len(from))
	for k := range from {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, k+":"+strconv.FormatInt(from[k], 10))
	}
	return strings.Join(parts, ",")
}

func (b *ClientBackend) ProcessOutput(ctx context.Context, id, ref string, from map[string]int64, fn func(Chunk) error) (sandbox.ProcessInfo, error) {
	info, err := b.c.ProcessOutput(ctx, id, client.ProcessRef(ref), client.OutputOptions{From: fromString(from)},
		func(ev client.OutputEvent) error {
			return fn(Chunk{Stream: ev.Stream, Offset: ev.Offset, Data: ev.Data, Dropped: ev.Dropped})
		})
	return info, b.clientErr(err)
}

func (b *ClientBackend) SignalProcess(ctx context.Context, id, ref, signal string, tree bool) (int, error) {
	n, err := b.c.SignalProcess(ctx, id, client.ProcessRef(ref), signal, tree)
	return n, b.clientErr(err)
}

func (b *ClientBackend) ReadFile(ctx context.Context, id, path string) (io.ReadCloser, int64, error) {
	f, err := b.c.OpenFile(ctx, id, sandbox.ReadFileRequest{Path: path})
	if err != nil {
		return nil, 0, b.clientErr(err)
	}
	return f.Body, f.Size, nil
}

func (b *ClientBackend) WriteFile(ctx context.Context, id string, req sandbox.WriteRequest, data []byte) (sandbox.FileInfo, error) {
	fi, err := b.c.WriteFile(ctx, id, req, bytes.NewReader(data), int64(len(data)))
	return fi, b.clientErr(err)
}

func (b *ClientBackend) EditFile(ctx context.Context, id string, req sandbox.EditRequest) (sandbox.EditResult, error) {
	res, err := b.c.EditFile(ctx, id, req)
	return res, b.clientErr(err)
}

func (b *ClientBackend) ListFiles(ctx context.Context, id string, req sandbox.ListRequest) (sandbox.ListResult, error) {
	res, err := b.c.ListFiles(ctx, id, req)
	return res, b.clientErr(err)
}

func (b *ClientBackend) FindFiles(ctx context.Context, id string, req sandbox.FindRequest) (sandbox.FindResult, error) {
	res, err := b.c.FindFiles(ctx, id, req)
	return res, b.clientErr(err)
}

func (b *ClientBackend) SearchFiles(ctx context.Context, id string, req sandbox.SearchRequest) (sandbox.SearchResult, error) {
	res, err := b.c.SearchFiles(ctx, id, req)
	return res, b.clientErr(err)
}

func (b *ClientBackend) PortURL(ctx context.Context, id string, port int) (string, error) {
	if err := validPort(port); err != nil {
		return "", err
	}
	if _, err := b.c.Get(ctx, id); err != nil {
		return "", b.clientErr(err)
	}
	ok, err := b.portsSupported(ctx)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errNoPorts()
	}
	return b.c.BaseURL() + portPath(id, port), nil
}

// maxOpenAPIBytes bounds the document read to learn the server's routes.
const maxOpenAPIBytes = 8 << 20

// portsSupported asks the server's OpenAPI document (which lists exactly
// the routes it serves) for the exposed-port route; a yes is kept.
func (b *ClientBackend) portsSupported(ctx context.Context) (bool, error) {
	b.mu.Lock()
	known := b.ports
	b.mu.Unlock()
	if known != nil {
		return *known, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.c.BaseURL()+"/openapi.json", nil)
	if err != nil {
		return false, errs.Wrap(errs.CodeInternal, err, "cannot build the request")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		return false, b.clientErr(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxOpenAPIBytes)).Decode(&doc); err != nil {
		return false, errs.Wrap(errs.CodeUnavailable, err, "the Paddock server at %s sent an unreadable OpenAPI document", b.c.BaseURL())
	}
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	ok := HasPortsRoute(paths)
	if ok { // a "no" is asked again: the server may be upgraded meanwhile
		b.mu.Lock()
		b.ports = &ok
		b.mu.Unlock()
	}
	return ok, nil
}
