//go:build linux

package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Keys, tenants and scopes apply to MCP exactly as to REST.
func TestAuthAndTenants(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	ka := h.key("a", tenant.Quotas{})
	kb := h.key("b", tenant.Quotas{})
	ro := h.key("a", tenant.Quotas{}, auth.ScopeRead)

	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(key, origin, session string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, h.hs.URL+"/mcp", strings.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		name, key, origin string
		status            int
	}{
		{"no key", "", "", http.StatusUnauthorized},
		{"invalid key", "pdk_notakey", "", http.StatusUnauthorized},
		{"revoked-looking key", ka.Key + "x", "", http.StatusUnauthorized},
		{"cross-site origin", ka.Key, "https://evil.example", http.StatusForbidden},
		{"null origin", ka.Key, "null", http.StatusForbidden},
		{"allowed origin", ka.Key, "https://app.example", http.StatusOK},
		{"valid key (positive control)", ka.Key, "", http.StatusOK},
	} {
		if resp := post(tc.key, tc.origin, ""); resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		} else if tc.status == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
		}
	}
	// Our own Origin check stands without the server's hardening middleware.
	bare := httptest.NewServer(h.srv.Handler(h.e.Auth))
	defer bare.Close()
	req, _ := http.NewRequest(http.MethodPost, bare.URL, strings.NewReader(initBody))
	req.Header.Set("Authorization", "Bearer "+ka.Key)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("bare handler with a cross-site Origin: %v %v", resp, err)
	}

	// A session belongs to the key that opened it.
	csA := h.connectHTTP(ka.Key)
	var ex execResult
	mustOK(t, "exec A", call(t, csA, "exec", map[string]any{"command": "echo secret > /workspace/a.txt; hostname"}, &ex))
	idA := ex.Sandbox
	if resp := post(kb.Key, "", csA.ID()); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("key B reusing key A's session id: status %d, want 403", resp.StatusCode)
	}

	// Tenant B cannot see or touch tenant A's sandbox: "not found".
	csB := h.connectHTTP(kb.Key)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"exec", map[string]any{"sandbox": idA, "command": "cat /workspace/a.txt"}},
		{"file_read", map[string]any{"sandbox": idA, "path": "/workspace/a.txt"}},
		{"file_write", map[string]any{"sandbox": idA, "path": "/workspace/a.txt", "content": "pwned"}},
		{"process_start", map[string]any{"sandbox": idA, "command": "sleep 1"}},
		{"file_list", map[string]any{"sandbox": idA}},
		{"sandbox_delete", map[string]any{"sandbox": idA}},
	} {
		wantError(t, "B "+tc.tool, call(t, csB, tc.tool, tc.args, nil), fmt.Sprintf("No sandbox with id %q", idA))
	}
	var listB struct {
		Sandboxes []struct{ ID string } `json:"sandboxes"`
	}
	mustOK(t, "B sandbox_list", call(t, csB, "sandbox_list", nil, &listB))
	if len(listB.Sandboxes) != 0 {
		t.Fatalf("tenant B sees %+v", listB.Sandboxes)
	}
	// Positive control: A still reaches its sandbox, untouched.
	var cat execResult
	mustOK(t, "A cat", call(t, csA, "exec", map[string]any{"sandbox": idA, "command": "cat /workspace/a.txt"}, &cat))
	if cat.Stdout != "secret\n" {
		t.Fatalf("A's file = %q", cat.Stdout)
	}
	if ev := h.rec.find("exec", "intent", idA); len(ev) != 2 {
		t.Fatalf("exec intents on A's sandbox = %d, want 2 (A's only)", len(ev))
	}

	// Scopes: a read-only key lists but cannot run or create.
	csRO := h.connectHTTP(ro.Key)
	mustOK(t, "RO list", call(t, csRO, "sandbox_list", nil, nil))
	wantError(t, "RO exec", call(t, csRO, "exec", map[string]any{"sandbox": idA, "command": "true"}, nil), `"exec" scope`)
	wantError(t, "RO session sandbox", call(t, csRO, "file_list", nil, nil), "Cannot create this session's sandbox", `"write" scope`)
	mustOK(t, "RO read A's file", call(t, csRO, "file_read", map[string]any{"sandbox": idA, "path": "/workspace/a.txt"}, nil))
}

// The manager's Observer (the audit log) sees MCP actions with the key
// that did them.
func TestAudit(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	k := h.key("b", tenant.Quotas{})
	cs := h.connectHTTP(k.Key)
	var ex execResult
	mustOK(t, "exec", call(t, cs, "exec", map[string]any{"command": "true"}, &ex))
	mustOK(t, "file_write", call(t, cs, "file_write", map[string]any{"path": "x.txt", "content": "x"}, nil))
	mustOK(t, "process_start", call(t, cs, "process_start", map[string]any{"argv": []string{"sleep", "1"}}, nil))
	for _, kind := range []string{"sandbox.create", "exec", "file.write", "process.start"} {
		evs := h.rec.find(kind, "intent", "")
		if len(evs) != 1 {
			t.Fatalf("%s intents = %+v", kind, evs)
		}
		if evs[0].Actor != k.ID || evs[0].Tenant != "b" {
			t.Fatalf("%s recorded as %s/%s, want b/%s", kind, evs[0].Tenant, evs[0].Actor, k.ID)
		}
	}
	if ev := h.rec.find("exec", "intent", ex.Sandbox); fmt.Sprint(ev[0].Data["argv"]) != "[/bin/sh -c true]" {
		t.Fatalf("exec intent data = %v", ev[0].Data)
	}
	// Every HTTP request is recorded too, as REST requests are.
	h.req.mu.Lock()
	defer h.req.mu.Unlock()
	if len(h.req.actors) < 4 || h.req.actors[0] != "b/"+k.ID+" POST /mcp" {
		t.Fatalf("recorded requests = %v", h.req.actors)
	}
}

// Open sessions are capped.
func TestMaxSessions(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{maxSessions: 1})
	k := h.key("a", tenant.Quotas{})
	h.connectHTTP(k.Key)
	tr := &sdk.StreamableClientTransport{Endpoint: h.hs.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{k.Key, http.DefaultTransport}}}
	if cs, err := newClient().Connect(context.Background(), tr, nil); err == nil {
		cs.Close()
		t.Fatal("a second session was opened past the cap of 1")
	} else if !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("second session: %v", err)
	}
}

// Session flooding (resource starvation): a key is held to its share of
// sessions and a tenant to its own, both below the server's, so another
// tenant still opens sessions; a token counts against the key that minted
// it; a closed session frees its slot. Positive control: each key opens
// sessions up to its limit.
func TestSessionLimitsPerKeyAndTenant(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{maxSessions: 10, perTenant: 3, perKey: 2})
	a1, a2 := h.key("a", tenant.Quotas{}, auth.ScopeRead), h.key("a", tenant.Quotas{}, auth.ScopeRead)
	b := h.key("b", tenant.Quotas{}, auth.ScopeRead)
	open := func(key string) (*sdk.ClientSession, error) {
		tr := &sdk.StreamableClientTransport{Endpoint: h.hs.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}}
		cs, err := newClient().Connect(context.Background(), tr, nil)
		if err == nil {
			t.Cleanup(func() { _ = cs.Close() })
		}
		return cs, err
	}
	first := h.connectHTTP(a1.Key)
	h.connectHTTP(a1.Key)
	if _, err := open(a1.Key); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("a key's third session (limit 2): %v", err)
	}
	h.connectHTTP(a2.Key) // the tenant's third
	if _, err := open(a2.Key); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("a tenant's fourth session (limit 3): %v", err)
	}
	// Another tenant is not starved.
	h.connectHTTP(b.Key)
	h.connectHTTP(b.Key)
	// Closing one frees its slot.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var cs *sdk.ClientSession
		if cs, err = open(a1.Key); err == nil {
			_ = cs
			break
		}
	}
	if err != nil {
		t.Fatalf("after a session closed, its key cannot open one: %v", err)
	}
}

// The session sandbox takes the tenant's defaults, and a burst of first
// calls makes one sandbox.
func TestSessionSandbox(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{Defaults: tenant.Defaults{MemoryMB: 256, TimeoutS: 600}})
	cs := h.connectHTTP(k.Key)
	var wg sync.WaitGroup
	ids := make([]string, 6)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"command": "echo $$"}})
			if err != nil || res.IsError {
				t.Errorf("exec: %v %v", err, res)
				return
			}
			ids[i] = res.StructuredContent.(map[string]any)["sandbox"].(string)
		}()
	}
	wg.Wait()
	sbs := h.sessionSandboxes("a")
	if len(sbs) != 1 {
		t.Fatalf("concurrent first calls made %d sandboxes", len(sbs))
	}
	for _, id := range ids {
		if id != sbs[0].ID {
			t.Fatalf("calls ran in %v, want all in %s", ids, sbs[0].ID)
		}
	}
	if sbs[0].Spec.MemoryMB != 256 || sbs[0].Spec.TimeoutS != 600 {
		t.Fatalf("session sandbox spec %+v, want the tenant's defaults", sbs[0].Spec)
	}
	// Deleting it is allowed; the next call gets a fresh one.
	mustOK(t, "delete own", call(t, cs, "sandbox_delete", map[string]any{"sandbox": sbs[0].ID}, nil))
	var ex execResult
	mustOK(t, "exec after delete", call(t, cs, "exec", map[string]any{"command": "true"}, &ex))
	if ex.Sandbox == sbs[0].ID || ex.Sandbox == "" {
		t.Fatalf("after deleting the session sandbox, exec ran in %q", ex.Sandbox)
	}
	// Sandboxes made with sandbox_create outlive the session.
	var made struct{ ID string }
	mustOK(t, "sandbox_create", call(t, cs, "sandbox_create", map[string]any{"memory_mb": 128, "labels": map[string]string{"job": "x"}}, &made))
	var other execResult
	mustOK(t, "exec in created", call(t, cs, "exec", map[string]any{"sandbox": made.ID, "command": "true"}, &other))
	if other.Sandbox != made.ID {
		t.Fatalf("exec ran in %s, want %s", other.Sandbox, made.ID)
	}
	_ = cs.Close()
	eventually(t, "the session sandbox to go", func() bool { return len(h.sessionSandboxes("a")) == 0 })
	if _, err := h.mgr.Get(context.Background(), sandbox.Scope{Tenant: "a", Rights: rights.All}, made.ID); err != nil {
		t.Fatalf("the explicitly created sandbox went with the session: %v", err)
	}
}

// A session sandbox that expired is replaced, and the model is told.
func TestSessionSandboxExpires(t *testing.T) {
	testenv.RequireRoot(t)
	lim := sandbox.DefaultLimits(2)
	lim.Default.TimeoutS = 2
	h := newHarness(t, harnessOptions{limits: &lim})
	k := h.key("a", tenant.Quotas{})
	cs := h.connectHTTP(k.Key)
	var first execResult
	mustOK(t, "exec", call(t, cs, "exec", map[string]any{"command": "touch /workspace/mark"}, &first))
	eventually(t, "the sandbox to expire", func() bool {
		_, err := h.mgr.Get(context.Background(), sandbox.Scope{Tenant: "a", Rights: rights.All}, first.Sandbox)
		return err != nil
	})
	var second execResult
	res := call(t, cs, "exec", map[string]any{"command": "ls /workspace"}, &second)
	mustOK(t, "exec after expiry", res)
	if second.Sandbox == first.Sandbox || strings.Contains(second.Stdout, "mark") {
		t.Fatalf("after expiry: %+v", second)
	}
	if !strings.Contains(text(res), "Note: this session's sandbox "+first.Sandbox) || !strings.Contains(text(res), "gone") {
		t.Fatalf("no note about the replaced sandbox: %s", text(res))
	}
}

// A sandbox-scoped token's sandbox is the session's sandbox.
func TestSandboxToken(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	sb, err := h.mgr.Create(context.Background(), sandbox.Scope{Tenant: "a", Actor: k.ID, Rights: rights.All}, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.e.Auth.Authenticate(context.Background(), k.Key)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := h.e.Auth.MintToken(auth.ScopeOf(p), sb.ID, []auth.Scope{auth.ScopeRead, auth.ScopeExec}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cs := h.connectHTTP(tok.Token)
	var ex execResult
	mustOK(t, "exec", call(t, cs, "exec", map[string]any{"command": "hostname"}, &ex))
	if ex.Sandbox != sb.ID {
		t.Fatalf("token exec ran in %q, want %s", ex.Sandbox, sb.ID)
	}
	if n := len(h.sessionSandboxes("a")); n != 0 {
		t.Fatalf("a token session made %d sandboxes", n)
	}
}

// An idle HTTP session ends on its own, and its sandbox goes with it.
func TestIdleTimeout(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{idle: time.Second})
	cs := h.connectHTTP(h.key("a", tenant.Quotas{}).Key)
	mustOK(t, "exec", call(t, cs, "exec", map[string]any{"command": "true"}, nil))
	if len(h.sessionSandboxes("a")) != 1 {
		t.Fatal("no session sandbox")
	}
	eventually(t, "the idle session's sandbox to be deleted", func() bool { return len(h.sessionSandboxes("a")) == 0 })
}

// port_url builds the URL of the ports route when the server has one.
func TestPortURL(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{ports: true})
	cs := h.connectHTTP(h.key("a", tenant.Quotas{}).Key)
	var out struct {
		Sandbox string `json:"sandbox"`
		URL     string `json:"url"`
	}
	mustOK(t, "port_url", call(t, cs, "port_url", map[string]any{"port": 8080}, &out))
	if want := h.hs.URL + "/v1/sandboxes/" + out.Sandbox + "/ports/8080/?paddock_token=pdt_"; !strings.HasPrefix(out.URL, want) {
		t.Fatalf("url = %q, want %q...", out.URL, want)
	}
	// The link is the REST API's, and its token opens it without a key:
	// nothing listens on the port (502), but the request got past the
	// authentication (no 401) and went to the sandbox.
	resp, err := http.Get(out.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "nothing listens on port 8080") {
		t.Fatalf("the link answered %d %s", resp.StatusCode, body)
	}
}
