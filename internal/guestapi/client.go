package guestapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// Client talks to one sandbox's guest over its Unix socket.
type Client struct {
	sock string
	tr   *http.Transport
	hc   *http.Client
}

// NewClient returns a client for the guest listening at sock.
func NewClient(sock string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // execs may take long before their first byte
		DisableCompression:    true,
	}
	return &Client{sock: sock, tr: tr, hc: &http.Client{Transport: tr}}
}

// Close drops idle connections.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// URL returns the absolute URL of a guest path, for Do.
func URL(path string) string { return "http://guest" + path }

// Do sends a raw request to the guest (for services layered on the guest,
// such as files and processes). A non-2xx answer is turned into an error.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, unavailable(req.Context(), err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, DecodeError(resp)
	}
	return resp, nil
}

// JSON sends a JSON request and decodes a JSON answer into out (if non-nil).
func (c *Client) JSON(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, URL(path), body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed answer")
	}
	return nil
}

// Health asks the guest how it is.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.JSON(ctx, http.MethodGet, "/v1/health", nil, &h)
	return h, err
}

// Output receives an exec's output as it arrives. Implementations must not
// retain p after returning.
type Output interface {
	Stdout(p []byte) error
	Stderr(p []byte) error
}

// Exec runs req and streams its output to out. stdin, when non-nil and
// req.StdinStream is set, is copied to the command's standard input.
func (c *Client) Exec(ctx context.Context, req ExecRequest, stdin io.Reader, out Output) (ExecResult, error) {
	head, err := json.Marshal(req)
	if err != nil {
		return ExecResult{}, err
	}
	var body io.Reader = bytes.NewReader(head)
	if req.StdinStream && stdin != nil {
		body = io.MultiReader(bytes.NewReader(head), stdin)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, URL("/v1/exec"), body)
	if err != nil {
		return ExecResult{}, err
	}
	resp, err := c.Do(hreq)
	if err != nil {
		return ExecResult{}, err
	}
	defer resp.Body.Close()
	fr := NewFrameReader(bufio.NewReaderSize(resp.Body, 64<<10))
	for {
		typ, p, err := fr.Next()
		if err != nil {
			return ExecResult{}, unavailable(ctx, fmt.Errorf("exec stream: %w", err))
		}
		switch typ {
		case FrameStdout:
			if err := out.Stdout(p); err != nil {
				return ExecResult{}, err
			}
		case FrameStderr:
			if err := out.Stderr(p); err != nil {
				return ExecResult{}, err
			}
		case FrameStarted:
		case FrameExit:
			var res ExecResult
			if err := json.Unmarshal(p, &res); err != nil {
				return ExecResult{}, errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed exit frame")
			}
			return res, nil
		case FrameError:
			var e Error
			_ = json.Unmarshal(p, &e)
			return ExecResult{}, e.asErr()
		default:
			return ExecResult{}, errs.New(errs.CodeUnavailable, "sandbox agent sent an unknown frame")
		}
	}
}

// DecodeError turns a guest error answer into an *errs.Error.
func DecodeError(resp *http.Response) error {
	var e Error
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &e) != nil || e.Code == "" {
		return errs.New(errs.CodeUnavailable, "sandbox agent answered %d", resp.StatusCode)
	}
	return e.asErr()
}

func unavailable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errs.Wrap(errs.CodeSandboxNotActive, err, "sandbox agent is not reachable (the sandbox may have stopped)")
}
