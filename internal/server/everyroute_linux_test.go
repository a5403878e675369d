package server_test

// Every route, every right (docs/architecture.md): the house serve builds,
// walked route by route on every surface, with the strongest key lacking
// each right the route declares. The route lists come from the surfaces
// themselves (api.Server.RouteTable, e2b.Server.Routes, mcp.Server.Tools
// and the MCP server's own tools/list), so a route added later is walked
// without anyone editing this file — and one added without a declared
// right fails the meta check.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/e2b"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

const (
	walkPortsDomain = "ports.walk.test"
	// missingSandbox is well formed and names no sandbox: positive controls
	// aim at it, so that a key holding every right changes nothing (a 404
	// is not a refusal, and the rights are checked before the lookup).
	missingSandbox = "sb_doesnotexist000000000"
)

// walk is the house and the credentials the walk uses.
type walk struct {
	t    *testing.T
	e    *testenv.Env
	a, b string // two running sandboxes of the default tenant
	// lacking[r] is the strongest key of the default tenant without r:
	// every scope but admin (which grants everything) and r's own.
	lacking    map[rights.Right]string
	lackingE2B map[rights.Right]string // the same, E2B-format keys
	admin      string                  // holds every right
	adminE2B   string
	// tokenA holds read, write and exec on sandbox a only;
	// tokenLacking[r] holds those scopes but r's, on a.
	tokenA       string
	tokenLacking map[rights.Right]string
	// holding makes (once) the weakest key or token holding a set of
	// rights: positive controls use it, so that a route whose services
	// need more than it declares fails the walk.
	holding map[string]string
}

// weakest returns the key (format auth.FormatPaddock or FormatE2B) or,
// with token, the token for sandbox a, holding only the scopes that grant
// need.
func (w *walk) weakest(t *testing.T, need rights.Set, format string, token bool) string {
	t.Helper()
	var scopes []auth.Scope
	seen := map[string]bool{}
	for _, r := range rights.Every() {
		if need.Has(r) && !seen[r.Scope()] {
			seen[r.Scope()] = true
			scopes = append(scopes, auth.Scope(r.Scope()))
		}
	}
	if seen["admin"] {
		scopes = []auth.Scope{wire.ScopeAdmin}
	}
	id := fmt.Sprint(scopes, format, token)
	if k, ok := w.holding[id]; ok {
		return k
	}
	ctx := context.Background()
	if token {
		tok, err := w.e.Auth.MintToken(w.e.Scope, w.a, scopes, time.Hour)
		if err != nil {
			t.Fatalf("mint token %v: %v", scopes, err)
		}
		w.holding[id] = tok.Token
	} else {
		k, err := w.e.Auth.CreateKey(ctx, w.e.Scope, auth.KeyRequest{Tenant: auth.DefaultTenant, Scopes: scopes, Format: format, Name: "walk"})
		if err != nil {
			t.Fatalf("create key %v: %v", scopes, err)
		}
		w.holding[id] = k.Key
	}
	return w.holding[id]
}

func newWalk(t *testing.T) *walk {
	testenv.RequireRoot(t)
	e := testenv.New(t, testenv.Options{PortsDomain: walkPortsDomain})
	w := &walk{t: t, e: e, admin: e.AdminKey, lacking: map[rights.Right]string{}, lackingE2B: map[rights.Right]string{},
		tokenLacking: map[rights.Right]string{}, holding: map[string]string{}}
	w.a = e.Create(sandbox.Spec{}).ID
	w.b = e.Create(sandbox.Spec{}).ID
	ctx := context.Background()
	key := func(format string, scopes ...auth.Scope) string {
		k, err := e.Auth.CreateKey(ctx, e.Scope, auth.KeyRequest{Tenant: auth.DefaultTenant, Scopes: scopes, Format: format, Name: "walk"})
		if err != nil {
			t.Fatalf("create key %v: %v", scopes, err)
		}
		return k.Key
	}
	w.adminE2B = key(auth.FormatE2B, wire.ScopeAdmin)
	token := func(scopes ...auth.Scope) string {
		tok, err := e.Auth.MintToken(e.Scope, w.a, scopes, time.Hour)
		if err != nil {
			t.Fatalf("mint token %v: %v", scopes, err)
		}
		return tok.Token
	}
	plain := []auth.Scope{wire.ScopeRead, wire.ScopeWrite, wire.ScopeExec}
	w.tokenA = token(plain...)
	byScope := map[string]string{}
	for _, r := range rights.Every() {
		var scopes []auth.Scope
		for _, s := range plain {
			if string(s) != r.Scope() {
				scopes = append(scopes, s)
			}
		}
		if sc := rights.FromScopes(scopeNames(scopes)); sc.Has(r) {
			t.Fatalf("a key of scopes %v holds %s: the walk cannot build a key lacking it", scopes, r)
		}
		name := fmt.Sprint(scopes)
		if byScope[name] == "" {
			byScope[name] = key(auth.FormatPaddock, scopes...)
			byScope[name+"e2b"] = key(auth.FormatE2B, scopes...)
			byScope[name+"token"] = token(scopes...)
		}
		w.lacking[r], w.lackingE2B[r], w.tokenLacking[r] = byScope[name], byScope[name+"e2b"], byScope[name+"token"]
	}
	return w
}

func scopeNames(ss []auth.Scope) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// refusal is what every surface says of a missing right r (rights.Need).
func refusal(r rights.Right, token bool) string {
	who := "key"
	if token {
		who = "token"
	}
	return fmt.Sprintf("this %s lacks the %q scope", who, r.Scope())
}

// TestEveryRouteEveryRight walks every surface of serve's house.
func TestEveryRouteEveryRight(t *testing.T) {
	w := newWalk(t)
	t.Run("meta", w.meta)
	t.Run("REST", w.rest)
	t.Run("REST/ports", w.portHosts)
	t.Run("WebSocket", w.webSockets)
	t.Run("E2B/control", w.e2bControl)
	t.Run("E2B/envd", w.e2bEnvd)
	t.Run("MCP", w.mcpTools)
}

// meta: every route of every surface declares the right it needs; the
// routes open to anyone (or to any credential) are a short, fixed list;
// every handler mounted on the API's port is a surface this test walks.
func (w *walk) meta(t *testing.T) {
	s := w.e.Stack
	if s.API == nil || s.E2B == nil || s.MCP == nil || s.Browser == nil {
		t.Fatalf("the house lacks a surface (API %v, E2B %v, MCP %v, browser %v)", s.API != nil, s.E2B != nil, s.MCP != nil, s.Browser != nil)
	}
	var public []string
	for _, rt := range s.API.RouteTable() {
		switch {
		case rt.Public:
			public = append(public, rt.Method+" "+rt.Pattern)
		case rt.Need == 0:
			t.Errorf("REST route %s %s declares no right", rt.Method, rt.Pattern)
		case rt.Need.String() == "unknown":
			t.Errorf("REST route %s %s declares an unknown right %d", rt.Method, rt.Pattern, rt.Need)
		}
	}
	sort.Strings(public)
	if want := []string{"GET /healthz", "GET /openapi.json"}; !slices.Equal(public, want) {
		t.Errorf("public REST routes are %q, want exactly %q", public, want)
	}
	for _, rt := range s.E2B.Routes() {
		switch {
		case rt.Open && (rt.Pattern != "GET /health" || !rt.Envd):
			t.Errorf("E2B route %s needs no right; only envd's GET /health may", rt.Pattern)
		case !rt.Open && rt.Need == 0:
			t.Errorf("E2B route %s declares no right", rt.Pattern)
		}
	}
	for _, tool := range s.MCP.Tools() {
		if tool.Need == 0 {
			t.Errorf("MCP tool %s declares no right", tool.Name)
		}
	}
	if len(s.MCP.Tools()) == 0 || len(s.E2B.Routes()) == 0 {
		t.Error("a surface lists no routes: the walk would prove nothing")
	}
	// Mounted handlers declare rights in their own tables; a mount this
	// test does not walk would be a surface nobody checks.
	walked := map[string]bool{"/mcp": true}
	for _, p := range e2b.MountPatterns {
		walked[p] = true
	}
	for _, p := range s.API.MountPatterns() {
		if !walked[p] {
			t.Errorf("a handler is mounted at %s, which the every-route test does not walk", p)
		}
	}
}

// do sends one request and returns its status and body (bounded).
func (w *walk) do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, b
}

// restError reads REST's error body.
func restError(b []byte) (code, msg string) {
	var eb wire.ErrorBody
	_ = json.Unmarshal(b, &eb)
	return eb.Error.Code, eb.Error.Message
}

// fill makes a concrete path of a REST pattern aimed at sandbox id.
func fill(pattern, id string) string {
	r := strings.NewReplacer("{id}", id, "{pid}", "1", "{tab}", "1", "{target}", "page1", "{name}", auth.DefaultTenant,
		"{port}", "8080", "{path...}", "", "{ctx}", "c1")
	return r.Replace(pattern)
}

// wellFormed is, for the routes of a sandbox that check their request's
// shape before they look the sandbox up, a query and body that pass that
// check: aimed at another sandbox, the only possible answer is then 404.
// A route missing here and answering 400 fails the walk, which names it.
var wellFormed = map[string][2]string{
	"POST /exec":                          {"", `{"cmd":["true"]}`},
	"GET /exec/ws":                        {"cmd=true", ""},
	"GET /files":                          {"path=/tmp/walk", ""},
	"PUT /files":                          {"path=/tmp/walk", "walk"},
	"DELETE /files":                       {"path=/tmp/walk", ""},
	"GET /files/stat":                     {"path=/tmp/walk", ""},
	"GET /files/lines":                    {"path=/tmp/walk", ""},
	"POST /files/mkdir":                   {"", `{"path":"/tmp/walk"}`},
	"POST /files/move":                    {"", `{"from":"/tmp/walk","to":"/tmp/walk2"}`},
	"POST /files/edit":                    {"", `{"path":"/tmp/walk","old_string":"a","new_string":"b"}`},
	"GET /files/find":                     {"pattern=*", ""},
	"GET /files/search":                   {"query=walk", ""},
	"POST /processes":                     {"", `{"cmd":["true"]}`},
	"POST /processes/{pid}/resize":        {"", `{"rows":24,"cols":80}`},
	"POST /code":                          {"", `{"code":"1+1"}`},
	"POST /snapshots":                     {"", `{"name":"walk"}`},
	"POST /hibernate":                     {"", ""}, // no body: a lifecycle action
	"POST /fork":                          {"", `{"count":1,"memory":true}`},
	"POST /v1/volumes":                    {"", `{"name":"walk","size_mb":16}`},
	"GET /v1/volumes/{name}/files":        {"path=/walk", ""},
	"PUT /v1/volumes/{name}/files":        {"path=/walk", "walk"},
	"DELETE /v1/volumes/{name}/files":     {"path=/walk", ""},
	"GET /v1/volumes/{name}/files/stat":   {"path=/walk", ""},
	"GET /v1/volumes/{name}/files/list":   {"path=/", ""},
	"POST /v1/volumes/{name}/files/mkdir": {"", `{"path":"/walk"}`},
	"POST /sandboxes/{sandboxID}/timeout": {"", `{"timeout":60}`}, // E2B's control plane
	// Template routes (not a sandbox's): well-formed, so a refusal can
	// only be the right's.
	"POST /v1/templates/pull":        {"", `{"ref":"127.0.0.1:1/walk:1","name":"walk"}`},
	"POST /v1/templates/{name}/push": {"", `{"ref":"127.0.0.1:1/walk:1"}`},
	"POST /v1/templates/build":       {"name=walk", ""},
	"POST /v1/templates/import":      {"name=walk", ""},
}

// request is the well-formed query and body of a route (method, pattern).
func request(method, pattern string) (query, body string) {
	suffix := strings.TrimPrefix(pattern, "/v1/sandboxes/{id}")
	if f, ok := wellFormed[method+" "+suffix]; ok {
		return f[0], f[1]
	}
	return "", "{}"
}

// withQuery appends q to path.
func withQuery(path, q string) string {
	if q == "" {
		return path
	}
	return path + "?" + q
}

// sandboxPattern: the route acts on the sandbox its {id} names.
func sandboxPattern(p string) bool { return strings.HasPrefix(p, "/v1/sandboxes/{id}") }

func (w *walk) restReq(t *testing.T, method, path, key, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, w.e.Server.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// rest walks the REST route table: each route with the key lacking its
// right (403 forbidden, naming that scope), with a key holding every
// right (not refused), and — for a sandbox's routes — with a token for
// sandbox a aimed at sandbox b (404).
func (w *walk) rest(t *testing.T) {
	n := 0
	for _, rt := range w.e.Stack.API.RouteTable() {
		if rt.Public || rt.WebSocket || rt.Need == 0 {
			continue // WebSockets: webSockets, with a WebSocket client; no right: meta fails it
		}
		n++
		name := rt.Method + " " + rt.Pattern
		// Refused: the request is well formed, so the missing right is
		// the only possible refusal (the gate answers before the body is
		// read; the service would refuse it before any lookup).
		q, body := request(rt.Method, rt.Pattern)
		status, b := w.do(t, w.restReq(t, rt.Method, withQuery(fill(rt.Pattern, w.a), q), w.lacking[rt.Need], body))
		if !w.refused(status, b, refusal(rt.Need, false), rt.Method) {
			t.Errorf("%s with a key lacking %s: %d %s, want 403 forbidden %q", name, rt.Need, status, b, refusal(rt.Need, false))
		}
		// Positive control: the weakest key holding the right, aimed at no
		// sandbox (or, off a sandbox, with a body that is no JSON), so that
		// nothing changes: anything but 403.
		if !sandboxPattern(rt.Pattern) {
			body = "{"
		}
		status, b = w.do(t, w.restReq(t, rt.Method, withQuery(fill(rt.Pattern, missingSandbox), q), w.weakest(t, rights.Of(rt.Need), auth.FormatPaddock, false), body))
		if code, _ := restError(b); status == http.StatusForbidden || code == "forbidden" {
			t.Errorf("%s with only %s: refused (%d %s)", name, rt.Need, status, b)
		}
		if sandboxPattern(rt.Pattern) {
			w.restToken(t, name, rt.Method, rt.Pattern, rt.Need)
		}
	}
	if n < 50 {
		t.Errorf("walked %d REST routes: the table looks truncated", n)
	}
	t.Logf("walked %d REST routes", n)
}

// restToken: a token for sandbox a is refused its own missing right on
// a, and told sandbox b does not exist.
func (w *walk) restToken(t *testing.T, name, method, pattern string, need rights.Right) {
	t.Helper()
	q, body := request(method, pattern)
	if tok, ok := w.tokenLacking[need]; ok && need.Scope() != "admin" {
		status, b := w.do(t, w.restReq(t, method, withQuery(fill(pattern, w.a), q), tok, body))
		if !w.refused(status, b, refusal(need, true), method) {
			t.Errorf("%s with a token lacking %s: %d %s, want 403 forbidden", name, need, status, b)
		}
	}
	status, b := w.do(t, w.restReq(t, method, withQuery(fill(pattern, w.b), q), w.tokenA, body))
	if code, _ := restError(b); status != http.StatusNotFound || (code != "not_found" && method != http.MethodHead) {
		t.Errorf("%s with a token for another sandbox: %d %s, want 404 not_found", name, status, b)
	}
}

// refused: REST's refusal for a missing right, with the message naming
// the scope (a HEAD answer has no body to read).
func (w *walk) refused(status int, b []byte, want, method string) bool {
	if status != http.StatusForbidden {
		return false
	}
	if method == http.MethodHead {
		return len(b) == 0
	}
	code, msg := restError(b)
	return code == "forbidden" && msg == want
}

// portPatternOf is the pattern of the port proxy's routes.
func portPatternOf(w *walk) string {
	for _, rt := range w.e.Stack.API.RouteTable() {
		if rt.Port {
			return rt.Pattern
		}
	}
	w.t.Fatal("no port route in the table")
	return ""
}

// portHosts walks the ports on their own hosts ({port}-{id}.{domain}),
// which no route pattern names: the right is the port route's.
func (w *walk) portHosts(t *testing.T) {
	var need rights.Right
	for _, rt := range w.e.Stack.API.RouteTable() {
		if rt.Port {
			need = rt.Need
		}
	}
	if need == 0 {
		t.Fatal("no port route in the table")
	}
	req := func(id, key string) *http.Request {
		r := w.restReq(t, http.MethodGet, "/", key, "")
		r.Host = "8080-" + id + "." + walkPortsDomain
		return r
	}
	// Something listens on sandbox a's port, so that a refusal is not a
	// 502 in disguise and the positive control reaches it.
	ctx := context.Background()
	if _, err := w.e.Client.StartProcess(ctx, w.a, client.ProcessRequest{Cmd: []string{"python3", "-m", "http.server", "8080",
		"--bind", "127.0.0.1", "--directory", "/tmp"}}); err != nil {
		t.Fatalf("start a port server: %v", err)
	}
	exec := w.weakest(t, rights.Of(need), auth.FormatPaddock, false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, b := w.do(t, w.restReq(t, http.MethodGet, fill(portPatternOf(w), w.a), exec, ""))
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the port server never answered through the proxy: %d %s", status, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if status, b := w.do(t, req(w.a, exec)); status != http.StatusOK {
		t.Errorf("port host with only %s, something listening: %d %s, want 200", need, status, b)
	}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		status, b := w.do(t, w.restReq(t, m, fill(portPatternOf(w), w.a), w.lacking[need], ""))
		if !w.refused(status, b, refusal(need, false), m) {
			t.Errorf("%s port path with a key lacking %s, something listening: %d %s", m, need, status, b)
		}
	}
	status, b := w.do(t, req(w.a, w.lacking[need]))
	if code, msg := restError(b); status != http.StatusForbidden || code != "forbidden" || msg != refusal(need, false) {
		t.Errorf("port host with a key lacking %s: %d %s %q", need, status, code, msg)
	}
	status, b = w.do(t, req(missingSandbox, w.weakest(t, rights.Of(need), auth.FormatPaddock, false)))
	if code, _ := restError(b); status == http.StatusForbidden || code == "forbidden" {
		t.Errorf("port host with only %s: refused (%d %s)", need, status, b)
	}
	status, b = w.do(t, req(w.b, w.tokenA))
	if code, _ := restError(b); status != http.StatusNotFound || code != "not_found" {
		t.Errorf("port host with a token for another sandbox: %d %s, want 404", status, b)
	}
}
