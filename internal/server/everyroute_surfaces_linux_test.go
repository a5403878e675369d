package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/rights"
)

// webSockets dials every WebSocket route as a browser page would (the key
// in ?token=, no Authorization header) with a real WebSocket client.
func (w *walk) webSockets(t *testing.T) {
	n := 0
	for _, rt := range w.e.Stack.API.RouteTable() {
		if !rt.WebSocket || rt.Need == 0 {
			continue // no right: meta fails it
		}
		n++
		name := rt.Method + " " + rt.Pattern
		q, _ := request(rt.Method, rt.Pattern)
		status, code, msg := w.dialWS(t, withQuery(fill(rt.Pattern, w.a), q), w.lacking[rt.Need])
		if status != http.StatusForbidden || code != "forbidden" || msg != refusal(rt.Need, false) {
			t.Errorf("%s with a key lacking %s: %d %s %q, want 403 forbidden", name, rt.Need, status, code, msg)
		}
		if status, code, _ = w.dialWS(t, withQuery(fill(rt.Pattern, missingSandbox), q), w.weakest(t, rights.Of(rt.Need), auth.FormatPaddock, false)); status == http.StatusForbidden || code == "forbidden" {
			t.Errorf("%s with only %s: refused (%d %s)", name, rt.Need, status, code)
		}
		if status, code, _ = w.dialWS(t, withQuery(fill(rt.Pattern, w.b), q), w.tokenA); status != http.StatusNotFound || code != "not_found" {
			t.Errorf("%s with a token for another sandbox: %d %s, want 404 not_found", name, status, code)
		}
	}
	if n < 4 {
		t.Errorf("walked %d WebSocket routes; PTY, exec, CDP and live view are at least 4", n)
	}
	t.Logf("walked %d WebSocket routes", n)
}

// dialWS dials path with key; a refused upgrade answers with REST's error.
func (w *walk) dialWS(t *testing.T, path, key string) (status int, code, msg string) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	u := "ws" + strings.TrimPrefix(w.e.Server.URL, "http") + path + sep + "token=" + url.QueryEscape(key)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, u, nil)
	if err == nil {
		_ = c.CloseNow()
		return http.StatusSwitchingProtocols, "", ""
	}
	if res == nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	b, _ := io.ReadAll(res.Body)
	code, msg = restError(b)
	return res.StatusCode, code, msg
}

// e2bError is the control plane's and envd's plain error body.
type e2bError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (w *walk) e2bReq(t *testing.T, pattern, id string, hdr map[string]string, body string) *http.Request {
	t.Helper()
	method, path, _ := strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{sandboxID}", id)
	req, err := http.NewRequest(method, w.e.Server.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

// e2bControl walks the E2B control plane with E2B-format keys in
// X-API-KEY, as E2B's SDKs send them.
func (w *walk) e2bControl(t *testing.T) {
	n := 0
	defer func() { t.Logf("walked %d E2B control routes", n) }()
	for _, rt := range w.e.Stack.E2B.Routes() {
		if rt.Envd || rt.Need == 0 {
			continue // envd: e2bEnvd; no right: meta fails it
		}
		n++
		hdr := func(key string) map[string]string {
			return map[string]string{"X-API-KEY": key, "Content-Type": "application/json"}
		}
		status, b := w.do(t, w.e2bReq(t, rt.Pattern, w.a, hdr(w.lackingE2B[rt.Need]), "{}"))
		var eb e2bError
		_ = json.Unmarshal(b, &eb)
		if status != http.StatusForbidden || eb.Code != http.StatusForbidden || eb.Message != refusal(rt.Need, false) {
			t.Errorf("E2B %s with a key lacking %s: %d %s, want 403 %q", rt.Pattern, rt.Need, status, b, refusal(rt.Need, false))
		}
		okStatus, b := w.do(t, w.e2bReq(t, rt.Pattern, missingSandbox, hdr(w.weakest(t, rights.Of(rt.Need), auth.FormatE2B, false)), "{"))
		if okStatus == http.StatusForbidden {
			t.Errorf("E2B %s with only %s: refused (%s)", rt.Pattern, rt.Need, b)
		}
		if !strings.Contains(rt.Pattern, "{sandboxID}") {
			continue
		}
		method, path, _ := strings.Cut(rt.Pattern, " ")
		_, body := request(method, path)
		status, b = w.do(t, w.e2bReq(t, rt.Pattern, w.b, hdr(w.tokenA), body))
		// What Paddock does not have (501 for any sandbox) tells nothing
		// of b either.
		if status != http.StatusNotFound && !(okStatus == http.StatusNotImplemented && status == okStatus) {
			t.Errorf("E2B %s with a token for another sandbox: %d %s, want 404", rt.Pattern, status, b)
		}
	}
}

// e2bEnvd walks envd's routes with sandbox access tokens, in each
// route's own protocol: plain HTTP, Connect unary, Connect server stream.
func (w *walk) e2bEnvd(t *testing.T) {
	n := 0
	for _, rt := range w.e.Stack.E2B.Routes() {
		if !rt.Envd || rt.Open {
			continue
		}
		n++
		call := func(sandbox, token string, body []byte) (status int, code, msg string) {
			port := e2bEnvdPort
			if rt.Port != "" {
				port = rt.Port // the code interpreter's
			}
			hdr := map[string]string{"E2b-Sandbox-Id": sandbox, "E2b-Sandbox-Port": port, "X-Access-Token": token}
			pattern := rt.Pattern
			switch {
			case rt.Stream:
				hdr["Content-Type"] = "application/connect+json"
				body = envelope(body)
			case strings.HasPrefix(rt.Pattern, "POST /process.") || strings.HasPrefix(rt.Pattern, "POST /filesystem."):
				hdr["Content-Type"] = "application/json"
			default:
				pattern += "?path=/tmp/walk"
				hdr["Content-Type"] = "application/json"
			}
			req := w.e2bReq(t, pattern, "", hdr, string(body))
			status, b := w.do(t, req)
			return status, envdCode(rt.Stream, rt.Pattern, b), envdMsg(rt.Stream, b)
		}
		// The token lacks the route's right; every other scope it has.
		status, code, msg := call(w.a, w.tokenLacking[rt.Need], []byte("{}"))
		if code != "forbidden" || msg != refusal(rt.Need, true) || (!rt.Stream && status != http.StatusForbidden) {
			t.Errorf("envd %s with a token lacking %s: %d %s %q, want forbidden %q", rt.Pattern, rt.Need, status, code, msg, refusal(rt.Need, true))
		}
		// Positive control: a token holding only it, with a request that
		// is no JSON (nothing runs, nothing is written).
		if _, code, msg = call(w.a, w.weakest(t, rights.Of(rt.Need), "", true), []byte("{")); code == "forbidden" {
			t.Errorf("envd %s with only %s: refused (%q)", rt.Pattern, rt.Need, msg)
		}
		if _, code, msg = call(w.b, w.tokenA, []byte("{}")); code != "not_found" {
			t.Errorf("envd %s with a token for another sandbox: %s %q, want not found", rt.Pattern, code, msg)
		}
	}
	if n < 10 {
		t.Errorf("walked %d envd routes: the table looks truncated", n)
	}
	t.Logf("walked %d envd routes", n)
}

const e2bEnvdPort = "49983"

// envelope frames one Connect streaming request message.
func envelope(msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

type connectError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// connectEnd is the error of a Connect stream's end message.
func connectEnd(b []byte) connectError {
	var last connectError
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:5]))
		if 5+n > len(b) {
			break
		}
		if b[0]&2 != 0 {
			var es struct {
				Error *connectError `json:"error"`
			}
			if json.Unmarshal(b[5:5+n], &es) == nil && es.Error != nil {
				last = *es.Error
			}
		}
		b = b[5+n:]
	}
	return last
}

// envdCode is the errs code (forbidden, not_found) of an envd answer,
// whatever its protocol.
func envdCode(stream bool, pattern string, b []byte) string {
	var cc string
	switch {
	case stream:
		cc = connectEnd(b).Code
	case strings.HasPrefix(pattern, "POST /process.") || strings.HasPrefix(pattern, "POST /filesystem."):
		var ce connectError
		_ = json.Unmarshal(b, &ce)
		cc = ce.Code
	default:
		var eb e2bError
		_ = json.Unmarshal(b, &eb)
		switch eb.Code {
		case http.StatusForbidden:
			return "forbidden"
		case http.StatusNotFound:
			return "not_found"
		}
		return ""
	}
	switch cc {
	case "permission_denied":
		return "forbidden"
	case "not_found":
		return "not_found"
	}
	return cc
}

func envdMsg(stream bool, b []byte) string {
	if stream {
		return connectEnd(b).Message
	}
	var eb struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(b, &eb)
	return eb.Message
}

// bearerRT adds a key to every request of an MCP client.
type bearerRT struct{ key string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the MCP SDK's own client to /mcp with key.
func (w *walk) mcpSession(t *testing.T, key string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: w.e.Server.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{key}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "every-route", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toolSchema is what the walk reads of a tool's input schema.
type toolSchema struct {
	Required   []string `json:"required"`
	Properties map[string]struct {
		Type any   `json:"type"`
		Enum []any `json:"enum"`
	} `json:"properties"`
}

// toolArgs fills a tool's required arguments with values of their types
// (the schema check passes; what the values mean is not reached: the
// right is checked first) and aims it at sandbox id.
func toolArgs(t *testing.T, tool *sdk.Tool, id string) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(tool.InputSchema)
	var s toolSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("tool %s: input schema: %v", tool.Name, err)
	}
	args := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		typ, _ := p.Type.(string)
		switch {
		case len(p.Enum) > 0:
			args[name] = p.Enum[0]
		case typ == "integer" || typ == "number":
			args[name] = 1
		case typ == "boolean":
			args[name] = false
		case typ == "array":
			args[name] = []any{}
		case typ == "object":
			args[name] = map[string]any{}
		default:
			args[name] = "walk"
		}
	}
	if _, ok := s.Properties["sandbox"]; ok {
		args["sandbox"] = id
	}
	for k, v := range toolFixtures[tool.Name] {
		args[k] = v
	}
	return args
}

// toolFixtures are arguments that tools check before they call the
// services (which check the rights): with them, a refusal can only be the
// missing right, and a positive control changes nothing.
var toolFixtures = map[string]map[string]any{
	"sandbox_create": {"template": "no-such-template-walk"},
	"exec":           {"command": "true"},
	"process_start":  {"command": "true"},
	"browser_click":  {"selector": "a"},
	"browser_type":   {"selector": "a"},
	"browser_press":  {"key": "Enter"},
}

func hasSandboxArg(t *testing.T, tool *sdk.Tool) bool {
	_, ok := toolArgs(t, tool, "x")["sandbox"]
	return ok
}

// toolText is a tool result's text and whether it is an error.
func (w *walk) callTool(t *testing.T, cs *sdk.ClientSession, tool *sdk.Tool, id string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool.Name, Arguments: toolArgs(t, tool, id)})
	if err != nil {
		return true, "protocol error: " + err.Error()
	}
	var text bytes.Buffer
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return res.IsError, text.String()
}

// mcpTools calls every tool the server lists, once for each right it
// declares with the key lacking that right.
func (w *walk) mcpTools(t *testing.T) {
	declared := map[string]rights.Set{}
	for _, ti := range w.e.Stack.MCP.Tools() {
		declared[ti.Name] = ti.Need
	}
	sessions := map[string]*sdk.ClientSession{}
	session := func(key string) *sdk.ClientSession {
		if sessions[key] == nil {
			sessions[key] = w.mcpSession(t, key)
		}
		return sessions[key]
	}
	admin := session(w.admin)
	list, err := admin.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tool := range list.Tools {
		listed = append(listed, tool.Name)
		need, ok := declared[tool.Name]
		if !ok {
			t.Errorf("MCP lists tool %s, which Server.Tools does not (no declared right)", tool.Name)
			continue
		}
		for _, r := range rights.Every() {
			if !need.Has(r) {
				continue
			}
			isErr, text := w.callTool(t, session(w.lacking[r]), tool, w.a)
			if !isErr || !strings.Contains(strings.ToLower(text), refusal(r, false)) {
				t.Errorf("MCP %s with a key lacking %s: error %v %q, want %q", tool.Name, r, isErr, text, refusal(r, false))
			}
		}
		if _, text := w.callTool(t, session(w.weakest(t, need, auth.FormatPaddock, false)), tool, missingSandbox); strings.Contains(text, "lacks the") {
			t.Errorf("MCP %s with only %s: refused (%q)", tool.Name, need, text)
		}
		if hasSandboxArg(t, tool) {
			isErr, text := w.callTool(t, session(w.tokenA), tool, w.b)
			if low := strings.ToLower(text); !isErr || !(strings.Contains(low, "no sandbox") || strings.Contains(low, "not found")) {
				t.Errorf("MCP %s with a token for another sandbox: error %v %q, want not found", tool.Name, isErr, text)
			}
		}
	}
	t.Logf("called %d MCP tools", len(listed))
	sort.Strings(listed)
	if len(listed) != len(declared) {
		t.Errorf("MCP lists %d tools, Server.Tools %d: %q", len(listed), len(declared), listed)
	}
}
