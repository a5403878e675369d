package api_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

//go:embed testdata/portserver.py
var portServer string

const portsDomain = "ports.test"

// portsEnv is a stack whose API serves ports under the path and on the
// test ports domain, hardened and audited as serve does.
type portsEnv struct {
	*testenv.Env
	srv     *httptest.Server
	noHosts *httptest.Server // the same API without a ports domain
}

func newPortsEnv(t *testing.T) *portsEnv {
	t.Helper()
	e := testenv.New(t, testenv.Options{})
	rec := audit.NewRecorder(e.AuditLog(), audit.RecorderOptions{RequestID: api.RequestID})
	mk := func(domain string) *httptest.Server {
		var hosts []string
		if domain != "" {
			hosts = []string{"*." + domain}
		}
		s := api.New(api.Options{Manager: e.Manager, Auth: e.Auth, Auditor: rec, PortsDomain: domain,
			Middleware: []func(http.Handler) http.Handler{api.Harden(api.HardenOptions{AllowedHosts: hosts})}})
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(hs.Close)
		return hs
	}
	return &portsEnv{Env: e, srv: mk(portsDomain), noHosts: mk("")}
}

// serveIn starts the test server in sandbox id on port (family "6": ::1
// only) and waits until it answers through the proxy.
func (pe *portsEnv) serveIn(t *testing.T, id string, port int, family string) {
	t.Helper()
	ctx := context.Background()
	if r := pe.Sh(id, "mkdir -p /tmp/srv && cat > /tmp/srv/portserver.py"); r.ExitCode != 0 {
		t.Fatal(r.Stderr)
	}
	r, err := pe.Client.Exec(ctx, id, client.ExecRequest{Cmd: []string{"sh", "-c", "cat > /tmp/srv/portserver.py"}, Stdin: portServer})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("copy the server in: %v %s", err, r.Stderr)
	}
	cmd := []string{"python3", "/tmp/srv/portserver.py", fmt.Sprint(port)}
	if family != "" {
		cmd = append(cmd, family)
	}
	if _, err := pe.Client.StartProcess(ctx, id, client.ProcessRequest{Cmd: cmd}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, _ := pe.get(t, pe.srv.URL+portPath(id, port, "/"), pe.AdminKey, "")
		if resp.StatusCode == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server on port %d never answered (last %d)", port, resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func portPath(id string, port int, rest string) string {
	return "/v1/sandboxes/" + id + "/ports/" + fmt.Sprint(port) + rest
}

// get sends a request (bearer key if set, Host if set) and returns the
// response and its body.
func (pe *portsEnv) get(t *testing.T, u, key, host string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// echoed is what the test server saw.
type echoed struct {
	Method  string              `json:"method"`
	Path    string              `json:"path"`
	Headers map[string][]string `json:"headers"`
}

func parseEcho(t *testing.T, body string) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("not the test server's answer: %v: %s", err, body)
	}
	return e
}

func (pe *portsEnv) mint(t *testing.T, key, id string, port int, ttl int) (int, api.PortURL) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, pe.srv.URL+portPath(id, port, "/url"), strings.NewReader(fmt.Sprintf(`{"ttl_s":%d}`, ttl)))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var u api.PortURL
	json.NewDecoder(resp.Body).Decode(&u)
	return resp.StatusCode, u
}

func TestPortProxy(t *testing.T) {
	pe := newPortsEnv(t)
	sb := pe.Create(sandbox.Spec{}) // network mode none: no interface at all
	other := pe.Create(sandbox.Spec{})
	pe.serveIn(t, sb.ID, 8080, "")
	base := pe.srv.URL + portPath(sb.ID, 8080, "")

	// With the API key: the request arrives, without Paddock's credential,
	// with the forwarding headers; the answer is sandboxed (path mode
	// shares the API's origin).
	resp, body := pe.get(t, base+"/some/path%2Fx?a=1&b=%20", pe.AdminKey, "", "Cookie", "app=1", "X-Forwarded-For", "6.6.6.6")
	if resp.StatusCode != 200 {
		t.Fatalf("with the key: %d %s", resp.StatusCode, body)
	}
	got := parseEcho(t, body)
	if got.Path != "/some/path%2Fx?a=1&b=%20" {
		t.Errorf("path and query in the sandbox: %q", got.Path)
	}
	if _, ok := got.Headers["authorization"]; ok {
		t.Errorf("the API key reached the sandbox: %v", got.Headers["authorization"])
	}
	if h := got.Headers["x-forwarded-prefix"]; len(h) != 1 || h[0] != portPath(sb.ID, 8080, "") {
		t.Errorf("X-Forwarded-Prefix: %v", h)
	}
	if h := got.Headers["x-forwarded-for"]; len(h) != 1 || h[0] != "127.0.0.1" {
		t.Errorf("X-Forwarded-For (a client's own must not pass): %v", h)
	}
	if h := got.Headers["x-forwarded-host"]; len(h) != 1 || h[0] != strings.TrimPrefix(pe.srv.URL, "http://") {
		t.Errorf("X-Forwarded-Host: %v", h)
	}
	if h := got.Headers["cookie"]; len(h) != 1 || h[0] != "app=1" {
		t.Errorf("the client's own cookie: %v", h)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "sandbox ") || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("path mode answer headers: CSP %q, Set-Cookie %q", resp.Header.Get("Content-Security-Policy"), resp.Header.Get("Set-Cookie"))
	}

	// Not without credentials, nor with a bad key, nor another tenant's.
	if resp, body := pe.get(t, base+"/", "", ""); resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no credentials: %d %s", resp.StatusCode, body)
	}
	if resp, _ := pe.get(t, base+"/", auth.NewKey(), ""); resp.StatusCode != 401 {
		t.Errorf("an unknown key: %d", resp.StatusCode)
	}
	ctx := context.Background()
	_, err := pe.Quotas.Tenants().Create(ctx, "acme", tenant.Quotas{})
	must(t, err)
	acme, err := pe.Auth.CreateKey(ctx, pe.Scope, auth.KeyRequest{Tenant: "acme", Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}})
	must(t, err)
	if resp, _ := pe.get(t, base+"/", acme.Key, ""); resp.StatusCode != 404 {
		t.Errorf("another tenant's key: %d, want 404", resp.StatusCode)
	}
	readOnly, err := pe.Auth.CreateKey(ctx, pe.Scope, auth.KeyRequest{Tenant: "default", Scopes: []auth.Scope{auth.ScopeRead}})
	must(t, err)
	if resp, _ := pe.get(t, base+"/", readOnly.Key, ""); resp.StatusCode != 403 {
		t.Errorf("a key without exec: %d, want 403", resp.StatusCode)
	}

	// A URL token: reaches this port, and only it.
	code, u := pe.mint(t, pe.AdminKey, sb.ID, 8080, 0)
	if code != 201 || !strings.Contains(u.URL, "paddock_token=") {
		t.Fatalf("mint: %d %+v", code, u)
	}
	if !strings.HasPrefix(u.URL, "http://8080-"+sb.ID+"."+portsDomain+":") {
		t.Errorf("with a ports domain the URL is on it: %s", u.URL)
	}
	q := "?" + api.PortTokenParam + "=" + url.QueryEscape(u.Token)
	resp, body = pe.get(t, base+"/t"+q+"&keep=1", "", "")
	if resp.StatusCode != 200 {
		t.Fatalf("with the URL token: %d %s", resp.StatusCode, body)
	}
	if p := parseEcho(t, body).Path; p != "/t?keep=1" {
		t.Errorf("the token reached the sandbox, or the query changed: %q", p)
	}
	if resp, _ := pe.get(t, base+"/", u.Token, ""); resp.StatusCode != 200 {
		t.Errorf("the URL token as a bearer: %d", resp.StatusCode)
	}
	// ...not another sandbox, not another port, not any other route.
	if resp, _ := pe.get(t, pe.srv.URL+portPath(other.ID, 8080, "/")+q, "", ""); resp.StatusCode != 404 {
		t.Errorf("the token on another sandbox: %d, want 404", resp.StatusCode)
	}
	if resp, _ := pe.get(t, pe.srv.URL+portPath(sb.ID, 8081, "/")+q, "", ""); resp.StatusCode != 404 {
		t.Errorf("the token on another port: %d, want 404", resp.StatusCode)
	}
	tc := client.New(pe.srv.URL, u.Token)
	if _, err := tc.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"true"}}); !client.IsNotFound(err) {
		t.Errorf("the port token (scope exec) runs commands: %v", err)
	}
	if _, err := tc.Get(ctx, sb.ID); err == nil {
		t.Error("the port token reads the sandbox")
	}
	if list, err := tc.List(ctx, nil); err == nil && len(list) != 0 {
		t.Errorf("the port token lists sandboxes: %v", list)
	}
	// An API key never in a URL; a sandbox token of this sandbox is fine.
	if resp, _ := pe.get(t, base+"/?"+api.PortTokenParam+"="+pe.AdminKey, "", ""); resp.StatusCode != 401 {
		t.Errorf("an API key in the URL: %d, want 401", resp.StatusCode)
	}
	sbTok, err := pe.Auth.MintToken(auth.ScopeOf(auth.NewAdmin(pe.AdminKey).Principal()), sb.ID, []auth.Scope{auth.ScopeExec}, time.Minute)
	must(t, err)
	if resp, _ := pe.get(t, base+"/", sbTok.Token, ""); resp.StatusCode != 200 {
		t.Errorf("a sandbox token of this sandbox: %d", resp.StatusCode)
	}
	// Expired: refused (tokens have second precision).
	_, short := pe.mint(t, pe.AdminKey, sb.ID, 8080, 1)
	if resp, _ := pe.get(t, base+"/?"+api.PortTokenParam+"="+url.QueryEscape(short.Token), "", ""); resp.StatusCode != 200 {
		t.Errorf("positive control, the short token before expiry: %d", resp.StatusCode)
	}
	time.Sleep(2100 * time.Millisecond)
	if resp, _ := pe.get(t, base+"/?"+api.PortTokenParam+"="+url.QueryEscape(short.Token), "", ""); resp.StatusCode != 401 {
		t.Errorf("an expired token: %d, want 401", resp.StatusCode)
	}

	// Bad ports; nothing listening.
	for _, p := range []string{"0", "65536", "08080", "-1", "http"} {
		if resp, _ := pe.get(t, pe.srv.URL+"/v1/sandboxes/"+sb.ID+"/ports/"+p+"/", pe.AdminKey, ""); resp.StatusCode != 400 {
			t.Errorf("port %s: %d, want 400", p, resp.StatusCode)
		}
	}
	if code, _ := pe.mint(t, pe.AdminKey, sb.ID, 70000, 0); code != 400 {
		t.Errorf("mint for port 70000: %d", code)
	}
	if resp, body := pe.get(t, pe.srv.URL+portPath(sb.ID, 9999, "/"), pe.AdminKey, ""); resp.StatusCode != 502 ||
		!strings.Contains(body, "nothing listens on port 9999") {
		t.Errorf("a closed port: %d %s", resp.StatusCode, body)
	}

	// The audit log has the requests, and no token.
	recs := pe.AuditRecords(audit.Query{})
	n := 0
	for _, r := range recs {
		if strings.Contains(string(r.Args), "/ports/{port}/") {
			n++
		}
		if strings.Contains(string(r.Args), u.Token) || strings.Contains(string(r.Args), pe.AdminKey) {
			t.Errorf("an audit record holds a credential: %s", r.Args)
		}
	}
	if n == 0 {
		t.Error("no port request was audited")
	}

	// A deleted sandbox's port is gone.
	must(t, pe.Manager.Delete(ctx, pe.Scope, sb.ID))
	if resp, _ := pe.get(t, base+"/", pe.AdminKey, ""); resp.StatusCode != 404 {
		t.Errorf("deleted sandbox: %d", resp.StatusCode)
	}
}

func TestPortWebSocketAndIPv6(t *testing.T) {
	pe := newPortsEnv(t)
	sb := pe.Create(sandbox.Spec{})
	pe.serveIn(t, sb.ID, 8080, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(pe.srv.URL, "http") + portPath(sb.ID, 8080, "/ws")
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + pe.AdminKey}}})
	if err != nil {
		t.Fatalf("websocket through the port proxy: %v", err)
	}
	for _, msg := range []string{"hello", strings.Repeat("x", 1000)} {
		must(t, c.Write(ctx, websocket.MessageText, []byte(msg)))
		_, got, err := c.Read(ctx)
		if err != nil || string(got) != msg {
			t.Fatalf("echo of %d bytes: %d bytes, %v", len(msg), len(got), err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
	// Without credentials, no upgrade.
	if _, resp, err := websocket.Dial(ctx, u, nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("websocket without credentials: %v %v", resp, err)
	}
	// A server that listens on ::1 only (Node's "localhost") is reached.
	pe.serveIn(t, sb.ID, 8086, "6")
	resp, body := pe.get(t, pe.srv.URL+portPath(sb.ID, 8086, "/v6"), pe.AdminKey, "")
	if resp.StatusCode != 200 || parseEcho(t, body).Path != "/v6" {
		t.Errorf("::1: %d %s", resp.StatusCode, body)
	}
}

func TestPortHostRouting(t *testing.T) {
	pe := newPortsEnv(t)
	sb := pe.Create(sandbox.Spec{})
	pe.serveIn(t, sb.ID, 8080, "")
	host := "8080-" + sb.ID + "." + portsDomain
	// With the key; the API's own paths on a port host are the sandbox's.
	resp, body := pe.get(t, pe.srv.URL+"/v1/sandboxes?x=1", pe.AdminKey, host)
	if resp.StatusCode != 200 || parseEcho(t, body).Path != "/v1/sandboxes?x=1" {
		t.Fatalf("host routing with the key: %d %s", resp.StatusCode, body)
	}
	if got := parseEcho(t, body); got.Headers["x-forwarded-host"][0] != host || got.Headers["x-forwarded-prefix"] != nil {
		t.Errorf("forwarding headers: %v", got.Headers)
	}
	if resp.Header.Get("Content-Security-Policy") != "" || !strings.Contains(resp.Header.Get("Set-Cookie"), "app_session") {
		t.Errorf("a port host is the app's own origin: CSP %q, Set-Cookie %q", resp.Header.Get("Content-Security-Policy"), resp.Header.Get("Set-Cookie"))
	}
	if resp, _ := pe.get(t, pe.srv.URL+"/", "", host); resp.StatusCode != 401 {
		t.Errorf("a port host without credentials: %d", resp.StatusCode)
	}
	// A URL token: kept in a cookie for the host; a browser is redirected
	// to the URL without it.
	_, u := pe.mint(t, pe.AdminKey, sb.ID, 8080, 0)
	q := "/page?" + api.PortTokenParam + "=" + url.QueryEscape(u.Token) + "&v=2"
	resp, _ = pe.get(t, pe.srv.URL+q, "", host, "Sec-Fetch-Mode", "navigate")
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "paddock_port" {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/page?v=2" || cookie == nil ||
		!cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Domain != "" {
		t.Fatalf("browser navigation with the token: %d %q %+v", resp.StatusCode, resp.Header.Get("Location"), cookie)
	}
	resp, body = pe.get(t, pe.srv.URL+"/page?v=2", "", host, "Cookie", "app_session=1; paddock_port="+cookie.Value)
	if resp.StatusCode != 200 {
		t.Fatalf("with the cookie: %d %s", resp.StatusCode, body)
	}
	if h := parseEcho(t, body).Headers["cookie"]; len(h) != 1 || h[0] != "app_session=1" {
		t.Errorf("the port cookie reached the sandbox (or the app's was lost): %v", h)
	}
	// Not the cookie of another port host, and no names but PORT-ID.
	otherHost := "8081-" + sb.ID + "." + portsDomain
	if resp, _ := pe.get(t, pe.srv.URL+"/", "", otherHost, "Cookie", "paddock_port="+cookie.Value); resp.StatusCode != 404 {
		t.Errorf("the cookie on another port's host: %d, want 404", resp.StatusCode)
	}
	for _, h := range []string{"www." + portsDomain, "8080-sb-nope." + portsDomain, "x.8080-" + sb.ID + "." + portsDomain,
		"08080-" + sb.ID + "." + portsDomain, "8080_" + sb.ID + "." + portsDomain} {
		if resp, _ := pe.get(t, pe.srv.URL+"/", pe.AdminKey, h); resp.StatusCode != 404 {
			t.Errorf("host %s: %d, want 404", h, resp.StatusCode)
		}
	}
	if resp, body := pe.get(t, pe.srv.URL+"/healthz", pe.AdminKey, portsDomain); resp.StatusCode == 200 {
		t.Errorf("the ports domain itself serves the API: %s", body)
	}
	// Hosts outside the domain are the API (positive control), and a
	// name the server does not know is refused by the hardening.
	if resp, _ := pe.get(t, pe.srv.URL+"/healthz", "", ""); resp.StatusCode != 200 {
		t.Errorf("the API: %d", resp.StatusCode)
	}
	if resp, _ := pe.get(t, pe.srv.URL+"/healthz", "", "evil.example"); resp.StatusCode != 403 {
		t.Errorf("an unknown host: %d", resp.StatusCode)
	}
	// Without a ports domain, URLs are under the path, and port hosts are
	// not served.
	req, _ := http.NewRequest(http.MethodPost, pe.noHosts.URL+portPath(sb.ID, 8080, "/url"), nil)
	req.Header.Set("Authorization", "Bearer "+pe.AdminKey)
	r2, err := http.DefaultClient.Do(req)
	must(t, err)
	var pu api.PortURL
	json.NewDecoder(r2.Body).Decode(&pu)
	r2.Body.Close()
	if want := pe.noHosts.URL + portPath(sb.ID, 8080, "/?paddock_token="); !strings.HasPrefix(pu.URL, want) {
		t.Errorf("path-mode URL %q, want %s...", pu.URL, want)
	}
	if resp, body := pe.get(t, pu.URL, "", ""); resp.StatusCode != 200 {
		t.Errorf("the path-mode URL: %d %s", resp.StatusCode, body)
	}
}

func TestPortTenantPolicy(t *testing.T) {
	pe := newPortsEnv(t)
	ctx := context.Background()
	_, err := pe.Quotas.Tenants().Create(ctx, "locked", tenant.Quotas{DenyExposedPorts: true})
	must(t, err)
	k, err := pe.Auth.CreateKey(ctx, pe.Scope, auth.KeyRequest{Tenant: "locked", Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}})
	must(t, err)
	sb, err := client.New(pe.srv.URL, k.Key).Create(ctx, sandbox.Spec{})
	must(t, err)
	resp, body := pe.get(t, pe.srv.URL+portPath(sb.ID, 8080, "/"), k.Key, "")
	if resp.StatusCode != 403 || !strings.Contains(body, "deny_exposed_ports") {
		t.Errorf("a tenant denied exposed ports: %d %s", resp.StatusCode, body)
	}
	if code, _ := pe.mint(t, k.Key, sb.ID, 8080, 0); code != 403 {
		t.Errorf("minting a URL for it: %d", code)
	}
	// Positive control: the default tenant may.
	mine := pe.Create(sandbox.Spec{})
	if resp, _ := pe.get(t, pe.srv.URL+portPath(mine.ID, 8080, "/"), pe.AdminKey, ""); resp.StatusCode != 502 {
		t.Errorf("the default tenant (nothing listens): %d, want 502", resp.StatusCode)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
