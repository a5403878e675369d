//go:build linux

package hostile

// Exposed ports (docs/ports.md): a server a sandbox runs is reachable
// through the Paddock server, under /v1/sandboxes/{id}/ports/{port}/ and
// on {port}-{id}.ports.test, with Paddock's authentication in front. The
// cases run in the server lab (serverlab_test.go): the attacker is another
// sandbox's credential, another tenant, a missing or misplaced credential,
// and the host behind the server.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

// portRoute is the proxy's route, as the audit log names it.
const portRoute = "/v1/sandboxes/{id}/ports/{port}/{path...}"

// echoMark is in every answer of the sandbox's test server
// (internal/api/testdata/portserver.py: each request answered with what
// arrived, as JSON; a WebSocket echoes its messages).
const echoMark = `"method":`

func portPath(id string, port int, rest string) string {
	return fmt.Sprintf("/v1/sandboxes/%s/ports/%d%s", id, port, rest)
}

// serveIn starts the test server in sandbox id (through c, its tenant's
// client) on port and waits until it answers through the proxy.
func (l *srvLab) serveIn(c *client.Client, id string, port int) {
	l.t.Helper()
	src, err := os.ReadFile("../../internal/api/testdata/portserver.py")
	must(l.t, err)
	ctx := ctxT(l.t, time.Minute)
	if _, err := c.WriteFile(ctx, id, client.WriteRequest{Path: "/tmp/portserver.py"}, strings.NewReader(string(src)), int64(len(src))); err != nil {
		l.t.Fatalf("upload the port server: %v", err)
	}
	if _, err := c.StartProcess(ctx, id, client.ProcessRequest{Cmd: []string{"python3", "/tmp/portserver.py", fmt.Sprint(port)}}); err != nil {
		l.t.Fatal(err)
	}
	ok := waitFor(20*time.Second, func() bool {
		code, body := l.api("GET", portPath(id, port, "/ready"), c.Key(), nil)
		return code == 200 && strings.Contains(body, echoMark)
	})
	if !ok {
		l.t.Fatalf("the server on port %d of %s never answered through the proxy", port, id)
	}
}

// portURL mints a port URL with c.
func (l *srvLab) portURL(c *client.Client, id string, port int) client.PortURL {
	l.t.Helper()
	u, err := c.PortURL(ctxT(l.t, time.Minute), id, port, time.Hour)
	if err != nil {
		l.t.Fatalf("port URL for %s:%d: %v", id, port, err)
	}
	return u
}

// portAttempt is one request to a port and the answer it must get.
type portAttempt struct {
	what   string
	path   string // under the API
	cred   string // bearer
	hdr    []string
	status int
}

// refusedAll sends each attempt and asserts its status, and that none
// reached the sandbox's server.
func (l *srvLab) refusedAll(attempts []portAttempt) {
	l.t.Helper()
	for _, a := range attempts {
		code, body := l.api("GET", a.path, a.cred, nil, a.hdr...)
		if strings.Contains(body, echoMark) {
			l.t.Errorf("%s: REACHED the sandbox's server (%d): %s", a.what, code, clipS(body))
			continue
		}
		if code != a.status {
			l.t.Errorf("%s: %d %s, want %d", a.what, code, clipS(body), a.status)
			continue
		}
		l.t.Logf("%s: %d %s", a.what, code, clipS(strings.TrimSpace(body)))
	}
}

// A port of sandbox A is not reachable with sandbox B's credentials (its
// token, its port URLs), nor with a port URL for another port of A, nor by
// another tenant (the very answer of an id never issued), nor without a
// credential or with an API key in the URL; on port hosts, neither with
// B's port cookie. A port URL's token reaches nothing else of A (exec,
// files). Positive control: every one of these credentials does reach
// what it was made for (the owner's key and A's port URL reach A's port,
// B's reach B's).
func TestPortCrossSandboxAndTenant(t *testing.T) {
	l := newSrvLab(t)
	owner := l.tenantKey("owner", client.Quotas{})
	intruder := l.tenantKey("intruder", client.Quotas{})
	oc := l.as(owner.Key)
	ctx := ctxT(t, 2*time.Minute)
	a, err := oc.Create(ctx, client.Spec{})
	must(t, err)
	b, err := oc.Create(ctx, client.Spec{})
	must(t, err)
	l.serveIn(oc, a.ID, 8080)
	l.serveIn(oc, b.ID, 8080)
	uA, uA2, uB := l.portURL(oc, a.ID, 8080), l.portURL(oc, a.ID, 8081), l.portURL(oc, b.ID, 8080)
	tokB, err := oc.CreateToken(ctx, b.ID, []client.Scope{"read", "write", "exec"}, time.Hour)
	must(t, err)
	hostA, hostB := "8080-"+a.ID+"."+portsDomain+":7070", "8080-"+b.ID+"."+portsDomain+":7070"
	q := func(tok string) string { return "?" + url.Values{"paddock_token": {tok}}.Encode() }

	// Controls: each credential works where it belongs.
	for _, c := range []struct{ what, path, cred string }{
		{"the owner's key on A", portPath(a.ID, 8080, "/"), owner.Key},
		{"A's port URL on A", portPath(a.ID, 8080, "/") + q(uA.Token), ""},
		{"B's token on B", portPath(b.ID, 8080, "/"), tokB.Token},
		{"B's port URL on B", portPath(b.ID, 8080, "/") + q(uB.Token), ""},
	} {
		if code, body := l.api("GET", c.path, c.cred, nil); code != 200 || !strings.Contains(body, echoMark) {
			t.Fatalf("positive control: %s: %d %s", c.what, code, clipS(body))
		}
	}
	if code, body := l.api("GET", "/", "", nil, "Host", hostA, "Cookie", "paddock_port="+uA.Token); code != 200 || !strings.Contains(body, echoMark) {
		t.Fatalf("positive control: A's port cookie on A's port host: %d %s", code, clipS(body))
	}
	// What a sandbox that does not exist answers: the intruder must get
	// exactly that.
	missCode, missBody := l.api("GET", portPath(missingID(), 8080, "/"), owner.Key, nil)

	pa := portPath(a.ID, 8080, "/")
	l.refusedAll([]portAttempt{
		{"B's sandbox token on A", pa, tokB.Token, nil, 404},
		{"B's sandbox token in A's URL", pa + q(tokB.Token), "", nil, 404},
		{"B's port URL token on A", pa + q(uB.Token), "", nil, 404},
		{"B's port URL token as a bearer on A", pa, uB.Token, nil, 404},
		{"the token of A's port 8081 on port 8080", pa + q(uA2.Token), "", nil, 404},
		{"another tenant's key", pa, intruder.Key, nil, missCode},
		{"no credential", pa, "", nil, 401},
		{"an API key in the URL", pa + q(owner.Key), "", nil, 401},
		{"a forged token", pa, "pdt_forged0123456789abcdefghijklmnopqrstuvwxyz", nil, 401},
		{"B's port cookie on A's port host", "/", "", []string{"Host", hostA, "Cookie", "paddock_port=" + uB.Token}, 404},
		{"B's token on A's port host", "/", tokB.Token, []string{"Host", hostA}, 404},
		{"A's port cookie on B's port host", "/", "", []string{"Host", hostB, "Cookie", "paddock_port=" + uA.Token}, 404},
		{"another tenant's key on A's port host", "/", intruder.Key, []string{"Host", hostA}, 404},
	})
	if code, body := l.api("GET", pa, intruder.Key, nil); code != missCode || !sameError(body, missBody) {
		t.Errorf("another tenant's key on A's port: %d %s; a missing sandbox: %d %s", code, body, missCode, missBody)
	}
	// A port URL's token reaches that port and nothing else.
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/sandboxes/" + a.ID + "/exec", `{"cmd":["echo","pwned"]}`},
		{"GET", "/v1/sandboxes/" + a.ID + "/files?path=/etc/hostname", ""},
		{"GET", "/v1/sandboxes/" + a.ID, ""},
		{"POST", "/v1/sandboxes/" + a.ID + "/ports/8081/url", `{}`},
	} {
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		// 404 (no such sandbox for it), or 403 where the route needs a
		// scope the token lacks (checked first: nothing is looked up).
		code, out := l.api(c.method, c.path, uA.Token, body)
		if (code != 404 && code != 403) || strings.Contains(out, "pwned") || strings.Contains(out, a.ID+`"`) {
			t.Errorf("A's port URL token on %s %s: %d %s, want 404 or 403", c.method, c.path, code, clipS(out))
		}
	}
	l.stillServesAs(oc, a.ID, b.ID)
	// Refusals after authentication are on A's record (those before it,
	// 401, are counted in the metrics: docs/security.md).
	l.httpAudited(a.ID, portRoute, 404)
	// So are those on its port host (whose path does not name it).
	l.audited("a request on A's port host", client.AuditQuery{Sandbox: a.ID, Action: audit.ActionHTTP}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && strings.Contains(string(r.Args), `"path":"/"`) &&
			strings.Contains(string(r.Args), `"route":"`+portRoute+`"`)
	})
}

func sameError(a, b string) bool {
	return strings.ReplaceAll(a, " ", "") != "" && errorCode(a) == errorCode(b)
}

func errorCode(body string) string {
	_, rest, _ := strings.Cut(body, `"code":"`)
	code, _, _ := strings.Cut(rest, `"`)
	return code
}

// An exposed port reaches only the sandbox's own listener, never the host
// behind the server: not a service on the server's loopback, not the
// server's own API, not the egress proxy or resolver, in a sandbox without
// network as in one with an interface. Positive controls: from the
// server's namespace the host service and the API answer on those very
// ports; once the sandbox itself listens on the port, the same request
// reaches the sandbox's server.
func TestPortDoesNotExposeHost(t *testing.T) {
	l := newSrvLab(t)
	mark := randomMarker("HOST-SERVICE")
	ln := l.ns.Listen("tcp", "127.0.0.1:0")
	hsrv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, mark)
	})}
	go hsrv.Serve(ln)
	t.Cleanup(func() { hsrv.Close() })
	hostPort := ln.Addr().(*net.TCPAddr).Port
	if code, body, err := l.get("GET", fmt.Sprintf("http://127.0.0.1:%d/", hostPort), ""); err != nil || code != 200 || body != mark {
		t.Fatalf("positive control: the host service from the server's namespace: %d %q %v", code, body, err)
	}
	for _, p := range []string{"127.0.0.1:7070", ipSrvHostLab + ":7070"} {
		if code, body, err := l.get("GET", "http://"+p+"/healthz", ""); err != nil || code != 200 {
			t.Fatalf("positive control: the API at %s from the server's namespace: %d %q %v", p, code, body, err)
		}
	}
	none := l.create(client.Spec{})
	open := l.create(client.Spec{Network: &client.Network{Mode: "open"}})
	for _, id := range []string{none, open} {
		var attempts []portAttempt
		for _, p := range []int{hostPort, 7070, 15001, 15053} {
			attempts = append(attempts, portAttempt{fmt.Sprintf("%s port %d", id, p), portPath(id, p, "/healthz"), l.key, nil, 502})
			attempts = append(attempts, portAttempt{fmt.Sprintf("%s port %d, port host", id, p), "/healthz", l.key,
				[]string{"Host", fmt.Sprintf("%d-%s.%s:7070", p, id, portsDomain)}, 502})
		}
		l.refusedAll(attempts)
		for _, a := range attempts {
			if _, body := l.api("GET", a.path, a.cred, nil, a.hdr...); strings.Contains(body, mark) {
				t.Errorf("%s: the host service answered", a.what)
			}
		}
	}
	// Control: the sandbox's own listener on that port is what is reached.
	l.serveIn(l.c, none, hostPort)
	if code, body := l.api("GET", portPath(none, hostPort, "/mine"), l.key, nil); code != 200 || !strings.Contains(body, `"path": "/mine"`) {
		t.Fatalf("positive control: the sandbox's own server on port %d: %d %s", hostPort, code, clipS(body))
	}
	l.stillServes(none, open)
	l.httpAudited(open, portRoute, 502)
}

// Deleting a sandbox closes the connections open to its ports (a
// WebSocket under the path, and one on the port host with a port URL);
// its port URLs die with it. A port URL dies with the key that minted it.
// Positive control: the WebSockets echo until then; the URLs worked.
func TestPortClosedWithSandbox(t *testing.T) {
	l := newSrvLab(t)
	id := l.create(client.Spec{})
	l.serveIn(l.c, id, 8080)
	u := l.portURL(l.c, id, 8080)
	ctx := ctxT(t, 2*time.Minute)
	// Every name dials the server (its namespace, :7070): the port host is
	// a name of it.
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return l.ns.Dial(ctx, network, l.addr)
	}}}
	dial := func(what, u string, hdr http.Header) *websocket.Conn {
		c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: hdr})
		if err != nil {
			t.Fatalf("positive control: %s: %v", what, err)
		}
		if err := c.Write(ctx, websocket.MessageText, []byte("ping "+what)); err != nil {
			t.Fatal(err)
		}
		if _, m, err := c.Read(ctx); err != nil || string(m) != "ping "+what {
			t.Fatalf("positive control: %s echoes: %q %v", what, m, err)
		}
		return c
	}
	conns := map[string]*websocket.Conn{
		"a WebSocket under the path": dial("a WebSocket under the path", "ws://"+l.addr+portPath(id, 8080, "/ws"),
			http.Header{"Authorization": {"Bearer " + l.key}}),
		"a WebSocket on the port host": dial("a WebSocket on the port host",
			fmt.Sprintf("ws://8080-%s.%s:7070/ws?paddock_token=%s", id, portsDomain, url.QueryEscape(u.Token)), nil),
	}
	if err := l.c.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	for what, c := range conns {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, m, err := c.Read(rctx)
		expired := rctx.Err() != nil
		cancel()
		switch {
		case err == nil:
			t.Errorf("%s: still delivering after the delete: %q", what, m)
		case expired:
			t.Errorf("%s: still open 30 s after the sandbox was deleted", what)
		default:
			t.Logf("%s: closed after the delete (%v)", what, err)
		}
		c.CloseNow()
	}
	if code, body := l.api("GET", portPath(id, 8080, "/")+"?paddock_token="+url.QueryEscape(u.Token), "", nil); code != 404 {
		t.Errorf("the port URL of a deleted sandbox: %d %s", code, clipS(body))
	}
	// A port URL dies with its minting key.
	other := l.create(client.Spec{})
	l.serveIn(l.c, other, 8080)
	k, err := l.c.CreateKey(ctx, client.KeyRequest{Tenant: "default", Scopes: []client.Scope{"read", "write", "exec"}})
	must(t, err)
	u2 := l.portURL(l.as(k.Key), other, 8080)
	path := portPath(other, 8080, "/") + "?paddock_token=" + url.QueryEscape(u2.Token)
	if code, body := l.api("GET", path, "", nil); code != 200 || !strings.Contains(body, echoMark) {
		t.Fatalf("positive control: a port URL of a live key: %d %s", code, clipS(body))
	}
	must(t, l.c.RevokeKey(ctx, k.ID))
	l.refusedAll([]portAttempt{{"a port URL of a revoked key", path, "", nil, 401}})
	l.stillServes(other)
	l.audited("the delete", client.AuditQuery{Sandbox: id, Action: "sandbox.delete"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && r.Error == ""
	})
	// Both sessions are on the sandbox's record — the one on the port host
	// too, whose URL names the sandbox only in its host name.
	for _, path := range []string{portPath(id, 8080, "/ws"), "/ws"} {
		l.audited("the WebSocket session at "+path, client.AuditQuery{Sandbox: id, Action: audit.ActionHTTP}, func(r audit.Record) bool {
			return r.Phase == audit.PhaseIntent && strings.Contains(string(r.Args), `"path":"`+path+`"`) &&
				strings.Contains(string(r.Args), `"route":"`+portRoute+`"`)
		})
	}
}

// A tenant with deny_exposed_ports reaches none of its sandboxes' ports
// and cannot mint port URLs (403); a quota change applies to URLs minted
// before it. Positive control: the same tenant before the change reached
// its port by key, port URL and port host.
func TestPortDeniedTenant(t *testing.T) {
	l := newSrvLab(t)
	locked := l.tenantKey("locked", client.Quotas{DenyExposedPorts: true})
	flip := l.tenantKey("flip", client.Quotas{})
	lc, fc := l.as(locked.Key), l.as(flip.Key)
	ctx := ctxT(t, 2*time.Minute)
	lsb, err := lc.Create(ctx, client.Spec{})
	must(t, err)
	fsb, err := fc.Create(ctx, client.Spec{})
	must(t, err)
	l.serveIn(fc, fsb.ID, 8080)
	u := l.portURL(fc, fsb.ID, 8080)
	fhost := "8080-" + fsb.ID + "." + portsDomain + ":7070"
	withURL := portPath(fsb.ID, 8080, "/") + "?paddock_token=" + url.QueryEscape(u.Token)
	for _, c := range []struct {
		what, path, cred string
		hdr              []string
	}{
		{"the key", portPath(fsb.ID, 8080, "/"), flip.Key, nil},
		{"the port URL", withURL, "", nil},
		{"the port host", "/", "", []string{"Host", fhost, "Cookie", "paddock_port=" + u.Token}},
	} {
		if code, body := l.api("GET", c.path, c.cred, nil, c.hdr...); code != 200 || !strings.Contains(body, echoMark) {
			t.Fatalf("positive control: %s before the quota change: %d %s", c.what, code, clipS(body))
		}
	}
	// The locked tenant's own sandbox runs a server too (through exec):
	// the refusal is the policy's, not an empty port.
	if _, err := lc.StartProcess(ctx, lsb.ID, client.ProcessRequest{Cmd: []string{"python3", "-m", "http.server", "--bind", "127.0.0.1", "8080"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(10*time.Second, func() bool {
		return strings.Contains(l.shAs(lc, lsb.ID, "curl -s -m 2 http://127.0.0.1:8080/ | head -c 100").Stdout, "Directory")
	})
	if code, body := l.api("POST", portPath(lsb.ID, 8080, "/url"), locked.Key, strings.NewReader(`{}`)); code != 403 || !strings.Contains(body, "deny_exposed_ports") {
		t.Errorf("deny_exposed_ports: minting a port URL: %d %s", code, clipS(body))
	}
	if _, err := l.c.SetQuotas(ctx, "flip", client.Quotas{DenyExposedPorts: true}); err != nil {
		t.Fatal(err)
	}
	l.refusedAll([]portAttempt{
		{"deny_exposed_ports: its key", portPath(lsb.ID, 8080, "/"), locked.Key, nil, 403},
		{"deny_exposed_ports: its port host", "/", locked.Key, []string{"Host", "8080-" + lsb.ID + "." + portsDomain + ":7070"}, 403},
		{"after the change: the key", portPath(fsb.ID, 8080, "/"), flip.Key, nil, 403},
		{"after the change: a port URL minted before", withURL, "", nil, 403},
		{"after the change: the port host's cookie", "/", "", []string{"Host", fhost, "Cookie", "paddock_port=" + u.Token}, 403},
	})
	if _, err := fc.PortURL(ctx, fsb.ID, 8080, time.Hour); !isStatus(err, 403) {
		t.Errorf("after the change: minting a port URL: %v", err)
	}
	l.stillServesAs(lc, lsb.ID)
	l.stillServesAs(fc, fsb.ID)
	l.httpAudited(lsb.ID, portRoute, 403)
	l.httpAudited(lsb.ID, "/v1/sandboxes/{id}/ports/{port}/url", 403)
}
