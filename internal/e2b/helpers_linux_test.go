//go:build linux

package e2b_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/e2b"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// stack is a real Paddock stack with the E2B adapter mounted on the API's
// port: testenv's, which is paddock serve's (internal/server), requests
// audited as serve audits them.
type stack struct {
	*testenv.Env
	URL string
}

func newStack(t *testing.T) *stack {
	t.Helper()
	e := testenv.New(t, testenv.Options{})
	return &stack{Env: e, URL: e.Server.URL}
}

// key creates an e2b_ key of tenant (made if missing) with scopes.
func (s *stack) key(t *testing.T, tenantName string, scopes ...auth.Scope) auth.CreatedKey {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Auth.Tenants().Get(ctx, tenantName); err != nil {
		if _, err := s.Auth.Tenants().Create(ctx, tenantName, tenant.Quotas{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(scopes) == 0 {
		scopes = []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}
	}
	k, err := s.Auth.CreateKey(ctx, s.Scope, auth.KeyRequest{Tenant: tenantName, Scopes: scopes, Format: auth.FormatE2B})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// do sends a request and returns the status and body.
func (s *stack) do(t *testing.T, method, path string, hdr map[string]string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// created is the answer of POST /v2/sandboxes.
type created struct {
	SandboxID       string `json:"sandboxID"`
	TemplateID      string `json:"templateID"`
	EnvdVersion     string `json:"envdVersion"`
	EnvdAccessToken string `json:"envdAccessToken"`
}

// create makes a sandbox through the control plane.
func (s *stack) create(t *testing.T, key string, body string) created {
	t.Helper()
	st, _, b := s.do(t, "POST", "/v2/sandboxes", map[string]string{"X-API-KEY": key, "Content-Type": "application/json"}, []byte(body))
	if st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	var c created
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// envdHeaders are what the SDK sends with every envd request.
func envdHeaders(id, token string) map[string]string {
	return map[string]string{"E2b-Sandbox-Id": id, "E2b-Sandbox-Port": e2b.EnvdPort, "X-Access-Token": token}
}

// unary calls a Connect unary procedure.
func (s *stack) unary(t *testing.T, id, token, proc string, msg string) (int, []byte) {
	t.Helper()
	h := envdHeaders(id, token)
	h["Content-Type"] = "application/json"
	h["Connect-Protocol-Version"] = "1"
	st, _, b := s.do(t, "POST", "/"+proc, h, []byte(msg))
	return st, b
}

// streamed calls a server-streaming procedure and returns its messages
// and the end-of-stream message.
func (s *stack) streamed(t *testing.T, id, token, proc, msg string, extra map[string]string) (int, []json.RawMessage, json.RawMessage) {
	t.Helper()
	h := envdHeaders(id, token)
	h["Content-Type"] = "application/connect+json"
	for k, v := range extra {
		h[k] = v
	}
	var body []byte
	body = append(body, 0)
	body = binary.BigEndian.AppendUint32(body, uint32(len(msg)))
	body = append(body, msg...)
	st, _, b := s.do(t, "POST", "/"+proc, h, body)
	var msgs []json.RawMessage
	var end json.RawMessage
	for len(b) >= 5 {
		n := binary.BigEndian.Uint32(b[1:5])
		if int(n) > len(b)-5 {
			t.Fatalf("truncated envelope in %q", b)
		}
		payload := json.RawMessage(b[5 : 5+n])
		if b[0]&2 != 0 {
			end = payload
		} else {
			msgs = append(msgs, payload)
		}
		b = b[5+n:]
	}
	if len(b) != 0 {
		t.Fatalf("trailing bytes after the envelopes: %q", b)
	}
	return st, msgs, end
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// errorCode reads the code of a Connect error body or end-of-stream.
func errorCode(t *testing.T, b []byte) string {
	t.Helper()
	var v struct {
		Code  string `json:"code"`
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not an error message: %q", b)
	}
	if v.Error != nil {
		return v.Error.Code
	}
	return v.Code
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
