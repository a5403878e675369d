// Package client is the Go client for Paddock's REST API; the paddock CLI
// is built on it.
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

	"github.com/paddockhq/paddock/internal/sandbox"
)

// Types shared with the server.
type (
	Spec        = sandbox.Spec
	Network     = sandbox.Network
	Sandbox     = sandbox.Sandbox
	ExecRequest = sandbox.ExecRequest
	ExecResult  = sandbox.ExecResult
)

// ExecResponse is a buffered exec's answer.
type ExecResponse struct {
	ExecResult
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

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
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message + " (" + e.Code + ")" }

// IsNotFound reports whether err is a not_found answer.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == "not_found"
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
		return nil, fmt.Errorf("cannot reach the Paddock server at %s: %w", c.base, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

func decodeError(resp *http.Response) error {
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &body) != nil || body.Error.Code == "" {
		return &Error{Status: resp.StatusCode, Code: "http_" + fmt.Sprint(resp.StatusCode), Message: strings.TrimSpace(resp.Status)}
	}
	return &Error{Status: resp.StatusCode, Code: body.Error.Code, Message: body.Error.Message}
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	req, err := c.newRequest(ctx, method, path, in)
	if err != nil {
		return err
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
	return json.NewDecoder(resp.Body).Decode(out)
}

// Create makes a sandbox.
func (c *Client) Create(ctx context.Context, spec Spec) (Sandbox, error) {
	var sb Sandbox
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes", spec, &sb)
	return sb, err
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
	var out struct {
		Sandboxes []Sandbox `json:"sandboxes"`
	}
	err := c.call(ctx, http.MethodGet, path, nil, &out)
	return out.Sandboxes, err
}

// Get returns one sandbox.
func (c *Client) Get(ctx context.Context, id string) (Sandbox, error) {
	var sb Sandbox
	err := c.call(ctx, http.MethodGet, "/v1/sandboxes/"+url.PathEscape(id), nil, &sb)
	return sb, err
}

// Delete destroys a sandbox.
func (c *Client) Delete(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, "/v1/sandboxes/"+url.PathEscape(id), nil, nil)
}

// SetTimeout sets the remaining life of a sandbox.
func (c *Client) SetTimeout(ctx context.Context, id string, d time.Duration) (Sandbox, error) {
	var sb Sandbox
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/timeout",
		map[string]int64{"timeout_s": int64(d / time.Second)}, &sb)
	return sb, err
}

// Stats reads a sandbox's resource usage.
func (c *Client) Stats(ctx context.Context, id string) (map[string]any, error) {
	var st map[string]any
	err := c.call(ctx, http.MethodGet, "/v1/sandboxes/"+url.PathEscape(id)+"/stats", nil, &st)
	return st, err
}

// Templates lists templates.
func (c *Client) Templates(ctx context.Context) ([]map[string]any, error) {
	var out struct {
		Templates []map[string]any `json:"templates"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/templates", nil, &out)
	return out.Templates, err
}

// Exec runs a command and returns its buffered output.
func (c *Client) Exec(ctx context.Context, id string, req ExecRequest) (ExecResponse, error) {
	var out ExecResponse
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/exec", req, &out)
	return out, err
}

// ExecStream runs a command, copying its output to stdout and stderr as it
// arrives.
func (c *Client) ExecStream(ctx context.Context, id string, req ExecRequest, stdout, stderr io.Writer) (ExecResult, error) {
	hreq, err := c.newRequest(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/exec", req)
	if err != nil {
		return ExecResult{}, err
	}
	hreq.Header.Set("Accept", "application/x-ndjson")
	resp, err := c.Do(hreq)
	if err != nil {
		return ExecResult{}, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev struct {
			Stdout *string `json:"stdout"`
			Stderr *string `json:"stderr"`
			Error  *struct{ Code, Message string }
			ExecResult
			ExitCode *int `json:"exit_code"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return ExecResult{}, fmt.Errorf("malformed stream line: %w", err)
		}
		switch {
		case ev.Stdout != nil:
			if _, err := io.WriteString(stdout, *ev.Stdout); err != nil {
				return ExecResult{}, err
			}
		case ev.Stderr != nil:
			if _, err := io.WriteString(stderr, *ev.Stderr); err != nil {
				return ExecResult{}, err
			}
		case ev.Error != nil:
			return ExecResult{}, &Error{Status: 200, Code: ev.Error.Code, Message: ev.Error.Message}
		case ev.ExitCode != nil:
			res := ev.ExecResult
			res.ExitCode = *ev.ExitCode
			return res, nil
		}
	}
	if err := sc.Err(); err != nil {
		return ExecResult{}, err
	}
	return ExecResult{}, errors.New("the stream ended before the command did")
}
