package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/wire"
)

// Process types (package wire).
type (
	ProcessRequest = wire.ProcessRequest
	ProcessInfo    = wire.ProcessInfo
	PTYSize        = wire.PTYSize
	// OutputEvent is one piece of a process's output stream. With Data
	// empty it is a position: the stream continues at Offset, and Dropped
	// bytes before it were lost (overwritten in the server's ring buffer).
	OutputEvent = wire.OutputEvent
	// OutputOptions tune ProcessOutput. From is "start" (default: the
	// oldest byte kept), "tail" (new output only), an offset, or
	// wire.FromOffsets; Follow keeps the stream open until the process
	// exits.
	OutputOptions = wire.OutputOptions
)

// ProcessRef names a process: a pid, a process id ("p7") or "tag:NAME".
// It is a string, as the server's own methods take.
type ProcessRef = string

// PID refers to a process by pid (a running process wins over exited ones
// that had the same pid).
func PID(pid int) ProcessRef { return strconv.Itoa(pid) }

// Tag refers to a process by tag.
func Tag(tag string) ProcessRef { return "tag:" + tag }

func procPath(id string, ref ProcessRef, tail string) string {
	p := "/v1/sandboxes/" + url.PathEscape(id) + "/processes"
	if ref != "" {
		p += "/" + url.PathEscape(ref)
	}
	return p + tail
}

// StartProcess starts a background process; it keeps running when this
// client goes away.
func (c *Client) StartProcess(ctx context.Context, id string, req ProcessRequest) (ProcessInfo, error) {
	return do[ProcessInfo](ctx, c, http.MethodPost, procPath(id, "", ""), req)
}

// Processes lists a sandbox's running and recently exited processes.
func (c *Client) Processes(ctx context.Context, id string) ([]ProcessInfo, error) {
	var out wire.ProcessList
	err := c.call(ctx, http.MethodGet, procPath(id, "", ""), nil, &out)
	return out.Processes, err
}

// Process describes one process.
func (c *Client) Process(ctx context.Context, id string, ref ProcessRef) (ProcessInfo, error) {
	return do[ProcessInfo](ctx, c, http.MethodGet, procPath(id, ref, ""), nil)
}

// KillProcess kills a process and everything it started.
func (c *Client) KillProcess(ctx context.Context, id string, ref ProcessRef) (ProcessInfo, error) {
	return do[ProcessInfo](ctx, c, http.MethodDelete, procPath(id, ref, ""), nil)
}

// SignalProcess sends a signal ("SIGTERM", "INT", "9"...) to a process, or
// with tree to every process of its tree; it returns how many got it.
func (c *Client) SignalProcess(ctx context.Context, id string, ref ProcessRef, signal string, tree bool) (int, error) {
	var out wire.SignalResult
	err := c.call(ctx, http.MethodPost, procPath(id, ref, "/signal"), wire.SignalRequest{Signal: signal, Tree: tree}, &out)
	return out.Signalled, err
}

// WaitProcess waits up to timeout for a process to exit; the answer's
// State is still "running" if it did not.
func (c *Client) WaitProcess(ctx context.Context, id string, ref ProcessRef, timeout time.Duration) (ProcessInfo, error) {
	var info ProcessInfo
	ms := timeout.Milliseconds()
	err := c.call(ctx, http.MethodPost, procPath(id, ref, "/wait"), wire.WaitRequest{TimeoutMs: &ms}, &info)
	return info, err
}

// WriteStdin streams r to a process's input.
func (c *Client) WriteStdin(ctx context.Context, id string, ref ProcessRef, r io.Reader) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+procPath(id, ref, "/stdin"), r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out wire.StdinResult
	err = json.NewDecoder(resp.Body).Decode(&out)
	return out.Bytes, err
}

// CloseStdin closes a process's input (a terminal gets ^D).
func (c *Client) CloseStdin(ctx context.Context, id string, ref ProcessRef) error {
	return c.call(ctx, http.MethodPost, procPath(id, ref, "/close-stdin"), nil, nil)
}

// ResizeProcess changes the size of a process's terminal.
func (c *Client) ResizeProcess(ctx context.Context, id string, ref ProcessRef, size PTYSize) error {
	return c.call(ctx, http.MethodPost, procPath(id, ref, "/resize"), size, nil)
}

// ProcessOutput streams a process's output to fn and returns its state at
// the end of the stream. To resume after a disconnect, pass From as
// "stdout:N,stderr:M" with the offsets after the last bytes received.
func (c *Client) ProcessOutput(ctx context.Context, id string, ref ProcessRef, opt OutputOptions, fn func(OutputEvent) error) (ProcessInfo, error) {
	q := url.Values{"encoding": {"base64"}}
	if opt.From != "" {
		q.Set("from", opt.From)
	}
	if opt.Follow {
		q.Set("follow", "1")
	}
	resp, err := c.open(ctx, http.MethodGet, procPath(id, ref, "/output")+"?"+q.Encode(), nil, "")
	if err != nil {
		return ProcessInfo{}, err
	}
	defer resp.Body.Close()
	var end ProcessInfo
	err = eachLine(resp.Body, "the output stream ended early", func(line wire.OutputLine) (bool, error) {
		switch {
		case line.Error != nil:
			return true, c.streamError(*line.Error)
		case line.Process != nil:
			end = *line.Process
			return true, nil
		}
		ev := OutputEvent{Stream: line.Stream, Dropped: line.Dropped}
		if line.Offset != nil {
			ev.Offset = *line.Offset
		}
		switch {
		case line.DataB64 != "":
			var err error
			if ev.Data, err = base64.StdEncoding.DecodeString(line.DataB64); err != nil {
				return true, fmt.Errorf("malformed stream data: %w", err)
			}
		case line.Data != "":
			ev.Data = []byte(line.Data)
		}
		return false, fn(ev)
	})
	if err != nil {
		return ProcessInfo{}, err
	}
	return end, nil
}
