//go:build linux

package hostile

// Group: API and auth. The caller is untrusted too: another tenant, a
// leaked or stale credential, a browser page, a client that floods or
// stalls.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/testenv"
)

// tenantKey creates tenant name (with quotas) and a key of it with scopes,
// through the admin REST API.
func (e *env) tenantKey(name string, q client.Quotas, scopes ...client.Scope) client.CreatedKey {
	e.t.Helper()
	ctx := ctxT(e.t, time.Minute)
	if _, err := e.Client.CreateTenant(ctx, name, q); err != nil {
		e.t.Fatalf("create tenant %s: %v", name, err)
	}
	if len(scopes) == 0 {
		scopes = []client.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}
	}
	k, err := e.Client.CreateKey(ctx, client.KeyRequest{Tenant: name, Scopes: scopes})
	if err != nil {
		e.t.Fatalf("create key: %v", err)
	}
	return k
}

// as is a client with another credential.
func (e *env) as(cred string) *client.Client { return client.New(e.Server.URL, cred) }

func missingID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "sb-" + base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding).EncodeToString(b[:])
}

// reply is an answer reduced to what a caller can tell apart; the sandbox
// id in a message is replaced by ID.
type reply struct {
	status  int
	code    string
	message string
}

var paramRE = regexp.MustCompile(`\{[A-Za-z_]+(\.\.\.)?\}`)

// send makes one request to a route pattern with the sandbox id filled in
// (other parameters "1"), with a 3 s limit: a stream that opens counts as
// an answer of its own.
func send(t *testing.T, base, method, pattern, id, cred string) reply {
	t.Helper()
	p := paramRE.ReplaceAllString(strings.Replace(pattern, "{id}", id, 1), "1")
	var body io.Reader
	if method == "POST" || method == "PUT" {
		body = strings.NewReader("{}")
	}
	// Well-formed requests where the route checks its input first, so that
	// the owner's control reaches the sandbox.
	if k, ok := wellFormed[method+" "+pattern]; ok {
		p += k.query
		if k.body != "" {
			body = strings.NewReader(k.body)
		}
	} else if strings.Contains(pattern, "/files") && (method != "POST" || strings.HasSuffix(pattern, "/archive")) {
		p += "?path=/workspace/probe"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, base+p, body)
	req.Header.Set("Authorization", "Bearer "+cred)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{status: -1, code: "no answer within 3s"}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(b, &eb)
	return reply{status: resp.StatusCode, code: eb.Error.Code, message: strings.ReplaceAll(eb.Error.Message, id, "ID")}
}

// wellFormed are valid queries or bodies for routes that validate them
// before looking the sandbox up.
var wellFormed = map[string]struct{ query, body string }{
	"POST /v1/sandboxes/{id}/exec":                   {body: `{"cmd":["true"]}`},
	"POST /v1/sandboxes/{id}/code":                   {body: `{"code":"1+1"}`},
	"POST /v1/sandboxes/{id}/snapshots":              {body: `{"name":"walk"}`},
	"POST /v1/sandboxes/{id}/hibernate":              {body: ""}, // a lifecycle action: no body
	"POST /v1/sandboxes/{id}/fork":                   {body: `{"count":1,"memory":true}`},
	"POST /v1/volumes":                               {body: `{"name":"walk","size_mb":16}`},
	"GET /v1/volumes/{name}/files":                   {query: "?path=/walk"},
	"PUT /v1/volumes/{name}/files":                   {query: "?path=/walk", body: "walk"},
	"DELETE /v1/volumes/{name}/files":                {query: "?path=/walk"},
	"GET /v1/volumes/{name}/files/stat":              {query: "?path=/walk"},
	"GET /v1/volumes/{name}/files/list":              {query: "?path=/"},
	"POST /v1/volumes/{name}/files/mkdir":            {body: `{"path":"/walk"}`},
	"POST /v1/sandboxes/{id}/processes":              {body: `{"cmd":["true"]}`},
	"POST /v1/sandboxes/{id}/processes/{pid}/resize": {body: `{"rows":24,"cols":80}`},
	"GET /v1/sandboxes/{id}/exec/ws":                 {query: "?cmd=true"},
	"GET /v1/sandboxes/{id}/files/find":              {query: "?pattern=*"},
	"GET /v1/sandboxes/{id}/files/search":            {query: "?query=x&path=/workspace"},
	"POST /v1/sandboxes/{id}/files/mkdir":            {body: `{"path":"/workspace/d"}`},
	"POST /v1/sandboxes/{id}/files/move":             {body: `{"from":"/workspace/a","to":"/workspace/b"}`},
	"POST /v1/sandboxes/{id}/files/edit":             {body: `{"path":"/workspace/a","old_string":"a","new_string":"b"}`},
	// Template routes name no sandbox (a tenant's templates are checked
	// by TestTemplateTenancy); kept well-formed for any walk of every route.
	"POST /v1/templates/pull":        {body: `{"ref":"127.0.0.1:1/walk:1","name":"walk"}`},
	"POST /v1/templates/{name}/push": {body: `{"ref":"127.0.0.1:1/walk:1"}`},
	"POST /v1/templates/build":       {query: "?name=walk"},
	"POST /v1/templates/import":      {query: "?name=walk"},
}

// Another tenant, on every route that names a sandbox (read from the
// server's own route table, so routes added later are covered): the
// answer is exactly the one for an id never issued — 404, never 403.
func TestAPICrossTenantEveryRoute(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	owner := e.tenantKey("owner", client.Quotas{})
	intruder := e.tenantKey("intruder", client.Quotas{})
	sb, err := e.as(owner.Key).Create(ctxT(t, time.Minute), client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, rt := range api.New(api.Options{Manager: e.Manager}).Routes() {
		if method, pattern, _ := strings.Cut(rt, " "); strings.HasPrefix(pattern, "/v1/sandboxes/{id}") {
			if !(method == "DELETE" && pattern == "/v1/sandboxes/{id}") {
				routes = append(routes, rt)
			}
		}
	}
	routes = append(routes, "DELETE /v1/sandboxes/{id}") // the owner's control deletes it: last
	if len(routes) < 10 {
		t.Fatalf("only %d sandbox routes: %v", len(routes), routes)
	}
	missing := missingID()
	shown, off := 0, 0
	for _, rt := range routes {
		method, pattern, _ := strings.Cut(rt, " ")
		got := send(t, e.Server.URL, method, pattern, sb.ID, intruder.Key)
		want := send(t, e.Server.URL, method, pattern, missing, intruder.Key)
		if got != want {
			t.Errorf("%s: another tenant's sandbox answers %+v, an id never issued %+v", rt, got, want)
		}
		if got.status == 403 {
			t.Errorf("%s: another tenant's sandbox answers 403 (its existence leaks)", rt)
		}
		// Control: the owner's request reaches the sandbox.
		ctl := send(t, e.Server.URL, method, pattern, sb.ID, owner.Key)
		switch {
		case ctl != send(t, e.Server.URL, method, pattern, missing, owner.Key):
			shown++
		case ctl.status == http.StatusNotImplemented:
			off++ // a capability this stack does not run (the browser): same answer for everyone
		default:
			t.Errorf("%s: positive control: the owner's request does not reach its sandbox (%+v, as for a missing id)", rt, ctl)
		}
	}
	t.Logf("%d routes; the owner's control reaches the sandbox on %d; %d answer 501 (capability not in this stack) for everyone", len(routes), shown, off)
	e.stillServes()
	e.audited("the intruder's refused requests", audit.Query{Action: audit.ActionHTTP, Actor: intruder.ID}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && r.Status == 404
	})
}

// A sandbox token kept after its sandbox is deleted: useless (404;
// sandbox ids are never reused).
func TestAPITokenAfterDelete(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	tok, err := e.Client.CreateToken(ctxT(t, time.Minute), id, []client.Scope{auth.ScopeRead, auth.ScopeExec}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tc := e.as(tok.Token)
	// Control: the token works while the sandbox lives.
	if res, err := tc.Exec(ctxT(t, time.Minute), id, client.ExecRequest{Cmd: []string{"true"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("positive control: the token does not work on its live sandbox: %v", err)
	}
	if err := e.Client.Delete(ctxT(t, time.Minute), id); err != nil {
		t.Fatal(err)
	}
	_, err = tc.Exec(ctxT(t, time.Minute), id, client.ExecRequest{Cmd: []string{"true"}})
	if !client.IsNotFound(err) {
		t.Fatalf("a token of a deleted sandbox: want 404, got %v", err)
	}
	if _, err := tc.Get(ctxT(t, time.Minute), id); !client.IsNotFound(err) {
		t.Fatalf("a token of a deleted sandbox (get): want 404, got %v", err)
	}
	e.stillServes()
	e.httpAudited("POST /v1/sandboxes/{id}/exec", 404)
}

// A sandbox token an agent left inside its sandbox: the sandbox cannot
// reach the control plane with it (no route to the API), and whoever
// carries it out reaches that one sandbox and nothing else.
func TestAPILeakedTokenAgainstControlPlane(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	other := e.sandbox(client.Spec{})
	tok, err := e.Client.CreateToken(ctxT(t, time.Minute), id, []client.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.WriteFile(ctxT(t, time.Minute), id, client.WriteRequest{Path: "/workspace/.token"}, strings.NewReader(tok.Token), int64(len(tok.Token))); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(e.Server.URL)
	// Control: natively the API's address answers.
	if n := native(t, "connect", u.Host); !n.OK {
		t.Fatalf("positive control: natively connecting to the API at %s: %+v", u.Host, n)
	}
	e.installProbe(id)
	if r, _ := e.probeIn(id, "", "connect", u.Host); r.OK {
		t.Fatalf("the sandbox reached the control plane's API at %s", u.Host)
	}
	// The token as found inside the sandbox.
	found := strings.TrimSpace(e.sh(id, "", "cat /workspace/.token").Stdout)
	if found != tok.Token {
		t.Fatalf("the planted token reads back as %q", found)
	}
	tc := e.as(found)
	ctx := ctxT(t, time.Minute)
	if _, err := tc.Get(ctx, id); err != nil {
		t.Fatalf("positive control: the token reaches its own sandbox: %v", err)
	}
	for what, err := range map[string]error{
		"create a sandbox": func() error { _, err := tc.Create(ctx, client.Spec{}); return err }(),
		"list keys":        func() error { _, err := tc.ListKeys(ctx, ""); return err }(),
		"create a key":     func() error { _, err := tc.CreateKey(ctx, client.KeyRequest{Tenant: "default"}); return err }(),
		"mint a token": func() error {
			_, err := tc.CreateToken(ctx, id, []client.Scope{auth.ScopeRead}, time.Minute)
			return err
		}(),
		"read the audit": func() error { _, err := tc.Audit(ctx, client.AuditQuery{}); return err }(),
		"list tenants":   func() error { _, err := tc.ListTenants(ctx); return err }(),
	} {
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 403 {
			t.Errorf("leaked token: %s: want 403, got %v", what, err)
		}
	}
	if _, err := tc.Exec(ctx, other, client.ExecRequest{Cmd: []string{"true"}}); !client.IsNotFound(err) {
		t.Errorf("leaked token on another sandbox: want 404, got %v", err)
	}
	// Control for all of the above: the admin key does them.
	if _, err := e.Client.ListKeys(ctx, ""); err != nil {
		t.Fatal(err)
	}
	e.stillServes(id)
	e.httpAudited("POST /v1/sandboxes/{id}/exec", 404)
	e.execAudited(id, "connect")
}

// A revoked key, and tokens it minted: 401 at once.
func TestAPIRevokedKey(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	k := e.tenantKey("acme", client.Quotas{})
	kc := e.as(k.Key)
	id, err := kc.Create(ctxT(t, time.Minute), client.Spec{})
	if err != nil {
		t.Fatalf("positive control: the key works: %v", err)
	}
	tok, err := kc.CreateToken(ctxT(t, time.Minute), id.ID, []client.Scope{auth.ScopeRead}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.as(tok.Token).Get(ctxT(t, time.Minute), id.ID); err != nil {
		t.Fatalf("positive control: the token works: %v", err)
	}
	if err := e.Client.RevokeKey(ctxT(t, time.Minute), k.ID); err != nil {
		t.Fatal(err)
	}
	for who, c := range map[string]*client.Client{"key": kc, "its token": e.as(tok.Token)} {
		var ce *client.Error
		if _, err := c.Get(ctxT(t, time.Minute), id.ID); !errors.As(err, &ce) || ce.Status != 401 {
			t.Errorf("revoked %s: want 401, got %v", who, err)
		}
	}
	e.stillServes()
	if !strings.Contains(e.MetricsText(), `status="401"`) {
		t.Error("the refused requests are not counted in the metrics")
	}
	e.audited("the revocation", audit.Query{Action: audit.ActionHTTP}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && bytes.Contains(r.Result, []byte(`"route":"/v1/keys/{id}"`)) && r.Status/100 == 2
	})
}

// A key used beyond its scopes: 403 before the handler runs.
func TestAPIScopeEscalation(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	ro, err := e.Client.CreateKey(ctxT(t, time.Minute), client.KeyRequest{Tenant: "default", Scopes: []client.Scope{auth.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	rc := e.as(ro.Key)
	ctx := ctxT(t, time.Minute)
	if _, err := rc.Get(ctx, id); err != nil {
		t.Fatalf("positive control: the read key reads: %v", err)
	}
	for what, err := range map[string]error{
		"exec":   func() error { _, err := rc.Exec(ctx, id, client.ExecRequest{Cmd: []string{"true"}}); return err }(),
		"create": func() error { _, err := rc.Create(ctx, client.Spec{}); return err }(),
		"delete": rc.Delete(ctx, id),
		"create key": func() error {
			_, err := rc.CreateKey(ctx, client.KeyRequest{Tenant: "default", Scopes: []client.Scope{auth.ScopeAdmin}})
			return err
		}(),
		"write file": func() error {
			_, err := rc.WriteFile(ctx, id, client.WriteRequest{Path: "/workspace/x"}, strings.NewReader("x"), 1)
			return err
		}(),
		"mint an exec token": func() error {
			_, err := rc.CreateToken(ctx, id, []client.Scope{auth.ScopeExec}, time.Minute)
			return err
		}(),
	} {
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 403 {
			t.Errorf("read-only key: %s: want 403, got %v", what, err)
		}
	}
	// An admin key for a tenant other than default cannot be made.
	if _, err := e.Client.CreateTenant(ctx, "acme", client.Quotas{}); err != nil {
		t.Fatal(err)
	}
	var ce *client.Error
	if _, err := e.Client.CreateKey(ctx, client.KeyRequest{Tenant: "acme", Scopes: []client.Scope{auth.ScopeAdmin}}); !errors.As(err, &ce) || ce.Status/100 != 4 {
		t.Errorf("an admin key for tenant acme: want a refusal, got %v", err)
	}
	e.stillServes(id)
	e.audited("the refused token mint", audit.Query{Action: audit.ActionHTTP, Actor: ro.ID}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && r.Status == 403
	})
}

// Oversized bodies: a JSON spec over 1 MiB, and a body whose declared
// length exceeds the server's cap, are refused (413) before being read.
func TestAPIOversizedBody(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	if status, body := call(t, e.Server.URL, "POST", "/v1/sandboxes", e.AdminKey, strings.NewReader(`{"labels":{"a":"b"}}`), "Content-Type", "application/json"); status != 201 {
		t.Fatalf("positive control: a normal create: %d %s", status, body)
	}
	big := `{"labels":{"a":"` + strings.Repeat("x", 2<<20) + `"}}`
	status, body := call(t, e.Server.URL, "POST", "/v1/sandboxes", e.AdminKey, strings.NewReader(big), "Content-Type", "application/json")
	if status != 413 {
		t.Fatalf("a 2 MiB spec: want 413, got %d %s", status, clipS(body))
	}
	// A declared length beyond the cap: refused before a byte is read.
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.Server.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/sandboxes HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		strings.TrimPrefix(e.Server.URL, "http://"), e.AdminKey, int64(4)<<30)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 413 {
		t.Fatalf("a declared 4 GiB body: want 413 at once, got %v %v", resp, err)
	}
	e.stillServes()
	e.httpAudited("POST /v1/sandboxes", 413)
}

// Slowloris: headers sent a byte at a time, never finished. The server's
// header timeout closes the connection; a server without one (the
// control) would hold it open forever.
func TestAPISlowHeaders(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	handler := e.Server.Config.Handler
	serve := func(srv *http.Server) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().String()
	}
	stalls := func(addr string, wait time.Duration) bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /v1/sandboxes HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr)
		_ = c.SetReadDeadline(time.Now().Add(wait))
		_, err = c.Read(make([]byte, 1))
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout() // still open, waiting for us
	}
	// Control: without a header timeout the connection is held.
	if !stalls(serve(&http.Server{Handler: handler}), 2*time.Second) {
		t.Fatal("positive control: a server without a header timeout closed the stalled connection")
	}
	hardened := serve(api.NewHTTPServer(handler, api.HTTPLimits{ReadHeaderTimeout: time.Second}, nil))
	before := len(e.records(audit.Query{}))
	if stalls(hardened, 15*time.Second) {
		t.Fatal("the hardened server kept a stalled request's connection open past its header timeout")
	}
	// The server answers others meanwhile and afterwards.
	if status, _ := call(t, "http://"+hardened, "GET", "/v1/sandboxes", e.AdminKey, nil); status != 200 {
		t.Fatalf("the hardened server does not answer a normal request: %d", status)
	}
	e.stillServes()
	// A request that never authenticated leaves no record (an
	// unauthenticated flood cannot fill the disk); the normal one does.
	for _, r := range e.records(audit.Query{})[before:] {
		if r.Action == audit.ActionHTTP && r.Status == 408 {
			t.Errorf("the stalled request was recorded: %+v", r)
		}
	}
	e.httpAudited("GET /v1/sandboxes", 200)
}

// A connection flood from one address: beyond the per-address cap new
// connections get an immediate 429 and close; others are still served.
func TestAPIConnectionFlood(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limits := api.HTTPLimits{MaxConnsPerIP: 8}
	srv := api.NewHTTPServer(e.Server.Config.Handler, limits, nil)
	go srv.Serve(api.LimitListener(ln, limits, true, nil))
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()
	// Control: eight idle connections are all accepted and held.
	var held []net.Conn
	for i := 0; i < 8; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	_ = held[0].SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := held[0].Read(make([]byte, 1)); err == nil {
		t.Fatal("positive control: an idle connection within the cap was answered or closed")
	}
	// The flood: the ninth is refused at once.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || (resp.StatusCode != 503 && resp.StatusCode != 429) {
		t.Fatalf("a connection beyond the per-address cap: want an immediate refusal, got %v %v", resp, err)
	}
	t.Logf("the connection beyond the cap: %s (Retry-After %q)", resp.Status, resp.Header.Get("Retry-After"))
	held[7].Close()
	held = held[:7]
	time.Sleep(100 * time.Millisecond)
	if status, _ := call(t, "http://"+addr, "GET", "/v1/sandboxes", e.AdminKey, nil); status != 200 {
		t.Fatalf("after a slot freed the server does not answer: %d", status)
	}
	e.stillServes()
	e.httpAudited("GET /v1/sandboxes", 200)
}

// DNS rebinding against the API and /mcp: a browser page whose name was
// re-pointed at the server sends Host: attacker.example. Refused (403)
// before authentication, counted in the metrics.
func TestAPIDNSRebinding(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	for _, p := range []string{"/v1/sandboxes", "/mcp", "/healthz"} {
		// Control: the server's own Host is served (/mcp is not mounted in
		// the test stack: 404 after the Host check).
		if status, _ := call(t, e.Server.URL, "GET", p, e.AdminKey, nil); status == 403 {
			t.Fatalf("positive control: %s with the server's own Host answered 403", p)
		}
		status, body := call(t, e.Server.URL, "GET", p, e.AdminKey, nil, "Host", "attacker.example")
		if status != 403 || !strings.Contains(body, "not a name of this server") {
			t.Fatalf("%s with Host attacker.example: want 403, got %d %s", p, status, clipS(body))
		}
	}
	e.stillServes()
	if !strings.Contains(e.MetricsText(), `status="403"`) {
		t.Error("the refusals are not counted in the metrics")
	}
	e.httpAudited("GET /v1/sandboxes", 200)
}

// Cross-site WebSocket hijacking: a page on another site opens a terminal
// to the API on its visitor's behalf. Refused (403) whatever the
// credential.
func TestAPICrossSiteWebSocket(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	ws := func(origin string) int {
		hdr := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}
		if origin != "" {
			hdr = append(hdr, "Origin", origin)
		}
		req, _ := http.NewRequest("GET", e.Server.URL+"/v1/sandboxes/"+id+"/pty?cmd=/bin/true", nil)
		req.Header.Set("Authorization", "Bearer "+e.AdminKey)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := ws(""); s != http.StatusSwitchingProtocols {
		t.Fatalf("positive control: a WebSocket without an Origin (a non-browser client): %d", s)
	}
	if s := ws("https://attacker.example"); s != 403 {
		t.Fatalf("a cross-site WebSocket: want 403, got %d", s)
	}
	e.stillServes(id)
	e.httpAudited("GET /v1/sandboxes/{id}/pty", http.StatusSwitchingProtocols)
}

// A tenant creating sandboxes without end: its max_sandboxes quota
// answers 429 limit_exceeded, recorded; other tenants are unaffected.
func TestAPIQuotaExhaustion(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	k := e.tenantKey("small", client.Quotas{MaxSandboxes: 2})
	kc := e.as(k.Key)
	for i := 0; i < 2; i++ {
		if _, err := kc.Create(ctxT(t, time.Minute), client.Spec{}); err != nil {
			t.Fatalf("positive control: create %d within the quota: %v", i+1, err)
		}
	}
	_, err := kc.Create(ctxT(t, time.Minute), client.Spec{})
	ce := apiError(t, "a create beyond max_sandboxes", err, "limit_exceeded")
	if ce.Status != 429 {
		t.Fatalf("want 429, got %d", ce.Status)
	}
	e.sandbox(client.Spec{}) // the default tenant still creates
	e.stillServes()
	e.audited("the refused create", audit.Query{Action: audit.ActionHTTP, Tenant: "small"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && r.Status == 429 && r.Code == "limit_exceeded"
	})
}

// Creating sandboxes in a tight loop: the tenant's create rate answers
// 429 rate_limited with Retry-After.
func TestAPICreateRateLimit(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	k := e.tenantKey("bursty", client.Quotas{CreatePerMinute: 2, CreateBurst: 2})
	for i := 0; i < 2; i++ {
		sb, err := e.as(k.Key).Create(ctxT(t, time.Minute), client.Spec{})
		if err != nil {
			t.Fatalf("positive control: create %d within the burst: %v", i+1, err)
		}
		_ = e.as(k.Key).Delete(ctxT(t, time.Minute), sb.ID)
	}
	req, _ := http.NewRequest("POST", e.Server.URL+"/v1/sandboxes", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+k.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a create beyond the rate: want 429 with Retry-After, got %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	e.stillServes()
	e.audited("the rate-limited create", audit.Query{Action: audit.ActionHTTP, Tenant: "bursty"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && r.Status == 429 && r.Code == "rate_limited"
	})
}

// Probing for sandbox ids: random, malformed and hostile ids all answer
// exactly like one another (404), so nothing can be enumerated.
func TestAPISandboxIDProbing(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	if status, _ := call(t, e.Server.URL, "GET", "/v1/sandboxes/"+id, e.AdminKey, nil); status != 200 {
		t.Fatalf("positive control: the real id answers %d", status)
	}
	var answers []string
	for _, probe := range []string{missingID(), "sb-", "sb-" + strings.Repeat("a", 200), "..%2f..%2fetc", "%00", strings.ToUpper(id), id + "x", id[:len(id)-1]} {
		r := send(t, e.Server.URL, "GET", "/v1/sandboxes/{id}", probe, e.AdminKey)
		if r.status != 404 || r.code != "not_found" {
			t.Errorf("id %q: want 404 not_found, got %+v", probe, r)
		}
		answers = append(answers, r.message)
	}
	for _, a := range answers[1:] {
		if strings.ReplaceAll(a, "ID", "") != strings.ReplaceAll(answers[0], "ID", "") && !strings.Contains(a, "ID") {
			t.Logf("answers differ in wording: %q vs %q", a, answers[0])
		}
	}
	e.stillServes(id)
	e.httpAudited("GET /v1/sandboxes/{id}", 404)
}
