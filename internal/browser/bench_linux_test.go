//go:build linux

package browser_test

import (
	"sort"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/sandbox"
	pwire "github.com/paddockhq/paddock/wire"
)

// Benchmarks (docs/browser.md): go test -run XXX -bench . -benchtime 10x ./internal/browser/

func p50(ds []time.Duration) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Microseconds()) / 1000
}

func benchEnv(b *testing.B) *env {
	b.Helper()
	return newEnv(b, browser.Options{})
}

// BenchmarkFirstNavigation: a new sandbox's first navigation. "lazy": the
// navigation starts the browser; "at-create": a sandbox created with
// browser: true, timed from the create to the page loaded; "ready": the
// same, the navigation sent once the browser is up (an agent that does
// anything else first).
func BenchmarkFirstNavigation(b *testing.B) {
	e := benchEnv(b)
	for _, mode := range []string{"lazy", "at-create", "ready"} {
		b.Run(mode, func(b *testing.B) {
			var ds []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				spec := sandbox.Spec{Network: &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"site.test"}}, MemoryMB: 1024, Pids: 1024}
				var start time.Time
				spec.Browser = mode != "lazy"
				if mode == "at-create" {
					start = time.Now()
				}
				b.StartTimer()
				sb, err := e.Manager.Create(e.ctx, e.Scope, spec)
				if err != nil {
					b.Fatal(err)
				}
				if mode == "ready" {
					b.StopTimer()
					waitReady(b, e, sb.ID)
					b.StartTimer()
				}
				if mode != "at-create" {
					start = time.Now()
				}
				if _, err := e.svc.Navigate(e.ctx, e.Scope, sb.ID, wire.NavigateRequest{URL: "http://site.test/"}); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
				b.StopTimer()
				_ = e.Manager.Delete(e.ctx, e.Scope, sb.ID)
				b.StartTimer()
			}
			b.ReportMetric(p50(ds), "p50-ms")
		})
	}
}

// waitReady waits for the browser started at create to be connected, with
// its tab attached (the status reports it connected once it is).
func waitReady(b *testing.B, e *env, id string) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := e.svc.Status(e.ctx, e.Scope, id); err == nil && st.Connected && len(st.Tabs) > 0 {
			time.Sleep(100 * time.Millisecond) // the tab's attach follows the connect
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatal("the browser started at create never came up")
}

// BenchmarkScreenshot: a PNG of the viewport of a loaded page.
func BenchmarkScreenshot(b *testing.B) {
	e := benchEnv(b)
	sb, err := e.Manager.Create(e.ctx, e.Scope, sandbox.Spec{Browser: true, Network: &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"site.test"}}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.svc.Navigate(e.ctx, e.Scope, sb.ID, wire.NavigateRequest{URL: "http://site.test/article"}); err != nil {
		b.Fatal(err)
	}
	for _, full := range []bool{false, true} {
		name := "viewport"
		if full {
			name = "full-page"
		}
		b.Run(name, func(b *testing.B) {
			var ds []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := e.svc.Screenshot(e.ctx, e.Scope, sb.ID, wire.ScreenshotRequest{FullPage: full}); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			b.ReportMetric(p50(ds), "p50-ms")
		})
	}
}

// BenchmarkActions: the other actions on a loaded page.
func BenchmarkActions(b *testing.B) {
	e := benchEnv(b)
	sb, err := e.Manager.Create(e.ctx, e.Scope, sandbox.Spec{Browser: true, Network: &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"site.test"}}})
	if err != nil {
		b.Fatal(err)
	}
	sc, id := e.Scope, sb.ID
	if _, err := e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"}); err != nil {
		b.Fatal(err)
	}
	for _, a := range []struct {
		name string
		fn   func() error
	}{
		{"navigate-warm", func() error {
			_, err := e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/"})
			return err
		}},
		{"click", func() error {
			_, err := e.svc.Click(e.ctx, sc, id, wire.ClickRequest{Target: wire.Target{Selector: "#change"}})
			return err
		}},
		{"type-5-chars", func() error {
			_, err := e.svc.Type(e.ctx, sc, id, wire.TypeRequest{Target: wire.Target{Selector: "#name"}, Text: "hello", Clear: true})
			return err
		}},
		{"text", func() error {
			_, err := e.svc.Text(e.ctx, sc, id, wire.TextRequest{})
			return err
		}},
		{"markdown", func() error {
			_, err := e.svc.Text(e.ctx, sc, id, wire.TextRequest{Format: wire.FormatMarkdown})
			return err
		}},
		{"snapshot", func() error {
			_, err := e.svc.Snapshot(e.ctx, sc, id, wire.SnapshotRequest{})
			return err
		}},
		{"eval", func() error {
			_, err := e.svc.Eval(e.ctx, sc, id, wire.EvalRequest{Expression: "1+1"})
			return err
		}},
	} {
		b.Run(a.name, func(b *testing.B) {
			var ds []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := a.fn(); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			b.ReportMetric(p50(ds), "p50-ms")
		})
	}
}

// BenchmarkBrowserMemory reports the sandbox's memory cgroup (what its
// limit counts) without the browser, with the browser and one page, and
// with two more tabs: the browser's memory is the sandbox's.
func BenchmarkBrowserMemory(b *testing.B) {
	e := benchEnv(b)
	var idle, one, three, peak float64
	for i := 0; i < b.N; i++ {
		sb, err := e.Manager.Create(e.ctx, e.Scope, sandbox.Spec{MemoryMB: 1024, Pids: 1024,
			Network: &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"site.test"}}})
		if err != nil {
			b.Fatal(err)
		}
		mib := func() float64 {
			time.Sleep(500 * time.Millisecond) // let it settle
			st, err := e.Manager.Stats(e.ctx, e.Scope, sb.ID)
			if err != nil {
				b.Fatal(err)
			}
			peak = float64(st.MemoryPeakBytes) / (1 << 20)
			return float64(st.MemoryBytes) / (1 << 20)
		}
		idle += mib()
		if _, err := e.svc.Navigate(e.ctx, e.Scope, sb.ID, wire.NavigateRequest{URL: "http://site.test/article"}); err != nil {
			b.Fatal(err)
		}
		one += mib()
		for j := 0; j < 2; j++ {
			if _, err := e.svc.OpenTab(e.ctx, e.Scope, sb.ID, wire.OpenTabRequest{URL: "http://site.test/"}); err != nil {
				b.Fatal(err)
			}
		}
		three += mib()
		_ = e.Manager.Delete(e.ctx, e.Scope, sb.ID)
	}
	n := float64(b.N)
	b.ReportMetric(idle/n, "MiB-no-browser")
	b.ReportMetric(one/n, "MiB-browser-1-tab")
	b.ReportMetric(three/n, "MiB-browser-3-tabs")
	b.ReportMetric(peak, "MiB-peak-last")
}

// BenchmarkBrowserRuntimes: the browser's start cost on each runtime,
// interleaved (one native and one gVisor sandbox per iteration, so load
// from elsewhere hits both alike): a browser: true sandbox's create to its
// first page loaded over its allowlist, and Chromium's launch to DevTools
// listening (the guest's start_ms). Skips gVisor without runsc.
//
//	go test -run '^$' -bench BrowserRuntimes -benchtime 5x ./internal/browser/
func BenchmarkBrowserRuntimes(b *testing.B) {
	e := benchEnv(b)
	rts := []string{pwire.RuntimeNative}
	if _, err := gvisor.FindRunsc(""); err == nil {
		rts = append(rts, pwire.RuntimeGVisor)
	} else {
		b.Logf("no runsc: native only")
	}
	first := map[string][]time.Duration{}
	launch := map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for _, rt := range rts {
			spec := sandbox.Spec{Runtime: rt, Browser: true, MemoryMB: 1024, Pids: 1024,
				Network: &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"site.test"}}}
			start := time.Now()
			sb, err := e.Manager.Create(e.ctx, e.Scope, spec)
			if err != nil {
				b.Fatalf("%s: %v", rt, err)
			}
			if _, err := e.svc.Navigate(e.ctx, e.Scope, sb.ID, wire.NavigateRequest{URL: "http://site.test/"}); err != nil {
				b.Fatalf("%s: %v", rt, err)
			}
			first[rt] = append(first[rt], time.Since(start))
			if st, err := e.svc.Status(e.ctx, e.Scope, sb.ID); err == nil {
				launch[rt] = append(launch[rt], time.Duration(st.StartMs*float64(time.Millisecond)))
			}
			_ = e.Manager.Delete(e.ctx, e.Scope, sb.ID)
		}
	}
	for _, rt := range rts {
		b.ReportMetric(p50(first[rt]), rt+"-first-page-p50-ms")
		if len(launch[rt]) > 0 {
			b.ReportMetric(p50(launch[rt]), rt+"-launch-p50-ms")
		}
	}
	if len(rts) == 2 {
		b.ReportMetric(p50(first[rts[1]])/p50(first[rts[0]]), "gvisor/native-first-page")
	}
}
