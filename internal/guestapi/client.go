package guestapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// answer is an answer whose status said it is not an error: its frames.
type answer struct {
	ctx  context.Context
	resp *http.Response
	br   *bufio.Reader
	fr   FrameReader
}

// call sends route a request: the head frame, then body — size bytes, or
// -1 if unknown; bulk bodies are copied in large chunks. It returns the
// answer once its status is in; a failed answer is its error.
func (c *Client) call(ctx context.Context, route string, head any, body io.Reader, size int64, bulk bool) (*answer, error) {
	hb, err := AppendHead(make([]byte, 0, 256), head)
	if err != nil {
		return nil, err
	}
	var req *http.Request
	if body == nil {
		// A bytes.Reader lets the transport resend the request on a
		// connection the guest closed meanwhile.
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, "http://guest"+route, bytes.NewReader(hb))
	} else {
		var rd io.Reader = io.MultiReader(bytes.NewReader(hb), body)
		if bulk {
			rd = bigReader{rd}
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, "http://guest"+route, rd)
		req.ContentLength = -1
		if size >= 0 {
			req.ContentLength = int64(len(hb)) + size
		}
	}
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ContentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, unavailable(ctx, err)
	}
	a := newAnswer(ctx, resp)
	if resp.StatusCode != http.StatusOK {
		defer a.close()
		return nil, a.failure()
	}
	return a, nil
}

func newAnswer(ctx context.Context, resp *http.Response) *answer {
	a := &answer{ctx: ctx, resp: resp, br: bufio.NewReaderSize(resp.Body, 64<<10)}
	a.fr.r = a.br
	return a
}

func (a *answer) close() { a.resp.Body.Close() }

// failure is the error a failed answer carries in its error frame.
func (a *answer) failure() error {
	typ, p, err := a.fr.NextMax(MaxHead)
	if err != nil || typ != FrameError {
		return errs.New(errs.CodeUnavailable, "sandbox agent answered %d", a.resp.StatusCode)
	}
	return AsError(p)
}

// next reads the next frame of a stream.
func (a *answer) next(what string) (byte, []byte, error) {
	typ, p, err := a.fr.Next()
	if err != nil {
		return 0, nil, streamErr(a.ctx, what, err)
	}
	return typ, p, nil
}

// head reads the answer's head frame into v (nil: discards it).
func (a *answer) head(v any) error { return a.headMax(v, maxAnswerHead) }

// headMax is head with another bound.
func (a *answer) headMax(v any, max int) error {
	typ, p, err := a.fr.NextMax(max)
	if err != nil {
		return streamErr(a.ctx, "answer", err)
	}
	switch typ {
	case FrameHead:
		if v == nil {
			return nil
		}
		if err := json.Unmarshal(p, v); err != nil {
			return errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed answer")
		}
		return nil
	case FrameError:
		return AsError(p)
	}
	return errs.New(errs.CodeUnavailable, "sandbox agent sent an unexpected frame")
}

// data is the answer's data frames as a stream of bytes.
func (a *answer) data(end func([]byte) error) *dataStream { return &dataStream{r: a.br, end: end} }

// unary sends in to route and decodes the answer into out (nil: discards).
func (c *Client) unary(ctx context.Context, route string, in, out any) error {
	return c.unaryMax(ctx, route, in, out, maxAnswerHead)
}

// ask is a unary call answered with a T, whose head may hold max bytes.
func ask[T any](ctx context.Context, c *Client, route string, in any, max int) (T, error) {
	var out T
	err := c.unaryMax(ctx, route, in, &out, max)
	return out, err
}

// unaryMax is unary for a route whose answer may be large.
func (c *Client) unaryMax(ctx context.Context, route string, in, out any, max int) error {
	if in == nil {
		in = Empty{}
	}
	a, err := c.call(ctx, route, in, nil, 0, false)
	if err != nil {
		return err
	}
	defer a.close()
	return a.headMax(out, max)
}

// Health asks the guest how it is.
func (c *Client) Health(ctx context.Context) (Health, error) {
	return ask[Health](ctx, c, RouteHealth, nil, maxAnswerHead)
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
	var body io.Reader
	if req.StdinStream && stdin != nil {
		body = stdin
	}
	a, err := c.call(ctx, RouteExec, req, body, -1, false)
	if err != nil {
		return ExecResult{}, err
	}
	defer a.close()
	if err := a.head(nil); err != nil {
		return ExecResult{}, err
	}
	for {
		typ, p, err := a.next("exec")
		if err != nil {
			return ExecResult{}, err
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
		case FrameEnd:
			var res ExecResult
			if err := json.Unmarshal(p, &res); err != nil {
				return ExecResult{}, errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed exit frame")
			}
			return res, nil
		case FrameError:
			return ExecResult{}, AsError(p)
		default:
			return ExecResult{}, errs.New(errs.CodeUnavailable, "sandbox agent sent an unknown frame")
		}
	}
}

// streamErr words a failure to read the guest's frames: an oversized frame
// is a misbehaving agent, anything else a lost one.
func streamErr(ctx context.Context, what string, err error) error {
	if errors.Is(err, ErrFrameTooLarge) {
		return errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent an oversized %s frame", what)
	}
	return unavailable(ctx, fmt.Errorf("%s: %w", what, err))
}

func unavailable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errs.Wrap(errs.CodeSandboxNotActive, err, "sandbox agent is not reachable (the sandbox may have stopped)")
}

// dialUpgrade opens a connection of its own to the guest and upgrades it
// to protocol on route: after the 101 answer it is the protocol's. A
// refusal is the guest's error.
func (c *Client) dialUpgrade(ctx context.Context, route, protocol string, head any) (net.Conn, *bufio.Reader, error) {
	hb, err := AppendHead(nil, head)
	if err != nil {
		return nil, nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.sock)
	if err != nil {
		return nil, nil, unavailable(ctx, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (net.Conn, *bufio.Reader, error) {
		stop()
		conn.Close()
		return nil, nil, err
	}
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: guest\r\nConnection: Upgrade\r\nUpgrade: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		route, protocol, ContentType, len(hb))
	if _, err := conn.Write(append([]byte(req), hb...)); err != nil {
		return fail(unavailable(ctx, err))
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fail(unavailable(ctx, err))
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		if resp.StatusCode < 300 {
			return fail(errs.New(errs.CodeUnavailable, "sandbox agent did not upgrade the connection (status %d)", resp.StatusCode))
		}
		return fail(newAnswer(ctx, resp).failure())
	}
	if !stop() {
		conn.Close()
		return nil, nil, ctx.Err()
	}
	return conn, br, nil
}
