//go:build linux

package hostile

// Authentication schemes in any letter case (issue 14, item "port proxy
// forwards Authorization: bearer KEY"): a client that writes the scheme
// "bearer" (RFC 9110 §11.1: schemes are case-insensitive) together with
// a port URL token had its API key taken for the app's own header and
// forwarded into the sandbox. Every surface now reads schemes through one
// helper (gate.AuthParam): the port proxy strips the key whatever its
// spelling, and REST, MCP, E2B (Bearer and envd's Basic) and the
// WebSockets accept every spelling alike.

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

// rawAPI sends one request with exactly the header lines given (a name
// may repeat), and no other credential.
func (l *srvLab) rawAPI(method, path string, body io.Reader, hdr ...string) (int, string) {
	l.t.Helper()
	req, err := http.NewRequest(method, "http://"+l.addr+path, body)
	must(l.t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := l.hc.Do(req.WithContext(ctx))
	if err != nil {
		l.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// The attack: a port URL's token in the URL and the owner's key in
// "Authorization: bearer KEY". The key must not reach the sandbox's
// server in any spelling of the scheme, nor with a second Authorization
// header beside it. Positive control: the app's own Authorization header
// (not a Paddock credential) does reach the sandbox's server, so the
// echo would show a forwarded key.
func TestPortStripsBearerAnyCase(t *testing.T) {
	l := newSrvLab(t)
	id := l.create(client.Spec{})
	l.serveIn(l.c, id, 8080)
	u := l.portURL(l.c, id, 8080)
	withTok := portPath(id, 8080, "/leak-check") + "?" + url.Values{"paddock_token": {u.Token}}.Encode()

	appAuth := "Bearer app-own-" + randomMarker("APP")
	code, body := l.rawAPI("GET", withTok, nil, "Authorization", appAuth)
	if code != 200 || !strings.Contains(body, echoMark) || !strings.Contains(body, appAuth) {
		t.Fatalf("positive control: the app's own Authorization reaches the sandbox: %d %s", code, clipS(body))
	}

	for _, scheme := range []string{"bearer", "BEARER", "bEaReR", "Bearer"} {
		for _, sep := range []string{" ", "\t", "  "} {
			v := scheme + sep + l.key
			code, body := l.rawAPI("GET", withTok, nil, "Authorization", v)
			if strings.Contains(body, l.key) {
				t.Errorf("%q with a port URL token: the key REACHED the sandbox (%d): %s", v, code, clipS(body))
				continue
			}
			// The header is Paddock's: it authenticates (the admin key), and
			// the request is served.
			if code != 200 || !strings.Contains(body, echoMark) {
				t.Errorf("%q with a port URL token: %d %s, want 200 from the sandbox", v, code, clipS(body))
			}
		}
	}
	// Two Authorization headers: one could be checked and the other
	// forwarded. Refused, and neither reaches the sandbox.
	code, body = l.rawAPI("GET", withTok, nil, "Authorization", appAuth, "Authorization", "bearer "+l.key)
	if strings.Contains(body, l.key) || strings.Contains(body, echoMark) {
		t.Errorf("two Authorization headers: REACHED the sandbox (%d): %s", code, clipS(body))
	} else if code != 401 || !strings.Contains(body, "more than one Authorization") {
		t.Errorf("two Authorization headers: %d %s, want 401", code, clipS(body))
	}
	l.stillServes(id)
	l.audited("the port request authenticated by the lower-case bearer", client.AuditQuery{Sandbox: id, Action: audit.ActionHTTP},
		func(r audit.Record) bool {
			return r.Phase == audit.PhaseIntent && strings.Contains(string(r.Args), "/ports/8080/leak-check\"") &&
				strings.Contains(string(r.Args), `"route":"`+portRoute+`"`)
		})
}

// Every surface reads the scheme in any letter case: REST, MCP and the
// E2B control plane accept "bearer KEY"; E2B's envd takes "basic" as
// Basic (the user root); the WebSockets take the "BEARER." subprotocol.
// Positive controls: each surface refuses the same request without the
// credential (401), and accepts the canonical spelling.
func TestAuthSchemesAnyCase(t *testing.T) {
	l := newSrvLab(t)
	id := l.create(client.Spec{})
	mcpInit := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`
	type attempt struct {
		what, method, path, body string
		hdr                      []string
		status                   int
	}
	mcpHdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	var attempts []attempt
	for _, v := range []string{"Bearer " + l.key, "bearer " + l.key, "BEARER\t" + l.key} {
		attempts = append(attempts,
			attempt{"REST " + clipS(v[:7]), "GET", "/v1/sandboxes", "", []string{"Authorization", v}, 200},
			attempt{"MCP " + clipS(v[:7]), "POST", "/mcp", mcpInit, append([]string{"Authorization", v}, mcpHdr...), 200},
			attempt{"E2B control " + clipS(v[:7]), "GET", "/sandboxes", "", []string{"Authorization", v}, 200})
	}
	attempts = append(attempts,
		attempt{"REST without a credential", "GET", "/v1/sandboxes", "", nil, 401},
		attempt{"REST with two Authorization headers", "GET", "/v1/sandboxes", "", []string{"Authorization", "Bearer " + l.key, "Authorization", "Basic eDo="}, 401},
		attempt{"MCP without a credential", "POST", "/mcp", mcpInit, mcpHdr, 401},
		attempt{"E2B control without a credential", "GET", "/sandboxes", "", nil, 401})
	for _, a := range attempts {
		var body io.Reader
		if a.body != "" {
			body = strings.NewReader(a.body)
		}
		if code, out := l.rawAPI(a.method, a.path, body, a.hdr...); code != a.status {
			t.Errorf("%s: %d %s, want %d", a.what, code, clipS(out), a.status)
		}
	}

	// envd's Basic: the user root, in any spelling of the scheme. A file
	// only root's home holds tells the users apart.
	mark := randomMarker("ROOT-HOME")
	l.sh(id, "printf %s "+mark+" > /root/who && chmod 600 /root/who")
	tok, err := l.c.CreateToken(ctxT(t, time.Minute), id, []client.Scope{"read", "write", "exec"}, time.Hour)
	must(t, err)
	envd := []string{"E2b-Sandbox-Id", id, "X-Access-Token", tok.Token}
	root := base64.StdEncoding.EncodeToString([]byte("root:"))
	if code, out := l.rawAPI("GET", "/files?path=who", nil, envd...); code == 200 && strings.Contains(out, mark) {
		t.Fatalf("positive control: the default user read root's file: %d %s", code, clipS(out))
	}
	for _, scheme := range []string{"Basic", "basic", "BASIC"} {
		code, out := l.rawAPI("GET", "/files?path=who", nil, append([]string{"Authorization", scheme + " " + root}, envd...)...)
		if code != 200 || out != mark {
			t.Errorf("envd %q as root: %d %s, want root's file", scheme, code, clipS(out))
		}
	}

	// The WebSockets: a key offered as a subprotocol in any case.
	hc := &http.Client{Transport: l.hc.Transport}
	ws := "ws://" + l.addr + "/v1/sandboxes/" + id + "/pty"
	ctx := ctxT(t, time.Minute)
	if c, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{"paddock.v1"}}); err == nil {
		c.CloseNow()
		t.Fatal("positive control: the terminal opened without a credential")
	} else if resp == nil || resp.StatusCode != 401 {
		t.Fatalf("positive control: the terminal without a credential: %v %v", resp, err)
	}
	for _, p := range []string{"bearer.", "Bearer.", "BEARER."} {
		c, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{"paddock.v1", p + l.key}})
		if err != nil {
			t.Errorf("the terminal with the subprotocol %q: %v", p+"KEY", err)
			continue
		}
		c.CloseNow()
	}
	l.stillServes(id)
	l.httpAudited("", "/v1/sandboxes", 200)
}
