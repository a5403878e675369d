package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/client"
)

// browserPage is what the browser scenarios load: a data: URL, so that
// they need no network and measure the browser, not a web server.
const browserPage = "data:text/html,<!doctype html><title>paddock bench</title><h1>paddock bench</h1><p>first navigation</p>"

// browserSandboxes is how many fresh sandboxes (first navigations) the
// browser scenarios make: each starts a Chromium.
func (r *runner) browserSandboxes() int { return max(3, r.o.Runs/20) }

// screenshotsPerSandbox are taken after each first navigation.
const screenshotsPerSandbox = 3

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// browser measures, in fresh sandboxes, the first navigation (which
// starts the sandbox's Chromium: its launch is in the number) and then
// screenshots of the loaded page, all through the REST browser API.
func (r *runner) browser(ctx context.Context, st *Stack) {
	nav, shot := r.result(sBrowserNav), r.result(sBrowserShot)
	if why := r.caps.lacks("/browser/navigate", "the browser API"); why != "" {
		r.set(nav.without(StatusUnavailable, why))
		r.set(shot.without(StatusUnavailable, why))
		return
	}
	n := r.browserSandboxes()
	r.prog.start(sBrowserNav, n)
	var navs, shots []time.Duration
	var navErrs, shotErrs int
	var navLast, shotLast error
	var starts []time.Duration
	var shotBytes int
	var gotSpec client.Spec // what the server gave a browser sandbox
	for i := 0; i < n && ctx.Err() == nil; i++ {
		spec := r.spec()
		spec.Browser = true // a sandbox made for browsing: its browser starts at create, with a browser's default limits
		sb, err := r.create(ctx, st, spec)
		if err != nil {
			navErrs, navLast = navErrs+1, fmt.Errorf("create: %w", err)
			r.prog.step(1)
			continue
		}
		gotSpec = sb.Spec
		t := time.Now()
		page, err := st.Client.BrowserNavigate(ctx, sb.ID, client.NavigateRequest{URL: browserPage})
		d := time.Since(t)
		if err == nil && page.Title != "paddock bench" {
			err = fmt.Errorf("the page loaded with title %q", page.Title)
		}
		if err != nil {
			navErrs, navLast = navErrs+1, err
			if i == 0 && len(navs) == 0 {
				// The first try decides whether this server can run a
				// browser at all (Chromium missing, not startable...).
				_ = r.remove(ctx, st, sb.ID)
				status, why := StatusFailed, "the first navigation failed: "+err.Error()
				var ce *client.Error
				if errors.As(err, &ce) && ce.Code == "unsupported" {
					status, why = StatusUnavailable, ce.Message
				}
				r.set(nav.without(status, why))
				r.set(shot.without(status, why))
				return
			}
		} else {
			navs = append(navs, d)
			if bs, err := st.Client.BrowserStatus(ctx, sb.ID); err == nil && bs.StartMs > 0 {
				starts = append(starts, time.Duration(bs.StartMs*float64(time.Millisecond)))
			}
			for j := 0; j < screenshotsPerSandbox && ctx.Err() == nil; j++ {
				t := time.Now()
				png, err := st.Client.BrowserScreenshot(ctx, sb.ID, client.ScreenshotRequest{})
				d := time.Since(t)
				if err == nil && !bytes.HasPrefix(png.PNG, pngMagic) {
					err = fmt.Errorf("the screenshot is not a PNG (%d bytes)", len(png.PNG))
				}
				if err != nil {
					shotErrs, shotLast = shotErrs+1, err
					continue
				}
				shots = append(shots, d)
				shotBytes = len(png.PNG)
			}
		}
		if err := r.remove(ctx, st, sb.ID); err != nil {
			r.o.Log.Warn("cannot delete a browser sandbox", "sandbox", sb.ID, "err", err)
		}
		r.settle(ctx, st) // a Chromium's teardown is heavy: not in the next sample
		r.prog.step(1)
	}
	nav = r.summarize(ctx, nav, navs, Sum(navs), navErrs, navLast)
	if nav.Status == StatusOK {
		nav.note("each sample is a new sandbox's first navigation (to a data: URL): Chromium's launch is in it")
		if len(starts) > 0 {
			nav.extra("chromium_start_p50_ms", ms(Summarize(starts, 0).P50))
		}
		nav.extra("sandbox_memory_mib", float64(gotSpec.MemoryMB))
		nav.extra("sandbox_cpu", gotSpec.CPU)
	}
	shot = r.summarize(ctx, shot, shots, Sum(shots), shotErrs, shotLast)
	if shot.Status == StatusOK {
		shot.note("%d screenshots of the loaded page after each first navigation", screenshotsPerSandbox)
		shot.extra("png_bytes", float64(shotBytes))
	}
	r.set(nav)
	r.set(shot)
}
