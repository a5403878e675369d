// Package client is the Go client for Paddock's REST API; the paddock CLI
// is built on it. Its types are package wire's, the API's own shapes: the
// client imports no part of the server.
//
// Errors: an answer of the server is an *Error (its status, its code, its
// message); no answer at all is an *UnreachableError. Both carry a code of
// the API (ErrorCode) and a message fit to show (PublicMessage), so that
// code built over the client words them as it would the server's own.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/paddockhq/paddock/wire"
)

// Types of sandboxes and exec (package wire).
type (
	Spec         = wire.Spec
	Network      = wire.Network
	InjectRule   = wire.InjectRule
	Sandbox      = wire.Sandbox
	ExecRequest  = wire.ExecRequest
	ExecResult   = wire.ExecResult
	ExecResponse = wire.ExecResponse
	Stats        = wire.Stats
	Template     = wire.Template
)

// DefaultURL is where the CLI looks when PADDOCK_URL is unset.
const DefaultURL = "http://127.0.0.1:7070"

// Client calls one Paddock server.
type Client struct {
	base string
	key  string
	hc   *http.Client
}

// New returns a client for baseURL authenticating with key.
func New(baseURL, key string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), key: key, hc: &http.Client{}}
}

// FromEnv reads PADDOCK_URL (default DefaultURL) and PADDOCK_API_KEY.
func FromEnv() *Client {
	u := os.Getenv("PADDOCK_URL")
	if u == "" {
		u = DefaultURL
	}
	return New(u, os.Getenv("PADDOCK_API_KEY"))
}

// BaseURL is the server's address.
func (c *Client) BaseURL() string { return c.base }

// Key is the API key in use.
func (c *Client) Key() string { return c.key }

// Error is an error answer from the server.
type Error struct {
	Status  int
	Code    string // the API's code (wire.Code*); "http_NNN" for an answer that had none
	Message string
	Server  string // the server's base URL
}

func (e *Error) Error() string { return e.Message + " (" + e.Code + ")" }

// ErrorCode is the API's code of the answer; one that had none (a proxy's
// 502, say) is unavailable.
func (e *Error) ErrorCode() string {
	if e.Code == "" || strings.HasPrefix(e.Code, "http_") {
		return wire.CodeUnavailable
	}
	return e.Code
}

// PublicMessage is the server's message (or, for an answer without one,
// which server answered what).
func (e *Error) PublicMessage() string {
	if e.Code == "" || strings.HasPrefix(e.Code, "http_") {
		return fmt.Sprintf("the Paddock server at %s answered %s", e.Server, e.Message)
	}
	return e.Message
}

// UnreachableError is a call that got no answer: the server could not be
// reached, or the call was cancelled or timed out first.
type UnreachableError struct {
	Server string // the server's base URL
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the Paddock server at %s: %v", e.Server, e.Err)
}

// Unwrap is the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }

// ErrorCode is timeout for a cancelled call, else unavailable.
func (e *UnreachableError) ErrorCode() string {
	if errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded) {
		return wire.CodeTimeout
	}
	return wire.CodeUnavailable
}

// PublicMessage says what failed; the cause, which names hosts and
// addresses of the caller's network, is left to Error.
func (e *UnreachableError) PublicMessage() string {
	if e.ErrorCode() == wire.CodeTimeout {
		return "the call was cancelled or timed out"
	}
	return fmt.Sprintf("cannot reach the Paddock server at %s; is `paddock serve` running there (PADDOCK_URL)?", e.Server)
}

// IsNotFound reports whether err is a not_found answer.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == wire.CodeNotFound
}

func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	return req, nil
}

// Do sends req and returns the response if it is a success, else an *Error.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if c.key != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &UnreachableError{Server: c.base, Err: err}
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, c.decodeError(resp)
	}
	return resp, nil
}

func (c *Client) decodeError(resp *http.Response) error {
	var body wire.ErrorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &body) != nil || body.Error.Code == "" {
		return &Error{Status: resp.StatusCode, Code: "http_" + fmt.Sprint(resp.StatusCode), Message: strings.TrimSpace(resp.Status), Server: c.base}
	}
	return &Error{Status: resp.StatusCode, Code: body.Error.Code, Message: body.Error.Message, Server: c.base}
}

// streamError is an error line of a stream whose status was already sent.
func (c *Client) streamError(d wire.ErrorDetail) error {
	return &Error{Status: http.StatusOK, Code: d.Code, Message: d.Message, Server: c.base}
}

// open sends a call (in as its JSON body, if any) and returns the
// answer, a success, for the caller to read and close: the opener of every
// call, streams included. accept, if set, is the answer's wanted type.
func (c *Client) open(ctx context.Context, method, path string, in any, accept string) (*http.Response, error) {
	req, err := c.newRequest(ctx, method, path, in)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return c.Do(req)
}

// eachLine decodes the JSON lines of a stream, each into a new L, and
// hands them to fn until it says done; a stream that ends before is the
// error ended.
func eachLine[L any](r io.Reader, ended string, fn func(L) (done bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var line L
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("malformed stream line: %w", err)
		}
		if done, err := fn(line); done || err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New(ended)
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.open(ctx, method, path, in, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// do is call for a JSON answer of type T.
func do[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	err := c.call(ctx, method, path, in, &out)
	return out, err
}

// Create makes a sandbox.
func (c *Client) Create(ctx context.Context, spec Spec) (Sandbox, error) {
	return do[Sandbox](ctx, c, http.MethodPost, "/v1/sandboxes", spec)
}

// List returns sandboxes whose labels include all of labels.
func (c *Client) List(ctx context.Context, labels map[string]string) ([]Sandbox, error) {
	q := url.Values{}
	for k, v := range labels {
		q.Add("label", k+"="+v)
	}
	path := "/v1/sandboxes"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out wire.SandboxList
	err := c.call(ctx, http.MethodGet, path, nil, &out)
	return out.Sandboxes, err
}

// Get returns one sandbox.
func (c *Client) Get(ctx context.Context, id string) (Sandbox, error) {
	return do[Sandbox](ctx, c, http.MethodGet, "/v1/sandboxes/"+url.PathEscape(id), nil)
}

// Delete destroys a sandbox.
func (c *Client) Delete(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, "/v1/sandboxes/"+url.PathEscape(id), nil, nil)
}

// SetTimeout sets the remaining life of a sandbox.
func (c *Client) SetTimeout(ctx context.Context, id string, d time.Duration) (Sandbox, error) {
	var sb Sandbox
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/timeout",
		wire.TimeoutRequest{TimeoutS: int64(d / time.Second)}, &sb)
	return sb, err
}

// Stats reads a sandbox's resource usage.
func (c *Client) Stats(ctx context.Context, id string) (Stats, error) {
	return do[Stats](ctx, c, http.MethodGet, "/v1/sandboxes/"+url.PathEscape(id)+"/stats", nil)
}

// Templates lists templates.
func (c *Client) Templates(ctx context.Context) ([]Template, error) {
	var out wire.TemplateList
	err := c.call(ctx, http.MethodGet, "/v1/templates", nil, &out)
	return out.Templates, err
}

// Exec runs a command and returns its buffered output.
func (c *Client) Exec(ctx context.Context, id string, req ExecRequest) (ExecResponse, error) {
	return do[ExecResponse](ctx, c, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/exec", req)
}

// ExecStream runs a command, copying its output to stdout and stderr as it
// arrives.
func (c *Client) ExecStream(ctx context.Context, id string, req ExecRequest, stdout, stderr io.Writer) (ExecResult, error) {
	resp, err := c.open(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/exec", req, "application/x-ndjson")
	if err != nil {
		return ExecResult{}, err
	}
	defer resp.Body.Close()
	var res ExecResult
	err = eachLine(resp.Body, "the stream ended before the command did", func(ev wire.ExecLine) (bool, error) {
		switch {
		case ev.Stdout != nil:
			_, err := io.WriteString(stdout, *ev.Stdout)
			return false, err
		case ev.Stderr != nil:
			_, err := io.WriteString(stderr, *ev.Stderr)
			return false, err
		case ev.Error != nil:
			return true, c.streamError(*ev.Error)
		case ev.ExitCode != nil:
			res = ev.ExecResult
			res.ExitCode = *ev.ExitCode
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return ExecResult{}, err
	}
	return res, nil
}
