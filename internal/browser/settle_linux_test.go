//go:build linux

package browser_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/testenv"
)

// An input that starts a navigation returns once the navigation ended —
// also when it loads no new page (a download, a 204), which fires no load
// event: the action used to wait for one until its timeout. And input
// reaches a tab after the page opened a popup window in front of it
// (Chromium used to hold it for 5 s).
func TestShowInputNavigations(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/", site())
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/links", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>Links</title>
<a id="download" href="/files/report.txt">a download</a> <a id="nocontent" href="/nocontent">no content</a>
<a id="page" href="/article">a page</a> <a id="popup" href="/article" target="_blank">a popup</a>`))
	})
	e := newEnvWith(t, browser.Options{}, mux)
	sb := e.sandbox(t, "site.test")
	sc, id := e.Scope, sb.ID
	const timeoutMs = 10000
	for _, tc := range []struct {
		link, url, title string
		downloads        int
	}{
		{"#page", "http://site.test/article", "An article", 0},
		{"#download", "http://site.test/links", "Links", 1},
		{"#nocontent", "http://site.test/links", "Links", 0},
	} {
		must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/links"}))
		p, err := e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Selector: tc.link}, TimeoutMs: timeoutMs})
		if err != nil {
			t.Errorf("click %s: %v", tc.link, err)
			continue
		}
		// Ended by the navigation's end, not by the action's deadline.
		if p.DurationMs >= timeoutMs {
			t.Errorf("click %s returned at its timeout (%.0f ms): it waited for a load that never came", tc.link, p.DurationMs)
		}
		if p.URL != tc.url || p.Title != tc.title || len(p.Downloads) != tc.downloads {
			t.Errorf("click %s: %+v", tc.link, p)
		}
	}

	// A popup opens in front of the tab; the tab still takes input (with a
	// timeout below the 5 s Chromium held it for).
	must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/links"}))
	p := must[wire.Page](t, "click the popup link")(e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Selector: "#popup"}}))
	if len(p.NewTabs) != 1 || p.URL != "http://site.test/links" {
		t.Fatalf("the popup: %+v", p)
	}
	must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}))
	if _, err := e.svc.Type(e.ctx, sc, id, wire.TypeRequest{Target: wire.Target{Selector: "#name"}, Text: "Ada", Submit: true, TimeoutMs: 3000}); err != nil {
		t.Fatalf("type behind a popup: %v (%s)", err, errs.CodeOf(err))
	}
	if _, err := e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Selector: "#change"}, TimeoutMs: 3000}); err != nil {
		t.Fatalf("click behind a popup: %v", err)
	}
	txt := must[wire.TextResult](t, "text")(e.svc.Text(e.ctx, sc, id, wire.TextRequest{}))
	if !strings.Contains(txt.Text, "Hello, Ada") || !strings.Contains(txt.Text, "changed by a click") {
		t.Errorf("the input did not reach the page: %q", txt.Text)
	}
}

// newEnvWith is newEnv with another test site.
func newEnvWith(t testing.TB, o browser.Options, h http.Handler) *env {
	t.Helper()
	testenv.RequireRoot(t)
	requireChromium(t)
	l := newLab(t, h)
	st := l.stack(t)
	e := testenv.New(t, testenv.Options{Network: st, Browser: o})
	st.Egress().SetSink(network.Events(e.Manager))
	return &env{Env: e, lab: l, svc: e.Stack.Browser, ctx: context.Background()}
}
