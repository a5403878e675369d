//go:build linux

package hostile

// The browser (internal/browser, internal/api/browser.go): Debian's
// Chromium inside the sandbox, driven by the server over DevTools. The
// browser is a workload like any other, so what a page in it can reach is
// what the sandbox can: its own files, not the host's; the network through
// the sandbox's egress policy; not another sandbox's browser; not the
// server's API — and the API's browser routes refuse pages elsewhere. The
// cases run in the server lab (serverlab_test.go) with a real Chromium.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/guestapi"
)

func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(browser.DefaultChromium); err != nil {
		t.Skipf("Debian's chromium is not installed (%s; apt-get install chromium): the browser cases need it", browser.DefaultChromium)
	}
}

// browserSandbox creates a sandbox with a browser (through c) and waits
// until it shows a page.
func (l *srvLab) browserSandbox(c *client.Client, n *client.Network) string {
	l.t.Helper()
	sb, err := c.Create(ctxT(l.t, time.Minute), client.Spec{Browser: true, TimeoutS: 900, Network: n})
	if err != nil {
		l.t.Fatalf("create a browser sandbox: %v", err)
	}
	if _, err := c.BrowserNavigate(ctxT(l.t, 2*time.Minute), sb.ID, client.NavigateRequest{URL: "about:blank", TimeoutMs: 60000}); err != nil {
		l.t.Fatalf("the browser does not start: %v", err)
	}
	return sb.ID
}

// browse navigates the sandbox's browser to u and returns what the tab
// then shows (title and text, an error page included) and the navigation's
// error.
func (l *srvLab) browse(c *client.Client, id, u string) (string, error) {
	l.t.Helper()
	text, err, terr := l.tryBrowse(c, id, u)
	if terr != nil {
		l.t.Fatalf("the page's text after %s: %v", u, terr)
	}
	return text, err
}

// tryBrowse is browse that also returns the text's error instead of
// failing: a page that did not load yet (its server still starting) shows
// the browser's error page, and reading the text while the tab moves to it
// fails ("Inspected target navigated or closed") — for a caller that
// retries, that is one more attempt, not a failure.
func (l *srvLab) tryBrowse(c *client.Client, id, u string) (string, error, error) {
	ctx := ctxT(l.t, time.Minute)
	p, err := c.BrowserNavigate(ctx, id, client.NavigateRequest{URL: u, TimeoutMs: 15000})
	txt, terr := c.BrowserText(ctx, id, client.TextRequest{})
	return p.Title + "\n" + txt.Title + "\n" + txt.Text, err, terr
}

// eval runs a page script in the sandbox's browser (as a page's own
// script would run) and returns its value as a string.
func (l *srvLab) eval(c *client.Client, id, js string) string {
	l.t.Helper()
	r, err := c.BrowserEval(ctxT(l.t, time.Minute), id, client.EvalRequest{Expression: js, TimeoutMs: 20000})
	if err != nil {
		l.t.Fatalf("eval %s: %v", clipS(js), err)
	}
	var s string
	if json.Unmarshal(r.Value, &s) != nil {
		s = string(r.Value)
	}
	return s
}

// devTools reads where sandbox id's browser listens (its
// DevToolsActivePort, in the sandbox's files): the port and the browser's
// id.
func (l *srvLab) devTools(c *client.Client, id string) (int, string) {
	l.t.Helper()
	b, err := c.ReadFile(ctxT(l.t, time.Minute), id, browser.DefaultProfileDir+"/DevToolsActivePort")
	if err != nil {
		l.t.Fatalf("DevToolsActivePort of %s: %v", id, err)
	}
	port, path, err := guestapi.ParseDevToolsActivePort(b)
	if err != nil {
		l.t.Fatal(err)
	}
	return port, strings.TrimPrefix(path, "/devtools/browser/")
}

// jsFetch is a page script that fetches u and answers "OK <status> <body
// start>" or "ERR <error>".
func jsFetch(u string) string {
	return fmt.Sprintf(`await fetch(%q).then(r => r.text().then(t => "OK " + r.status + " " + t.slice(0, 300))).catch(e => "ERR " + e)`, u)
}

// file:// pages show the sandbox's own files, never the host's: not a
// file the test put on the host, not the server's secrets key or audit
// log (by their host paths, and through /proc/1/root); and the browser's
// internal pages, view-source: and javascript: URLs are refused by the
// API. Positive controls: natively those files hold what the test looks
// for; in the same browser a file:// page of the sandbox's own shows its
// contents.
func TestBrowserFileURLHostFiles(t *testing.T) {
	requireChromium(t)
	l := newSrvLab(t)
	hostDir := t.TempDir()
	hostMark := randomMarker("HOST-ONLY-FILE")
	hostFile := filepath.Join(hostDir, "host-only.html")
	must(t, os.WriteFile(hostFile, []byte("<title>host</title><p>"+hostMark+"</p>"), 0o644))
	keyFile := filepath.Join(l.data, "secrets.key")
	key, err := os.ReadFile(keyFile)
	if err != nil || len(strings.TrimSpace(string(key))) < 32 {
		t.Fatalf("positive control: the server's secrets key on the host: %v", err)
	}
	segs, _ := filepath.Glob(filepath.Join(l.auditDir(), "audit-*.jsonl"))
	if len(segs) == 0 {
		t.Fatal("positive control: no audit segment on the host")
	}
	if b, err := os.ReadFile(hostFile); err != nil || !strings.Contains(string(b), hostMark) {
		t.Fatalf("positive control: the host file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(l.data, "paddock.lock")); err != nil {
		t.Fatalf("positive control: the data directory's listing: %v", err)
	}
	id := l.browserSandbox(l.c, nil)
	own := randomMarker("SANDBOX-OWN-FILE")
	if _, err := l.c.WriteFile(ctxT(t, time.Minute), id, client.WriteRequest{Path: "/workspace/own.html"},
		strings.NewReader("<title>own</title><p>"+own+"</p>"), int64(len("<title>own</title><p>"+own+"</p>"))); err != nil {
		t.Fatal(err)
	}
	if text, err := l.browse(l.c, id, "file:///workspace/own.html"); err != nil || !strings.Contains(text, own) {
		t.Fatalf("positive control: a file:// page of the sandbox's own: %v\n%s", err, text)
	}
	secretKey := strings.TrimSpace(string(key))
	for _, u := range []string{
		"file://" + hostFile, "file://" + hostDir + "/", "file:///proc/1/root" + hostFile,
		"file://" + keyFile, "file:///proc/1/root" + keyFile, "file://" + segs[0], "file://" + l.data + "/",
	} {
		text, err := l.browse(l.c, id, u)
		// The file's contents, or (a directory) a name in it.
		if strings.Contains(text, hostMark) || strings.Contains(text, secretKey) || strings.Contains(text, `"action":`) ||
			strings.Contains(text, "paddock.lock") {
			t.Errorf("%s: the browser showed the host's file:\n%s", u, clipS(text))
			continue
		}
		t.Logf("%s: %v / %s", u, err, clipS(strings.Join(strings.Fields(text), " ")))
	}
	// A page's script cannot read a host file either (file:// from a
	// file:// page of its own).
	l.browse(l.c, id, "file:///workspace/own.html")
	if got := l.eval(l.c, id, jsFetch("file://"+hostFile)); strings.Contains(got, hostMark) {
		t.Errorf("a page script read the host file: %s", got)
	}
	for _, u := range []string{"chrome://version", "chrome://settings", "devtools://devtools/bundled/inspector.html",
		"view-source:file://" + hostFile, "javascript:alert(1)"} {
		_, err := l.c.BrowserNavigate(ctxT(t, time.Minute), id, client.NavigateRequest{URL: u})
		if !isStatus(err, 400) {
			t.Errorf("navigate %s: want 400, got %v", u, err)
		}
		if _, err := l.c.BrowserOpenTab(ctxT(t, time.Minute), id, client.OpenTabRequest{URL: u}); !isStatus(err, 400) {
			t.Errorf("a tab at %s: want 400, got %v", u, err)
		}
	}
	l.stillServes(id)
	l.audited("the navigation to the host's file", client.AuditQuery{Sandbox: id, Action: "browser.navigate"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && strings.Contains(string(r.Args), "host-only.html")
	})
}

// Another sandbox's browser: its DevTools (full control of that browser)
// answer only on its own loopback. From sandbox A — its browser and its
// shell, by loopback port and by B's address — and through the API with
// A's credentials or another tenant's, B's DevTools stay out of reach.
// Positive controls: inside B the DevTools endpoint answers with B's
// browser id; B's owner reaches it through the API.
func TestBrowserOtherSandboxDevTools(t *testing.T) {
	requireChromium(t)
	l := newSrvLab(t)
	owner := l.tenantKey("owner", client.Quotas{})
	intruder := l.tenantKey("intruder", client.Quotas{})
	oc := l.as(owner.Key)
	open := &client.Network{Mode: "open"}
	a, b := l.browserSandbox(oc, open), l.browserSandbox(oc, open)
	port, bid := l.devTools(oc, b)
	res := l.shAs(oc, b, fmt.Sprintf("curl -sS -m 5 http://127.0.0.1:%d/json/version", port))
	if !strings.Contains(res.Stdout, bid) || !strings.Contains(res.Stdout, "webSocketDebuggerUrl") {
		t.Fatalf("positive control: B's DevTools inside B: %+v", res)
	}
	if code, body := l.api("GET", "/v1/sandboxes/"+b+"/browser/json/version", owner.Key, nil); code != 200 || !strings.Contains(body, "webSocketDebuggerUrl") {
		t.Fatalf("positive control: B's DevTools through the API for B's owner: %d %s", code, clipS(body))
	}
	bAddr := strings.TrimSpace(l.shAs(oc, b, `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(('`+ipAPI+`', 80)); print(s.getsockname()[0])"`).Stdout)
	if bAddr == "" {
		t.Fatal("B's address")
	}
	for _, u := range []string{fmt.Sprintf("http://127.0.0.1:%d/json/version", port), fmt.Sprintf("http://%s:%d/json/version", bAddr, port),
		fmt.Sprintf("http://localhost:%d/json/list", port)} {
		if text, err := l.browse(oc, a, u); strings.Contains(text, bid) {
			t.Errorf("A's browser at %s reached B's DevTools: %v\n%s", u, err, clipS(text))
		} else {
			t.Logf("A's browser at %s: %v", u, err)
		}
		if out := l.shAs(oc, a, "curl -sS -m 5 "+u+"; true"); strings.Contains(out.Stdout, bid) {
			t.Errorf("A's shell at %s reached B's DevTools: %s", u, clipS(out.Stdout))
		}
	}
	tokA, err := oc.CreateToken(ctxT(t, time.Minute), a, []client.Scope{"read", "write", "exec"}, time.Hour)
	must(t, err)
	miss := missingID()
	missCode, _ := l.api("GET", "/v1/sandboxes/"+miss+"/browser/json/version", owner.Key, nil)
	for _, cred := range []struct{ what, key string }{{"A's sandbox token", tokA.Token}, {"another tenant's key", intruder.Key}} {
		for _, p := range []string{"/browser/json/version", "/browser", "/browser/text"} {
			if code, body := l.api("GET", "/v1/sandboxes/"+b+p, cred.key, nil); code != missCode || strings.Contains(body, bid) {
				t.Errorf("%s on B's %s: %d %s (a missing sandbox: %d)", cred.what, p, code, clipS(body), missCode)
			}
		}
		if code, body := l.api("POST", "/v1/sandboxes/"+b+"/browser/eval", cred.key, strings.NewReader(`{"expression":"document.title"}`)); code != missCode {
			t.Errorf("%s evaluating in B's browser: %d %s", cred.what, code, clipS(body))
		}
		if code := wsStatus(l, "/v1/sandboxes/"+b+"/browser/cdp", cred.key, ""); code != missCode {
			t.Errorf("%s: B's DevTools WebSocket: %d", cred.what, code)
		}
	}
	if code := wsStatus(l, "/v1/sandboxes/"+b+"/browser/cdp", owner.Key, ""); code != http.StatusSwitchingProtocols {
		t.Errorf("positive control: B's owner opens B's DevTools WebSocket: %d", code)
	}
	l.stillServesAs(oc, a, b)
	l.netAudited(a, false, bAddr)
	l.httpAudited(b, "/v1/sandboxes/{id}/browser/json/version", 404)
}

// wsStatus sends a WebSocket handshake to path (bearer cred, Origin if
// given) and returns the status.
func wsStatus(l *srvLab, path, cred, origin string) int {
	l.t.Helper()
	hdr := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}
	if origin != "" {
		hdr = append(hdr, "Origin", origin)
	}
	req, err := http.NewRequest("GET", "http://"+l.addr+path, nil)
	must(l.t, err)
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := l.hc.Transport.RoundTrip(req)
	if err != nil {
		l.t.Fatalf("WebSocket handshake to %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// apiReached reports whether text is an answer of the server's API (its
// health document, or its refusal of a foreign Host).
func apiReached(text string) bool {
	return strings.Contains(text, `"ok":true,`) || strings.Contains(text, "is not a name of this server")
}

// The browser's traffic goes through the sandbox's egress policy like any
// other: navigations and page scripts cannot reach the cloud metadata
// service (by address, or by an allowed name that resolves to it), names
// rebound to loopback or to the host, the server's API on the host's
// addresses, or a name outside the allowlist. Positive controls: from the
// server's namespace the metadata service answers; from outside, the API
// answers on the host's address and the rebound name; upstream DNS does
// answer the rebinding names; in the same browsers an allowed page loads
// and its scripts fetch.
func TestBrowserEgressPolicy(t *testing.T) {
	requireChromium(t)
	l := newSrvLab(t)
	if code, body, err := l.get("GET", "http://"+ipMetadata+"/", ""); err != nil || code != 200 || !strings.Contains(body, "METADATA-SECRET") {
		t.Fatalf("positive control: the metadata service from the server's namespace: %d %q %v", code, body, err)
	}
	for _, host := range []string{ipSrvHostLab + ":7070", "rebind-host.test:7070"} {
		_, body, err := nsRequest(l.o, nil, "GET", "http://"+ipSrvHostLab+":7070/healthz", host)
		if err != nil || !apiReached(body) {
			t.Fatalf("positive control: the API from outside as %s: %q %v", host, body, err)
		}
	}
	allow := l.browserSandbox(l.c, &client.Network{Mode: "allowlist",
		Allow: []string{"api.test", "meta.test", "rebind.test", "rebind-host.test"}})
	open := l.browserSandbox(l.c, &client.Network{Mode: "open"})
	gw := strings.TrimSpace(l.sh(open, `ip -4 route show default 2>/dev/null | cut -d' ' -f3; true`).Stdout)
	if gw == "" {
		gw = strings.TrimSpace(l.sh(open, `awk 'NR>1 && $2=="00000000" {printf "%d.%d.%d.%d\n", "0x" substr($3,7,2), "0x" substr($3,5,2), "0x" substr($3,3,2), "0x" substr($3,1,2)}' /proc/net/route`).Stdout)
	}
	for _, id := range []string{allow, open} {
		if text, err := l.browse(l.c, id, "http://api.test/page"); err != nil || !strings.Contains(text, "hello from api.test:80") {
			t.Fatalf("positive control: an allowed page in %s: %v\n%s", id, err, text)
		}
		if got := l.eval(l.c, id, jsFetch("http://api.test/page")); !strings.HasPrefix(got, "OK 200") {
			t.Fatalf("positive control: a page script's fetch in %s: %s", id, got)
		}
	}
	meta, other := l.seen.count("metadata"), l.seen.count("other.test:80")
	leak := func(what, text string) {
		t.Helper()
		if strings.Contains(text, "METADATA-SECRET") || apiReached(text) || strings.Contains(text, "GET /") {
			t.Errorf("%s: the browser got through:\n%s", what, clipS(text))
			return
		}
		t.Logf("%s: refused (%s)", what, clipS(strings.Join(strings.Fields(text), " ")))
	}
	navs := map[string][]string{
		allow: {"http://meta.test/", "http://rebind.test:7070/healthz", "http://rebind-host.test:7070/healthz"},
		open: {"http://" + ipMetadata + "/", "http://meta.test/", "http://" + ipSrvHostLab + ":7070/healthz",
			"http://" + gw + ":7070/healthz", "http://rebind-host.test:7070/healthz"},
	}
	for id, urls := range navs {
		for _, u := range urls {
			text, err := l.browse(l.c, id, u)
			leak(fmt.Sprintf("%s: navigate %s (%v)", id, u, err), text)
		}
		l.browse(l.c, id, "http://api.test/page")
		if id == allow {
			urls = append(urls, "http://other.test/x") // outside the allowlist
		}
		for _, u := range urls {
			leak(fmt.Sprintf("%s: a page script fetches %s", id, u), l.eval(l.c, id, jsFetch(u)))
		}
	}
	if n := l.seen.count("metadata") - meta; n != 0 {
		t.Errorf("the metadata service served the sandboxes' browsers %d requests", n)
	}
	if n := l.seen.count("other.test:80") - other; n != 0 {
		t.Errorf("other.test (outside the allowlist) served %d requests", n)
	}
	if l.resolver.asked("other.test") {
		t.Error("the name outside the allowlist reached the upstream resolver")
	}
	l.stillServes(allow, open)
	l.netAudited(open, false, ipMetadata)
	l.audited("the refused name outside the allowlist", client.AuditQuery{Sandbox: allow, Action: "net.dns"}, func(r audit.Record) bool {
		return strings.Contains(string(r.Args), `"allowed":false`) && strings.Contains(string(r.Args), "other.test")
	})
}

// A page cannot drive the server that runs it. In the sandbox's browser, a
// hostile page (served by the sandbox itself) tries the API on the host's
// addresses (fetch and WebSocket) — refused by the egress policy — and its
// own browser's DevTools WebSocket, the server's handle on the browser —
// refused by the browser (no page origin is allowed there). Elsewhere, a
// page of the sandbox's port host (a site the sandbox controls) sending
// the browser routes cross-site requests and WebSockets is refused (403),
// and on the port host the API's paths are the sandbox's. Positive
// controls: the same page opens a WebSocket to a server of its own; a
// client without an Origin (not a page) opens the DevTools WebSocket in
// the sandbox, and the browser routes for the owner; from outside, the
// API answers on the host's address.
func TestBrowserPageCannotDriveAPI(t *testing.T) {
	requireChromium(t)
	l := newSrvLab(t)
	if _, body, err := nsRequest(l.o, nil, "GET", "http://"+ipSrvHostLab+":7070/healthz", ""); err != nil || !apiReached(body) {
		t.Fatalf("positive control: the API from outside: %q %v", body, err)
	}
	id := l.browserSandbox(l.c, &client.Network{Mode: "open"})
	port, bid := l.devTools(l.c, id)
	l.serveIn(l.c, id, 8081) // a WebSocket echo server of the sandbox's own
	page := `<!doctype html><title>hostile</title><p>a hostile page</p>`
	if _, err := l.c.WriteFile(ctxT(t, time.Minute), id, client.WriteRequest{Path: "/workspace/www/index.html", Parents: true}, strings.NewReader(page), int64(len(page))); err != nil {
		t.Fatal(err)
	}
	if _, err := l.c.StartProcess(ctxT(t, time.Minute), id, client.ProcessRequest{Cmd: []string{"python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory", "/workspace/www", "8000"}}); err != nil {
		t.Fatal(err)
	}
	// The server may not listen yet (python's start inside gVisor on a
	// loaded host): retry, the text's error included.
	var last error
	ok := waitFor(60*time.Second, func() bool {
		text, err, terr := l.tryBrowse(l.c, id, "http://127.0.0.1:8000/")
		if last = errors.Join(err, terr); last != nil {
			return false
		}
		return strings.Contains(text, "a hostile page")
	})
	if !ok {
		t.Fatalf("the hostile page does not load: %v", last)
	}
	jsWS := func(u string) string {
		// "OPEN <echo>" once open and answered; "OPENED-..." if it opened
		// at all; "ERROR"/"CLOSED" if it never did.
		return fmt.Sprintf(`await new Promise(res => { let opened = false; const w = new WebSocket(%q);
 w.onopen = () => { opened = true; w.send("hi"); };
 w.onmessage = m => res("OPEN " + m.data);
 w.onerror = () => res(opened ? "OPENED-THEN-ERROR" : "ERROR");
 w.onclose = e => res((opened ? "OPENED-THEN-CLOSED " : "CLOSED ") + e.code);
 setTimeout(() => res(opened ? "OPENED" : "TIMEOUT"), 8000); })`, u)
	}
	if got := l.eval(l.c, id, jsWS("ws://127.0.0.1:8081/echo")); got != "OPEN hi" {
		t.Fatalf("positive control: the page's WebSocket to the sandbox's own server: %s", got)
	}
	devtoolsWS := fmt.Sprintf("ws://127.0.0.1:%d/devtools/browser/%s", port, bid)
	handshake := func(origin string) string {
		h := ""
		if origin != "" {
			h = "-H 'Origin: " + origin + "' "
		}
		return l.sh(id, fmt.Sprintf(`curl -sS -i -m 3 %s-H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' http://127.0.0.1:%d/devtools/browser/%s | head -1; true`, h, port, bid)).Stdout
	}
	if hs := handshake(""); !strings.Contains(hs, " 101") {
		t.Fatalf("positive control: a client without an Origin opens the DevTools WebSocket in the sandbox: %q", hs)
	}
	// What refuses the page is its origin (the same handshake with it).
	if hs := handshake("http://127.0.0.1:8000"); strings.Contains(hs, " 101") {
		t.Errorf("the DevTools WebSocket accepts a page's origin: %q", hs)
	} else {
		t.Logf("the DevTools WebSocket with the page's origin: %q", strings.TrimSpace(hs))
	}
	if got := l.eval(l.c, id, jsWS(devtoolsWS)); strings.Contains(got, "OPEN") {
		t.Errorf("the page drove its own browser's DevTools: %s", got)
	} else {
		t.Logf("the page's DevTools WebSocket: %s", got)
	}
	if got := l.eval(l.c, id, jsFetch(fmt.Sprintf("http://127.0.0.1:%d/json/version", port))); strings.Contains(got, bid) {
		t.Errorf("the page read its browser's DevTools document: %s", got)
	}
	gw := strings.TrimSpace(l.sh(id, `awk 'NR>1 && $2=="00000000" {printf "%d.%d.%d.%d\n", "0x" substr($3,7,2), "0x" substr($3,5,2), "0x" substr($3,3,2), "0x" substr($3,1,2)}' /proc/net/route`).Stdout)
	for _, host := range []string{ipSrvHostLab, gw} {
		if got := l.eval(l.c, id, jsFetch("http://"+host+":7070/healthz")); apiReached(got) || strings.HasPrefix(got, "OK") {
			t.Errorf("the page reached the API at %s: %s", host, got)
		}
		if got := l.eval(l.c, id, jsWS("ws://"+host+":7070/v1/sandboxes/"+id+"/browser/cdp")); strings.Contains(got, "OPEN") {
			t.Errorf("the page opened the API's DevTools WebSocket at %s: %s", host, got)
		}
	}

	// A page the sandbox serves on its port host, in a visitor's browser,
	// sending requests to the API (cross-site): refused before anything.
	marker := randomMarker("hostile-eval")
	evalBody := `{"expression":"document.title + '` + marker + `'"}`
	portOrigin := fmt.Sprintf("http://8081-%s.%s:7070", id, portsDomain)
	if code, body := l.api("POST", "/v1/sandboxes/"+id+"/browser/eval", l.key, strings.NewReader(`{"expression":"document.title"}`)); code != 200 {
		t.Fatalf("positive control: eval through the API without an Origin: %d %s", code, clipS(body))
	}
	if code, body := l.api("POST", "/v1/sandboxes/"+id+"/browser/eval", l.key, strings.NewReader(`{"expression":"document.title"}`), "Origin", "http://"+l.addr); code != 200 {
		t.Fatalf("positive control: eval through the API from its own origin: %d %s", code, clipS(body))
	}
	for _, origin := range []string{portOrigin, "null", "http://attacker.example"} {
		for _, p := range []string{"/browser/eval", "/browser/navigate"} {
			b := evalBody
			if p == "/browser/navigate" {
				b = `{"url":"http://api.test/` + marker + `"}`
			}
			if code, body := l.api("POST", "/v1/sandboxes/"+id+p, l.key, strings.NewReader(b), "Origin", origin); code != 403 {
				t.Errorf("POST %s from origin %s: %d %s, want 403", p, origin, code, clipS(body))
			}
		}
		for _, p := range []string{"/browser/cdp", "/browser/view/ws"} {
			if code := wsStatus(l, "/v1/sandboxes/"+id+p, l.key, origin); code != 403 {
				t.Errorf("WebSocket %s from origin %s: %d, want 403", p, origin, code)
			}
		}
	}
	if code := wsStatus(l, "/v1/sandboxes/"+id+"/browser/cdp", l.key, ""); code != http.StatusSwitchingProtocols {
		t.Errorf("positive control: the DevTools WebSocket without an Origin: %d", code)
	}
	// On the port host the API's paths are the sandbox's own server's.
	u := l.portURL(l.c, id, 8081)
	host := strings.TrimPrefix(portOrigin, "http://")
	code, body := l.api("POST", "/v1/sandboxes/"+id+"/browser/eval?"+url.Values{"paddock_token": {u.Token}}.Encode(), "", strings.NewReader(evalBody), "Host", host)
	if code != 200 || !strings.Contains(body, echoMark) {
		t.Errorf("the API's path on the port host: %d %s, want the sandbox's server", code, clipS(body))
	}
	l.stillServes(id)
	for _, r := range l.records(client.AuditQuery{Sandbox: id, Action: "browser.*"}) {
		if strings.Contains(string(r.Args), marker) {
			t.Errorf("a refused page request was acted on: %s %s", r.Action, r.Args)
		}
	}
	l.audited("the owner's eval", client.AuditQuery{Sandbox: id, Action: "browser.eval"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult
	})
	l.netAudited(id, false, ipSrvHostLab)
}
