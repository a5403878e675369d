package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/paddockhq/paddock/wire"
)

// Code contexts (docs/code.md): stateful Python, JavaScript, TypeScript
// and bash interpreters in a sandbox.

// maxCodeLine bounds one line of an execution stream: the server's
// largest event (a result of 16 MiB of representations, an error with a
// long traceback) fits.
const maxCodeLine = 48 << 20

func codePath(id string) string { return "/v1/sandboxes/" + url.PathEscape(id) + "/code" }

// ExecuteCode runs one cell and calls emit with each event of its stream
// as it arrives, from the start event to the end event. A refused request
// returns its error before any event; an emit that fails closes the
// stream (which interrupts the cell) and returns its error.
func (c *Client) ExecuteCode(ctx context.Context, id string, req wire.CodeExecuteRequest, emit func(wire.CodeEvent) error) error {
	hreq, err := c.newRequest(ctx, http.MethodPost, codePath(id), req)
	if err != nil {
		return err
	}
	hreq.Header.Set("Accept", "application/x-ndjson")
	resp, err := c.Do(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxCodeLine)
	for sc.Scan() {
		var ev wire.CodeEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("malformed stream line: %w", err)
		}
		if err := emit(ev); err != nil {
			return err
		}
		if ev.Type == "end" {
			// Read the stream's close so that the connection is reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the stream ended before the cell did")
}

// RunCode runs one cell and returns its whole execution.
func (c *Client) RunCode(ctx context.Context, id string, req wire.CodeExecuteRequest) (wire.CodeExecution, error) {
	var ex wire.CodeExecution
	err := c.ExecuteCode(ctx, id, req, func(ev wire.CodeEvent) error { ex.Add(ev); return nil })
	return ex, err
}

// CreateCodeContext starts a context (its kernel is ready when it returns).
func (c *Client) CreateCodeContext(ctx context.Context, id string, req wire.CodeContextRequest) (wire.CodeContext, error) {
	return do[wire.CodeContext](ctx, c, http.MethodPost, codePath(id)+"/contexts", req)
}

// CodeContexts lists a sandbox's contexts, oldest first.
func (c *Client) CodeContexts(ctx context.Context, id string) ([]wire.CodeContext, error) {
	l, err := do[wire.CodeContextList](ctx, c, http.MethodGet, codePath(id)+"/contexts", nil)
	return l.Contexts, err
}

// CodeContext describes one context.
func (c *Client) CodeContext(ctx context.Context, id, ctxID string) (wire.CodeContext, error) {
	return do[wire.CodeContext](ctx, c, http.MethodGet, codePath(id)+"/contexts/"+url.PathEscape(ctxID), nil)
}

// RestartCodeContext replaces a context's kernel (its state is lost).
func (c *Client) RestartCodeContext(ctx context.Context, id, ctxID string) (wire.CodeContext, error) {
	return do[wire.CodeContext](ctx, c, http.MethodPost, codePath(id)+"/contexts/"+url.PathEscape(ctxID)+"/restart", nil)
}

// DeleteCodeContext ends a context and its kernel.
func (c *Client) DeleteCodeContext(ctx context.Context, id, ctxID string) error {
	return c.call(ctx, http.MethodDelete, codePath(id)+"/contexts/"+url.PathEscape(ctxID), nil, nil)
}
