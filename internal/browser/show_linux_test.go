//go:build linux

package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// The Show tests: real sandboxes (testenv) with a real Chromium inside,
// browsing a test site served in the lab (lab_linux_test.go) through the
// sandbox's allowlist.

// site is the test site.
func site() http.Handler {
	mux := http.NewServeMux()
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	page("/{$}", `<!doctype html><html><head><title>Test site</title></head><body>
<main><h1>Welcome to the test site</h1>
<p id="status">untouched</p>
<button id="change" onclick="document.getElementById('status').textContent='changed by a click'">Change the page</button>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('greeting').textContent='Hello, '+document.getElementById('name').value">
 <label for="name">Your name</label> <input id="name" name="name">
 <button type="submit">Greet me</button>
</form>
<p id="greeting"></p>
<p>Read <a href="/article">the article</a> or get <a href="/download">a download</a>.</p>
</main></body></html>`)
	page("/article", `<!doctype html><html><head><title>An article</title></head><body>
<nav><a href="/">Home</a> | <a href="/x">Menu item</a></nav>
<article><h1>Sandboxes for agents</h1><p>Paddock runs <strong>isolated</strong> sandboxes.</p>
<h2>Why</h2><ul><li>safety</li><li>speed</li></ul>
<p>See <a href="https://example.org/docs">the docs</a>.</p>
<table><tr><th>What</th><th>Cost</th></tr><tr><td>create</td><td>10 ms</td></tr></table></article>
<footer>Copyright nobody</footer></body></html>`)
	page("/download", `<!doctype html><title>Download</title><a id="dl" href="/files/report.txt">Get the report</a>`)
	mux.HandleFunc("/files/report.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Disposition", `attachment; filename="report.txt"`)
		fmt.Fprint(w, "the quarterly report\n")
	})
	page("/long", `<!doctype html><title>Long</title><body style="margin:0"><div style="height:3000px;background:linear-gradient(red,blue)">top</div><p id="end">the end</p></body>`)
	page("/popup", `<!doctype html><title>Popup</title><a href="/article" target="_blank">Open in a new tab</a>`)
	page("/hang", `<!doctype html><title>Hang</title><script>for(;;){}</script>`)
	page("/oom", `<!doctype html><title>Hungry</title><script>const keep=[];for(;;){keep.push(new Float64Array(1<<20).fill(Math.random()))}</script>`)
	return mux
}

// env is a stack whose sandboxes have the lab's network and a browser
// service.
type env struct {
	*testenv.Env
	lab *lab
	svc *browser.Service
	ctx context.Context
}

func newEnv(t testing.TB, o browser.Options) *env {
	t.Helper()
	testenv.RequireRoot(t)
	requireChromium(t)
	l := newLab(t, site())
	st := l.stack(t)
	e := testenv.New(t, testenv.Options{Network: st, Browser: o}) // the stack's browser service, as serve's
	st.Egress().SetSink(network.Events(e.Manager))                // the proxy's decisions reach the audit log
	return &env{Env: e, lab: l, svc: e.Stack.Browser, ctx: context.Background()}
}

func (e *env) sandbox(t *testing.T, allow ...string) sandbox.Sandbox {
	t.Helper()
	spec := sandbox.Spec{Browser: true, TimeoutS: 600}
	if len(allow) > 0 {
		spec.Network = &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: allow}
	}
	return e.Create(spec)
}

func requireChromium(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(browser.DefaultChromium); err != nil {
		t.Skipf("Debian's chromium is not installed (%s): apt-get install chromium", browser.DefaultChromium)
	}
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func TestShowBrowse(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	if sb.Spec.MemoryMB < 1024 || sb.Spec.Pids < 512 {
		t.Errorf("a browser sandbox got %d MiB and %d pids", sb.Spec.MemoryMB, sb.Spec.Pids)
	}
	sc, id := e.Scope, sb.ID

	p := must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}))
	if p.Title != "Test site" || p.Status != 200 || p.URL != "http://site.test/" {
		t.Fatalf("navigate: %+v", p)
	}

	t.Run("click changes the page", func(t *testing.T) {
		must[wire.Page](t, "click")(e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Text: "Change the page"}}))
		got := must[wire.EvalResult](t, "eval")(e.svc.Eval(e.ctx, sc, id, wire.EvalRequest{Expression: "document.getElementById('status').textContent"}))
		if string(got.Value) != `"changed by a click"` {
			t.Errorf("after the click: %s", got.Value)
		}
	})

	t.Run("type into a form", func(t *testing.T) {
		must[wire.Page](t, "type")(e.svc.Type(e.ctx, sc, id, wire.TypeRequest{Target: wire.Target{Selector: "#name"}, Text: "Ada"}))
		must[wire.Page](t, "type again")(e.svc.Type(e.ctx, sc, id, wire.TypeRequest{Target: wire.Target{Selector: "#name"}, Text: "Grace", Clear: true, Submit: true}))
		txt := must[wire.TextResult](t, "text")(e.svc.Text(e.ctx, sc, id, wire.TextRequest{}))
		if !strings.Contains(txt.Text, "Hello, Grace") || strings.Contains(txt.Text, "AdaGrace") {
			t.Errorf("after typing: %q", txt.Text)
		}
		if !strings.Contains(txt.Text, "changed by a click") || txt.Title != "Test site" {
			t.Errorf("text: %+v", txt)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		shot := must[wire.Screenshot](t, "screenshot")(e.svc.Screenshot(e.ctx, sc, id, wire.ScreenshotRequest{}))
		img, err := png.Decode(bytes.NewReader(shot.PNG))
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		b := img.Bounds()
		if b.Dx() != browser.DefaultWidth || b.Dy() != browser.DefaultHeight || shot.Width != b.Dx() || shot.Height != b.Dy() {
			t.Errorf("screenshot %dx%d (reported %dx%d), want %dx%d", b.Dx(), b.Dy(), shot.Width, shot.Height, browser.DefaultWidth, browser.DefaultHeight)
		}
		must[wire.Page](t, "long")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/long"}))
		full := must[wire.Screenshot](t, "full page")(e.svc.Screenshot(e.ctx, sc, id, wire.ScreenshotRequest{FullPage: true}))
		img, err = png.Decode(bytes.NewReader(full.PNG))
		if err != nil || img.Bounds().Dy() < 3000 || img.Bounds().Dx() != browser.DefaultWidth {
			t.Errorf("full page: %v %v", img.Bounds(), err)
		}
	})

	t.Run("scroll", func(t *testing.T) {
		s := must[wire.ScrollResult](t, "scroll")(e.svc.Scroll(e.ctx, sc, id, wire.ScrollRequest{}))
		if s.Y != 640 || s.AtEnd {
			t.Errorf("scroll down: %+v", s)
		}
		s = must[wire.ScrollResult](t, "scroll to")(e.svc.Scroll(e.ctx, sc, id, wire.ScrollRequest{Target: wire.Target{Selector: "#end"}}))
		if s.Y < 2000 {
			t.Errorf("scroll to #end: %+v", s)
		}
	})

	t.Run("markdown and snapshot refs", func(t *testing.T) {
		must[wire.Page](t, "article")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/article"}))
		md := must[wire.TextResult](t, "markdown")(e.svc.Text(e.ctx, sc, id, wire.TextRequest{Format: wire.FormatMarkdown}))
		for _, want := range []string{"# Sandboxes for agents", "## Why", "- safety", "**isolated**",
			"[the docs](https://example.org/docs)", "| create | 10 ms |"} {
			if !strings.Contains(md.Text, want) {
				t.Errorf("markdown lacks %q:\n%s", want, md.Text)
			}
		}
		if strings.Contains(md.Text, "Copyright") || strings.Contains(md.Text, "Menu item") {
			t.Errorf("markdown kept the page's chrome:\n%s", md.Text)
		}
		must[wire.Page](t, "home")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}))
		snap := must[wire.SnapshotResult](t, "snapshot")(e.svc.Snapshot(e.ctx, sc, id, wire.SnapshotRequest{}))
		ref := refOf(t, snap.Snapshot, `button "Change the page"`)
		if !strings.Contains(snap.Snapshot, `heading "Welcome to the test site" [level=1]`) || !strings.Contains(snap.Snapshot, `textbox "Your name"`) {
			t.Errorf("snapshot:\n%s", snap.Snapshot)
		}
		must[wire.Page](t, "click ref")(e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Ref: ref}}))
		got := must[wire.EvalResult](t, "eval")(e.svc.Eval(e.ctx, sc, id, wire.EvalRequest{Expression: "document.getElementById('status').textContent"}))
		if string(got.Value) != `"changed by a click"` {
			t.Errorf("after clicking %s: %s", ref, got.Value)
		}
		// A navigation makes the references stale.
		must[wire.Page](t, "article")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/article"}))
		_, err := e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Ref: ref}})
		if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(errs.Public(err), "snapshot") {
			t.Errorf("stale ref: %v", err)
		}
	})

	t.Run("press and eval", func(t *testing.T) {
		must[wire.Page](t, "home")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}))
		must[wire.Page](t, "type")(e.svc.Type(e.ctx, sc, id, wire.TypeRequest{Target: wire.Target{Selector: "#name"}, Text: "Lin"}))
		must[wire.Page](t, "press")(e.svc.Press(e.ctx, sc, id, wire.PressRequest{Key: "Enter", Target: wire.Target{Selector: "#name"}}))
		got := must[wire.EvalResult](t, "eval")(e.svc.Eval(e.ctx, sc, id, wire.EvalRequest{Expression: "await Promise.resolve(document.getElementById('greeting').textContent)"}))
		if string(got.Value) != `"Hello, Lin"` || got.Type != "string" {
			t.Errorf("after Enter: %+v %s", got, got.Value)
		}
		_, err := e.svc.Eval(e.ctx, sc, id, wire.EvalRequest{Expression: "throw new Error('boom')"})
		if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(errs.Public(err), "boom") {
			t.Errorf("a throwing script: %v", err)
		}
	})

	t.Run("tabs", func(t *testing.T) {
		tab := must[wire.Tab](t, "open")(e.svc.OpenTab(e.ctx, sc, id, wire.OpenTabRequest{URL: "http://site.test/article"}))
		tabs := must[wire.Tabs](t, "list")(e.svc.Tabs(e.ctx, sc, id))
		if len(tabs.Tabs) != 2 || !current(tabs, tab.ID) {
			t.Fatalf("tabs after open: %+v", tabs)
		}
		txt := must[wire.TextResult](t, "text")(e.svc.Text(e.ctx, sc, id, wire.TextRequest{}))
		if txt.Tab != tab.ID || !strings.Contains(txt.Text, "Sandboxes for agents") {
			t.Errorf("actions go to the new tab: %+v", txt)
		}
		must[wire.Tab](t, "switch")(e.svc.SwitchTab(e.ctx, sc, id, "0"))
		txt = must[wire.TextResult](t, "text")(e.svc.Text(e.ctx, sc, id, wire.TextRequest{}))
		if !strings.Contains(txt.Text, "Welcome to the test site") {
			t.Errorf("after switching back: %q", txt.Text)
		}
		tabs = must[wire.Tabs](t, "close")(e.svc.CloseTab(e.ctx, sc, id, tab.ID))
		if len(tabs.Tabs) != 1 || tabs.Tabs[0].ID == tab.ID {
			t.Errorf("after close: %+v", tabs)
		}
		// A link that opens a tab reports it.
		must[wire.Page](t, "popup")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/popup"}))
		p := must[wire.Page](t, "click")(e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Text: "Open in a new tab"}}))
		if len(p.NewTabs) != 1 {
			t.Errorf("new tabs: %+v", p)
		}
	})

	// The actions are on the audit trail, attributed to the caller.
	for _, kind := range []string{"browser.start", "browser.navigate", "browser.click", "browser.type", "browser.eval"} {
		waitAudit(t, e, id, kind)
	}
}

func current(tabs wire.Tabs, id string) bool {
	for _, t := range tabs.Tabs {
		if t.Current {
			return t.ID == id
		}
	}
	return false
}

// refOf finds the reference of the snapshot line that contains what.
func refOf(t *testing.T, snap, what string) string {
	t.Helper()
	for _, line := range strings.Split(snap, "\n") {
		if strings.Contains(line, what) {
			if i := strings.Index(line, "[ref="); i >= 0 {
				return strings.TrimSuffix(strings.Fields(line[i+5:])[0], "]")
			}
		}
	}
	t.Fatalf("no %q in the snapshot:\n%s", what, snap)
	return ""
}

func waitAudit(t *testing.T, e *env, id, kind string) {
	t.Helper()
	if e.AuditLog() == nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range e.AuditRecords(audit.Query{Sandbox: id}) {
			if r.Action == kind && r.Phase == "result" && r.Actor == e.Scope.Actor {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("no audit record %s for %s", kind, id)
}

func TestShowRefusedNavigation(t *testing.T) {
	e := newEnv(t, browser.Options{})
	// Positive control: blocked.test answers whoever can reach it.
	if body, err := e.lab.get("http://" + blockedAddr + "/"); err != nil || !strings.Contains(body, "hello from blocked.test") {
		t.Fatalf("positive control: %q %v", body, err)
	}
	before := e.lab.blocked.n.Load()
	allow := e.sandbox(t, "site.test")
	none := e.sandbox(t)
	for _, tc := range []struct {
		name, id, url, want string
	}{
		{"a name outside the allowlist", allow.ID, "http://blocked.test/", "allowlist (site.test) does not include blocked.test:80"},
		{"an address outside the allowlist", allow.ID, "http://" + blockedAddr + "/", "does not include the address " + blockedAddr},
		{"a sandbox without network", none.ID, "http://site.test/", `mode is "none"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.Navigate(e.ctx, e.Scope, tc.id, wire.NavigateRequest{URL: tc.url})
			msg := errs.Public(err)
			if errs.CodeOf(err) != errs.CodeForbidden || !strings.Contains(msg, "network policy") || !strings.Contains(msg, tc.want) {
				t.Fatalf("want a refusal naming the policy (%q), got %v", tc.want, err)
			}
			t.Logf("refused: %s", msg)
		})
	}
	if n := e.lab.blocked.n.Load() - before; n != 0 {
		t.Errorf("blocked.test served the sandboxes %d requests", n)
	}
	// The allowed site works in the same sandbox (the refusal is the
	// policy's, not a broken browser).
	p := must[wire.Page](t, "allowed")(e.svc.Navigate(e.ctx, e.Scope, allow.ID, wire.NavigateRequest{URL: "http://site.test/"}))
	if p.Title != "Test site" {
		t.Errorf("allowed navigation: %+v", p)
	}
}

func TestShowDownload(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, e.Scope, sb.ID, wire.NavigateRequest{URL: "http://site.test/download"}))
	must[wire.Page](t, "click")(e.svc.Click(e.ctx, e.Scope, sb.ID, wire.ClickRequest{Target: wire.Target{Selector: "#dl"}}))
	// The file lands in the sandbox's files: read it with the files API.
	var data []byte
	deadline := time.Now().Add(15 * time.Second)
	for {
		var err error
		data, err = e.Client.ReadFile(e.ctx, sb.ID, browser.DefaultDownloadDir+"/report.txt")
		if err == nil || time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("the download never landed: %v", err)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if string(data) != "the quarterly report\n" {
		t.Errorf("downloaded %q", data)
	}
	dl := must[wire.Downloads](t, "downloads")(e.svc.Downloads(e.ctx, e.Scope, sb.ID))
	if len(dl.Downloads) != 1 || dl.Downloads[0].Filename != "report.txt" || dl.Downloads[0].URL != "http://site.test/files/report.txt" {
		t.Errorf("downloads: %+v", dl)
	}
}

func TestShowSelectorTimeout(t *testing.T) {
	e := newEnv(t, browser.Options{ActionTimeout: 1500 * time.Millisecond})
	sb := e.sandbox(t, "site.test")
	must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, e.Scope, sb.ID, wire.NavigateRequest{URL: "http://site.test/"}))
	for _, tc := range []struct {
		target wire.Target
		ms     int64
		want   string
	}{
		{wire.Target{Selector: "#no-such-thing"}, 0, `no element matches "#no-such-thing" on http://site.test/`},
		{wire.Target{Text: "Nothing says this"}, 300, `no element matches text="Nothing says this"`},
	} {
		start := time.Now()
		_, err := e.svc.Click(e.ctx, e.Scope, sb.ID, wire.ClickRequest{Target: tc.target, TimeoutMs: tc.ms})
		if errs.CodeOf(err) != errs.CodeTimeout || !strings.Contains(errs.Public(err), tc.want) {
			t.Errorf("%+v: want a timeout naming the selector, got %v", tc.target, err)
		}
		t.Logf("%v after %v", err, time.Since(start).Round(time.Millisecond))
	}
	_, err := e.svc.Click(e.ctx, e.Scope, sb.ID, wire.ClickRequest{Target: wire.Target{Selector: "a[["}})
	if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(errs.Public(err), "not a valid CSS selector") {
		t.Errorf("a bad selector: %v", err)
	}
	_, err = e.svc.Type(e.ctx, e.Scope, sb.ID, wire.TypeRequest{Target: wire.Target{Selector: "h1"}, Text: "x"})
	if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(errs.Public(err), "does not take text") {
		t.Errorf("typing into a heading: %v", err)
	}
}

// A page that hangs is cut off by the action's timeout and the sandbox's
// CPU limit; one that allocates without bound by the sandbox's memory
// limit. The browser recovers from both.
func TestShowHostilePages(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	sc, id := e.Scope, sb.ID
	must[wire.Page](t, "warm up")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}))

	_, err := e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/hang", TimeoutMs: 3000})
	if errs.CodeOf(err) != errs.CodeTimeout {
		t.Errorf("a hung page: %v", err)
	}
	p := must[wire.Page](t, "after the hang")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}))
	if p.Title != "Test site" {
		t.Errorf("after the hang: %+v", p)
	}

	before := must[sbStats](t, "stats")(e.Manager.Stats(e.ctx, sc, id))
	op, err := e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/oom", TimeoutMs: 60000})
	if err == nil {
		st, _ := e.svc.Status(e.ctx, sc, id)
		after, _ := e.Manager.Stats(e.ctx, sc, id)
		t.Fatalf("a page that allocates without bound loaded: %+v; browser %+v; stats %+v -> %+v", op, st, before, after)
	}
	t.Logf("the hungry page: %v", err)
	after := must[sbStats](t, "stats")(e.Manager.Stats(e.ctx, sc, id))
	if !strings.Contains(errs.Public(err), "crashed") {
		t.Errorf("want a crash report, got %v", err)
	}
	if after.OOMKills <= before.OOMKills {
		t.Logf("note: the renderer ended without a cgroup OOM kill (V8's own heap limit): %d -> %d", before.OOMKills, after.OOMKills)
	}
	p = must[wire.Page](t, "after the OOM")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}))
	if p.Title != "Test site" {
		t.Errorf("after the OOM: %+v", p)
	}
	st := must[wire.Status](t, "status")(e.svc.Status(e.ctx, sc, id))
	if st.State != "running" {
		t.Errorf("status: %+v", st)
	}
}

type sbStats = sandbox.Stats

// A browser that crashes (here: killed from inside the sandbox) is
// restarted, and the next action works.
func TestShowCrashRestarts(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	sc, id := e.Scope, sb.ID
	must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}))
	st := must[wire.Status](t, "status")(e.svc.Status(e.ctx, sc, id))
	// The browser runs as the sandbox's user (uid 1000); root in the
	// sandbox has no capability to signal another user's processes.
	res, err := e.Client.Exec(e.ctx, id, client.ExecRequest{Cmd: []string{"kill", "-9", fmt.Sprint(st.Pid)}, User: "user"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("kill: %+v %v", res, err)
	}
	// A click is not repeated for the caller (nor tried on the restarted
	// browser's blank page): it reports the crash.
	_, err = e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Selector: "#change"}})
	if err == nil || !strings.Contains(errs.Public(err), "crashed (killed by SIGKILL)") {
		t.Errorf("a click during the crash: %v", err)
	}
	// The navigation meets the dead connection, waits for the restart and
	// loads the page in the new browser.
	p := must[wire.Page](t, "after the crash")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/article"}))
	if p.Title != "An article" {
		t.Errorf("after the restart: %+v", p)
	}
	st2 := must[wire.Status](t, "status")(e.svc.Status(e.ctx, sc, id))
	if st2.Restarts != 1 || st2.Pid == st.Pid || !strings.Contains(st2.LastExit, "SIGKILL") {
		t.Errorf("status after the crash: %+v", st2)
	}
}

// Another tenant's sandbox has no browser for them; a read-only key cannot
// act on the browser.
func TestShowScopes(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	other := sandbox.Scope{Tenant: "someone-else", Actor: "k2", Rights: rights.All}
	if _, err := e.svc.Navigate(e.ctx, other, sb.ID, wire.NavigateRequest{URL: "http://site.test/"}); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("another tenant: %v", err)
	}
	if _, err := e.svc.Status(e.ctx, other, sb.ID); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("another tenant's status: %v", err)
	}
	js, _ := json.Marshal(map[string]string{"url": "http://site.test/"})
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/v1/sandboxes/"+sb.ID+"/browser/navigate", bytes.NewReader(js))
	req.Header.Set("Authorization", "Bearer not-a-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: %d", resp.StatusCode)
	}
}
