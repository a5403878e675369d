package browser

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Navigation: loading a URL, and following the navigations an input
// starts.

// Navigate loads a URL in a tab and waits for it (load by default).
func (s *Service) Navigate(ctx context.Context, sc sandbox.Scope, id string, req wire.NavigateRequest) (wire.Page, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Page{}, err
	}
	u, err := checkURL(req.URL)
	if err != nil {
		return wire.Page{}, err
	}
	wait := req.WaitUntil
	switch wait {
	case "":
		wait = "load"
	case "load", "domcontentloaded", "none":
	default:
		return wire.Page{}, errs.Invalid("wait_until must be load, domcontentloaded or none")
	}
	timeout, err := s.timeout(req.TimeoutMs, s.o.NavigateTimeout)
	if err != nil {
		return wire.Page{}, err
	}
	sb, err := s.m.Resolve(ctx, sc, id, rights.Exec)
	if err != nil {
		return wire.Page{}, err
	}
	var out wire.Page
	shown := clipText(u.String(), 200)
	load := func(a *act) error {
		a.recover()
		status, err := a.navigate(u.String(), wait)
		var le *chromedp.LoadError
		if errors.As(err, &le) && (le.ErrorText == "net::ERR_NETWORK_CHANGED" ||
			le.ErrorText == "net::ERR_ABORTED" && len(a.sess.downloadsSince(a.dlMark)) == 0) {
			// Chromium aborts what is in flight when the sandbox's
			// interface or resolver changes (at start, or a policy
			// change), and a new navigation can be aborted by the
			// error page of a refused one still committing: transient
			// errors, so once more. (An abort that was a download is not
			// repeated.)
			time.Sleep(100 * time.Millisecond)
			status, err = a.navigate(u.String(), wait)
		}
		if err != nil {
			return s.navError(sb.Spec, u, a, err)
		}
		// A renderer that dies ends the loading too: make sure the page
		// is there (and give its crash report time to arrive).
		if wait != "none" && !a.rendererAlive() {
			return errPageCrashed
		}
		out = a.page()
		out.Status = status
		return nil
	}
	err = s.m.Act(ctx, sc, id, rights.Exec, "browser.navigate", map[string]any{"url": clipText(u.String(), 2048), "tab": req.Tab},
		func() (map[string]any, error) {
			err := s.runOn(ctx, sc, id, rights.Exec, req.Tab, "navigation to "+shown, timeout, true, load)
			if errors.Is(err, errLost) && req.Tab == "" {
				// The browser went away (it is being restarted): loading
				// a page is harmless to repeat, so once more, in the new
				// browser.
				err = s.runOn(ctx, sc, id, rights.Exec, "", "navigation to "+shown, timeout, true, load)
			}
			if err != nil {
				return nil, err
			}
			return map[string]any{"status": out.Status, "url": out.URL}, nil
		})
	return out, err
}

// navigate loads u and waits as asked; it returns the document's status.
func (a *act) navigate(u, wait string) (int, error) {
	switch wait {
	case "load":
		resp, err := chromedp.NavigateResponse(u)(a.ctx, a.t)
		if err != nil {
			return 0, err
		}
		if resp != nil {
			return int(resp.Status), nil
		}
		return 0, nil
	case "domcontentloaded":
		events, stop := a.t.Subscribe("Page.lifecycleEvent")
		defer stop()
		res, err := cdp.Call(a.ctx, a.t, page.Navigate, page.NavigateParams{URL: u})
		if err != nil {
			return 0, err
		}
		if res.ErrorText != "" {
			return 0, &chromedp.LoadError{ErrorText: res.ErrorText}
		}
		if res.LoaderID == "" {
			return 0, nil // within the document
		}
		for {
			select {
			case <-a.ctx.Done():
				return 0, a.ctx.Err()
			case raw, ok := <-events:
				if !ok {
					return 0, chromedp.ErrChannelClosed
				}
				var ev page.EventLifecycleEvent
				if jsonv2.Unmarshal(raw, &ev) == nil && ev.LoaderID == res.LoaderID && ev.Name == "DOMContentLoaded" {
					return 0, nil
				}
			}
		}
	}
	res, err := cdp.Call(a.ctx, a.t, page.Navigate, page.NavigateParams{URL: u})
	if err == nil && res.ErrorText != "" {
		err = &chromedp.LoadError{ErrorText: res.ErrorText}
	}
	return 0, err
}

// checkURL accepts what an agent may open: web pages, and the sandbox's
// own files, data: and about: URLs. javascript: (use eval) and the
// browser's internal pages are refused.
func checkURL(s string) (*url.URL, error) {
	if s == "" || len(s) > maxURL || !utf8.ValidString(s) {
		return nil, errs.Invalid("url must be a URL under %d bytes", maxURL)
	}
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, errs.Invalid("url %q does not parse", clipText(s, 100))
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return nil, errs.Invalid("url %q has no host", clipText(s, 100))
		}
	case "file", "data", "about":
	case "":
		// "example.com/path": what a person types.
		return checkURL("http://" + s)
	default:
		return nil, errs.Invalid("url scheme %q is not allowed (http, https, file, data, about)", clipText(u.Scheme, 20))
	}
	return u, nil
}

// navError explains a failed navigation: in terms of the sandbox's
// network policy when that is what refused it.
func (s *Service) navError(spec sandbox.Spec, u *url.URL, a *act, err error) error {
	var le *chromedp.LoadError
	if !errors.As(err, &le) {
		return err
	}
	text := clipText(le.ErrorText, 100)
	if text == "net::ERR_ABORTED" && len(a.sess.downloadsSince(a.dlMark)) > 0 {
		return nil // it was a download
	}
	shown := clipText(u.String(), 200)
	if refused, why := policyRefuses(spec.Network, u); refused {
		return errs.New(errs.CodeForbidden, "navigation to %s refused by the sandbox's network policy: %s (the browser saw %s); "+
			"change the policy with PUT /v1/sandboxes/{id}/network (paddock network ID --allow %s)", shown, why, text, clipText(u.Hostname(), 100))
	}
	hint := ""
	if strings.Contains(text, "NAME_NOT_RESOLVED") && spec.Network != nil && spec.Network.Mode == sandbox.NetAllowlist {
		hint = " (the network policy allows this name, but it did not resolve to an address the sandbox may reach)"
	}
	return errs.New(errs.CodeUnavailable, "navigation to %s failed: %s%s", shown, text, hint)
}

// navWatch follows the navigation an input may start, so that the action
// returns once it has ended. The tab's listener feeds it: listeners see the
// browser's events in the order they were sent, which separate per-event
// subscriptions do not keep — a 204 or a download ends its loading a few
// milliseconds after the request, before a subscription made on seeing the
// request would exist, and a missed end held the action for its whole
// timeout.
type navWatch struct {
	tab       *tab
	requested chan struct{} // closed at the request
	ended     chan struct{} // closed when the loading it started stopped

	// Under tab.mu.
	frame       cdp.FrameID
	disposition page.ClientNavigationDisposition
	loaded      bool // ended by a load event (a new document)
	state       int  // 0 armed, 1 requested, 2 ended
}

// downloadGrace is how long an action waits, after a navigation stopped
// without a new document, for the download it may have become (Chromium
// reports the download after the loading stopped).
const downloadGrace = 300 * time.Millisecond

func (a *act) watchNav() *navWatch {
	n := &navWatch{tab: a.tab, requested: make(chan struct{}), ended: make(chan struct{})}
	a.tab.mu.Lock()
	a.tab.nav = n
	a.tab.mu.Unlock()
	return n
}

func (n *navWatch) stop() {
	n.tab.mu.Lock()
	if n.tab.nav == n {
		n.tab.nav = nil
	}
	n.tab.mu.Unlock()
}

// onEvent advances the watch; the tab's mu is held.
func (n *navWatch) onEvent(ev any) {
	switch ev := ev.(type) {
	case *page.EventFrameRequestedNavigation:
		if n.state == 0 {
			n.state, n.frame, n.disposition = 1, ev.FrameID, ev.Disposition
			close(n.requested)
		}
	case *page.EventLoadEventFired:
		if n.state == 1 {
			n.state, n.loaded = 2, true
			close(n.ended)
		}
	case *page.EventFrameStoppedLoading:
		if n.state == 1 && ev.FrameID == n.frame {
			n.state = 2
			close(n.ended)
		}
	}
}

// settle waits briefly for a navigation to start and, if one does, for it
// to end (bounded by the action's timeout): its page loaded, or the loading
// stopped without a new page (a 204, a download: then briefly for the
// download to be reported). A navigation into another tab or window ends
// here at once (the action reports the new tab).
func (n *navWatch) settle(a *act) {
	t := time.NewTimer(navSettle)
	defer t.Stop()
	select {
	case <-n.requested:
	case <-t.C:
		return
	case <-a.ctx.Done():
		return
	}
	n.tab.mu.Lock()
	disp := n.disposition
	n.tab.mu.Unlock()
	switch disp {
	case page.ClientNavigationDispositionNewTab, page.ClientNavigationDispositionNewWindow:
		return
	case page.ClientNavigationDispositionDownload:
	default:
		select {
		case <-n.ended:
		case <-a.ctx.Done():
			return
		}
		n.tab.mu.Lock()
		loaded := n.loaded
		n.tab.mu.Unlock()
		if loaded {
			return
		}
	}
	grace := time.NewTimer(downloadGrace)
	defer grace.Stop()
	tick := time.NewTicker(downloadGrace / 10)
	defer tick.Stop()
	for len(a.sess.downloadsSince(a.dlMark)) == 0 {
		select {
		case <-tick.C:
		case <-grace.C:
			return
		case <-a.ctx.Done():
			return
		}
	}
}
