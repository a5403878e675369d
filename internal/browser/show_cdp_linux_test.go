//go:build linux

package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/testenv"
)

// playwrightVersion is the playwright-core the CDP test installs: one
// that supports Chromium 156 (and runs on Node 20).
const playwrightVersion = "1.65.1"

const playwrightScript = `
const { chromium } = require('playwright-core');
(async () => {
  const browser = await chromium.connectOverCDP(process.env.CDP_URL, { headers: { Authorization: 'Bearer ' + process.env.KEY } });
  const context = browser.contexts()[0];
  const page = context.pages()[0] || await context.newPage();
  await page.goto('http://site.test/');
  const h1 = await page.textContent('h1');
  await page.click('#change');
  const status = await page.textContent('#status');
  await page.fill('#name', 'Playwright');
  await page.click('text=Greet me');
  const greeting = await page.textContent('#greeting');
  const shot = await page.screenshot();
  console.log(JSON.stringify({ h1, status, greeting, version: browser.version(), shot: shot.length }));
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
`

// The unmodified playwright-core client drives the sandbox's browser
// through Paddock's CDP endpoint (its json/version/ discovery and the
// WebSocket), authenticated by a Bearer header.
func TestShowPlaywright(t *testing.T) {
	node, nerr := exec.LookPath("node")
	npm, perr := exec.LookPath("npm")
	if nerr != nil || perr != nil {
		t.Skip("node and npm are needed for the unmodified Playwright client (apt-get install nodejs npm)")
	}
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
		"playwright-core@"+playwrightVersion)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install playwright-core@%s: %v\n%s", playwrightVersion, err, out)
	}
	script := filepath.Join(dir, "drive.js")
	if err := os.WriteFile(script, []byte(playwrightScript), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, node, script)
	run.Dir = dir
	run.Env = append(os.Environ(), "CDP_URL="+e.Client.BrowserCDPURL(sb.ID), "KEY="+e.AdminKey)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("playwright: %v\n%s", err, stderr.String())
	}
	var res struct {
		H1, Status, Greeting, Version string
		Shot                          int
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil {
		t.Fatalf("playwright printed %q: %v", out, err)
	}
	if res.H1 != "Welcome to the test site" || res.Status != "changed by a click" || res.Greeting != "Hello, Playwright" ||
		!strings.HasPrefix(res.Version, chromiumMajor(t)+".") || res.Shot < 1000 {
		t.Errorf("playwright saw %+v", res)
	}
	// Playwright's page is the sandbox's: the service sees what it did.
	txt := must[wire.TextResult](t, "text")(e.svc.Text(e.ctx, e.Scope, sb.ID, wire.TextRequest{}))
	if !strings.Contains(txt.Text, "Hello, Playwright") {
		t.Errorf("after Playwright: %q", txt.Text)
	}
	waitAudit(t, e, sb.ID, "browser.cdp")
}

// The discovery documents point at Paddock, never at the sandbox's
// loopback; the CDP WebSocket needs a key.
func TestShowCDPEndpoint(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t)
	base := e.Server.URL + "/v1/sandboxes/" + sb.ID + "/browser"
	get := func(path, key string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, path := range []string{"/json/version", "/json/version/"} {
		resp, body := get(path, e.AdminKey)
		var v map[string]any
		if resp.StatusCode != 200 || json.Unmarshal(body, &v) != nil {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		wantWS := "ws" + strings.TrimPrefix(base, "http") + "/cdp"
		if v["webSocketDebuggerUrl"] != wantWS || !strings.HasPrefix(v["Browser"].(string), "Chrome/"+chromiumMajor(t)+".") {
			t.Errorf("%s: %s", path, body)
		}
	}
	resp, body := get("/json/list", e.AdminKey)
	wsBase := "ws" + strings.TrimPrefix(base, "http")
	if resp.StatusCode != 200 || strings.Contains(string(body), "/devtools/") || !strings.Contains(string(body), wsBase+"/cdp/page/") {
		t.Errorf("json/list: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get("/json/version", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("json/version without a key: %d", resp.StatusCode)
	}
	// A raw CDP exchange over the WebSocket: Browser.getVersion.
	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/cdp"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, wsURL, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("CDP without a key: %v %v", err, resp)
	}
	c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{api.WSProtocol, "bearer." + e.AdminKey}})
	if err != nil {
		t.Fatalf("CDP dial: %v", err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != api.WSProtocol {
		t.Errorf("subprotocol %q", c.Subprotocol())
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Browser.getVersion"}`)); err != nil {
		t.Fatal(err)
	}
	_, msg, err := c.Read(ctx)
	if err != nil || !strings.Contains(string(msg), `"product":"Chrome/`+chromiumMajor(t)+`.`) {
		t.Errorf("Browser.getVersion: %s %v", msg, err)
	}
}

// The live view: a page (token-authenticated) and its screencast.
func TestShowLiveView(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, e.Scope, sb.ID, wire.NavigateRequest{URL: "http://site.test/"}))
	token := mintToken(t, e.Env, sb.ID, "read")
	page := e.Client.BrowserViewURL(sb.ID, token)
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
		!strings.Contains(string(body), "/ws") || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("view page: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if resp, err := http.Get(e.Client.BrowserViewURL(sb.ID, "")); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("view without a token: %v %v", resp.StatusCode, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(e.Server.URL, "http") + "/v1/sandboxes/" + sb.ID + "/browser/view/ws"
	c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{api.WSProtocol, "bearer." + token}})
	if err != nil {
		t.Fatalf("view socket: %v", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(16 << 20)
	var sawTab, sawFrame bool
	for !(sawTab && sawFrame) {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("view socket read (tab %v, frame %v): %v", sawTab, sawFrame, err)
		}
		switch typ {
		case websocket.MessageText:
			var ev map[string]string
			if json.Unmarshal(msg, &ev) == nil && ev["type"] == "tab" && ev["url"] == "http://site.test/" {
				sawTab = true
			}
		case websocket.MessageBinary:
			img, err := jpeg.Decode(bytes.NewReader(msg))
			if err != nil {
				t.Fatalf("a frame is not a JPEG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != browser.DefaultWidth || b.Dy() != browser.DefaultHeight {
				t.Errorf("frame %v", b)
			}
			sawFrame = true
		}
	}
	// The screen follows the agent: a navigation shows up as a new page.
	must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, e.Scope, sb.ID, wire.NavigateRequest{URL: "http://site.test/article"}))
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("view socket after the navigation: %v", err)
		}
		if typ == websocket.MessageText && strings.Contains(string(msg), "http://site.test/article") {
			break
		}
	}
}

func mintToken(t *testing.T, e *testenv.Env, id, scope string) string {
	t.Helper()
	js, _ := json.Marshal(map[string]any{"scopes": []string{scope}, "ttl_s": 600})
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/v1/sandboxes/"+id+"/tokens", bytes.NewReader(js))
	req.Header.Set("Authorization", "Bearer "+e.AdminKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.Token == "" {
		t.Fatalf("mint a token: %d %v", resp.StatusCode, err)
	}
	return tok.Token
}

// The REST API and the Go client, end to end; a read-only token may look
// but not act.
func TestShowREST(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	c, ctx, id := e.Client, e.ctx, sb.ID
	p, err := c.BrowserNavigate(ctx, id, client.NavigateRequest{URL: "http://site.test/"})
	if err != nil || p.Title != "Test site" {
		t.Fatalf("navigate: %+v %v", p, err)
	}
	if _, err := c.BrowserClick(ctx, id, client.ClickRequest{Target: client.BrowserTarget{Selector: "text=Change the page"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BrowserType(ctx, id, client.TypeRequest{Target: client.BrowserTarget{Selector: "#name"}, Text: "REST", Submit: true}); err != nil {
		t.Fatal(err)
	}
	txt, err := c.BrowserText(ctx, id, client.TextRequest{})
	if err != nil || !strings.Contains(txt.Text, "Hello, REST") || !strings.Contains(txt.Text, "changed by a click") {
		t.Errorf("text: %+v %v", txt, err)
	}
	shot, err := c.BrowserScreenshot(ctx, id, client.ScreenshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(shot.PNG)); err != nil || cfg.Width != shot.Width || cfg.Height != shot.Height ||
		shot.Width != browser.DefaultWidth || shot.URL != "http://site.test/" {
		t.Errorf("screenshot: %+v %v %+v", cfg, err, shot.URL)
	}
	snap, err := c.BrowserSnapshot(ctx, id, client.SnapshotRequest{})
	if err != nil || snap.Refs == 0 {
		t.Errorf("snapshot: %+v %v", snap, err)
	}
	tab, err := c.BrowserOpenTab(ctx, id, client.OpenTabRequest{URL: "http://site.test/article"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.BrowserSwitchTab(ctx, id, tab.ID[:8]); err != nil {
		t.Errorf("switch by id prefix: %v", err)
	}
	tabs, err := c.BrowserCloseTab(ctx, id, tab.ID)
	if err != nil || len(tabs.Tabs) != 1 {
		t.Errorf("close: %+v %v", tabs, err)
	}
	st, err := c.BrowserStatus(ctx, id)
	if err != nil || st.State != "running" || !st.Connected || len(st.Tabs) != 1 {
		t.Errorf("status: %+v %v", st, err)
	}
	// A read-only sandbox token: reading works, acting is refused.
	ro := client.New(e.Server.URL, mintToken(t, e.Env, id, "read"))
	if _, err := ro.BrowserText(ctx, id, client.TextRequest{}); err != nil {
		t.Errorf("read-only text: %v", err)
	}
	if _, err := ro.BrowserNavigate(ctx, id, client.NavigateRequest{URL: "http://site.test/"}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("read-only navigate: %v", err)
	}
	if _, err := c.BrowserNavigate(ctx, "sb-nosuchsandbox", client.NavigateRequest{URL: "http://site.test/"}); !client.IsNotFound(err) {
		t.Errorf("unknown sandbox: %v", err)
	}
	if _, err := c.BrowserNavigate(ctx, id, client.NavigateRequest{URL: "javascript:alert(1)"}); err == nil || !strings.Contains(err.Error(), "invalid_argument") {
		t.Errorf("javascript: URL: %v", err)
	}
}

// A server without a browser service answers 501 on the browser routes.
func TestBrowserRoutesWithoutService(t *testing.T) {
	testenv.RequireRoot(t)
	e := testenv.New(t, testenv.Options{NoBrowser: true}) // testenv's stack otherwise has serve's
	sb := e.Create(client.Spec{})
	_, err := e.Client.BrowserNavigate(context.Background(), sb.ID, client.NavigateRequest{URL: "about:blank"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusNotImplemented {
		t.Errorf("without a browser service: %v", err)
	}
}

// chromiumMajor is the installed Chromium's major version ("156"), from
// its --version line: CI installs whatever Debian ships that day.
func chromiumMajor(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(browser.DefaultChromium, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", browser.DefaultChromium, err)
	}
	for _, f := range strings.Fields(string(out)) {
		if major, _, ok := strings.Cut(f, "."); ok && major != "" && strings.Trim(major, "0123456789") == "" {
			return major
		}
	}
	t.Fatalf("no version in %q", out)
	return ""
}
