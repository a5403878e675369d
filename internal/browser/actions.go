package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Bounds of what actions return.
const (
	defaultTextBytes  = 256 << 10
	maxTextBytes      = 4 << 20
	maxEvalBytes      = 1 << 20
	maxExpression     = 256 << 10
	maxTypeText       = 64 << 10
	maxURL            = 64 << 10
	maxFullPageHeight = 16384
	pollEvery         = 100 * time.Millisecond
	navSettle         = 50 * time.Millisecond // for a navigation an input starts
	keyEventsUpTo     = 512                   // longer text is inserted at once
)

// act is one action on one tab.
type act struct {
	s        *Service
	ctx      context.Context
	sess     *session
	tab      *tab
	t        *chromedp.Target
	start    time.Time
	dlMark   int
	expected atomic.Bool // a crash the action causes itself
}

// run runs fn on a tab of sandbox id (tabRef: see resolveTab), bounded by
// timeout; what names the action in errors.
func (s *Service) run(ctx context.Context, sc sandbox.Scope, id, tabRef, what string, timeout time.Duration, fn func(a *act) error) error {
	return s.runOn(ctx, sc, id, tabRef, what, timeout, false, fn)
}

// runOn is run; loads says the action loads a page itself. Any other
// action that is the first after the browser crashed and restarted fails
// saying so: its page is gone, and acting on a blank one would only
// confuse.
func (s *Service) runOn(ctx context.Context, sc sandbox.Scope, id, tabRef, what string, timeout time.Duration, loads bool, fn func(a *act) error) error {
	sess, err := s.session(ctx, sc, id)
	if err != nil {
		return err
	}
	unlock, err := sess.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if exit := sess.takeRestarted(); exit != "" && !loads {
		return errs.New(errs.CodeUnavailable, "%s failed: the browser crashed (%s) and was restarted since the last action; its tabs are gone: navigate again", what, exit)
	}
	tid, err := sess.resolveTab(ctx, tabRef)
	if err != nil {
		return s.explain(ctx, sess, what, timeout, err)
	}
	tb, err := sess.attach(ctx, tid)
	if err != nil {
		return s.explain(ctx, sess, what, timeout, err)
	}
	actx, cancel := context.WithTimeout(tb.ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	cctx, crash := context.WithCancelCause(actx)
	defer crash(nil)
	a := &act{s: s, ctx: cctx, sess: sess, tab: tb, start: time.Now(), dlMark: sess.downloadMark()}
	unwatch := tb.watchCrash(func() {
		if !a.expected.Load() {
			crash(errPageCrashed)
		}
	})
	defer unwatch()
	_, err = chromedp.Run(cctx, func(c context.Context, t *chromedp.Target) (chromedp.Void, error) {
		a.t = t
		defer release(c, t)
		return chromedp.Void{}, fn(a)
	})
	if (err != nil && errors.Is(context.Cause(cctx), errPageCrashed)) || (tb.crashed.Load() && !a.expected.Load()) {
		err = errPageCrashed
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		tb.stuck.Store(true)
	}
	return s.explain(ctx, sess, what, timeout, err)
}

// page describes the tab now, from the browser's side (a hung page
// cannot stop that).
func (a *act) page() wire.Page {
	p := wire.Page{Tab: string(a.tab.id), DurationMs: float64(time.Since(a.start).Microseconds()) / 1000,
		Downloads: a.sess.downloadsSince(a.dlMark)}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 2*time.Second)
	defer cancel()
	if res, err := cdp.Call(ctx, chromedp.FromContext(a.sess.ctx).Browser, target.GetTargetInfo,
		target.GetTargetInfoParams{TargetID: a.tab.id}); err == nil && res.TargetInfo != nil {
		p.URL, p.Title = clipText(res.TargetInfo.URL, 2048), clipText(res.TargetInfo.Title, 512)
	}
	return p
}

// recover brings back a page an earlier action left hung: if it does not
// answer within a second its renderer is crashed (Page.crash runs on the
// renderer's IO thread, which a busy main thread does not block), so that
// the navigation that follows gets a fresh one.
func (a *act) recover() {
	if !a.tab.stuck.Load() || a.tab.crashed.Load() {
		return
	}
	pctx, cancel := context.WithTimeout(a.ctx, time.Second)
	_, err := cdp.Call(pctx, a.t, runtime.Evaluate, runtime.EvaluateParams{Expression: "1"})
	cancel()
	if err == nil || a.ctx.Err() != nil {
		a.tab.stuck.Store(false)
		return
	}
	a.s.log.Info("browser: crashing a hung page", "sandbox", a.sess.id, "tab", string(a.tab.id))
	a.expected.Store(true)
	defer a.expected.Store(false)
	cctx, cancel := context.WithTimeout(a.ctx, time.Second)
	_, _ = cdp.Call(cctx, a.t, page.Crash, cdp.Empty{})
	cancel()
	for i := 0; i < 40 && !a.tab.crashed.Load() && a.ctx.Err() == nil; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	a.tab.stuck.Store(false)
}

// rendererAlive reports whether the page's renderer answers (within 2 s).
func (a *act) rendererAlive() bool {
	ctx, cancel := context.WithTimeout(a.ctx, 2*time.Second)
	defer cancel()
	_, err := cdp.Call(ctx, a.t, runtime.Evaluate, runtime.EvaluateParams{Expression: "1"})
	return (err == nil || a.ctx.Err() != nil) && !a.tab.crashed.Load()
}

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
	_, spec, err := s.m.Guest(ctx, sc, id)
	if err != nil {
		return wire.Page{}, err
	}
	var out wire.Page
	shown := clipText(u.String(), 200)
	load := func(a *act) error {
		a.recover()
		status, err := a.navigate(u.String(), wait)
		var le *chromedp.LoadError
		if errors.As(err, &le) && le.ErrorText == "net::ERR_NETWORK_CHANGED" {
			// Chromium aborts what is in flight when the sandbox's
			// interface or resolver changes (at start, or a policy
			// change): a transient error, so once more.
			time.Sleep(100 * time.Millisecond)
			status, err = a.navigate(u.String(), wait)
		}
		if err != nil {
			return s.navError(spec, u, a, err)
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
	err = s.m.BrowserAction(ctx, sc, id, "navigate", map[string]any{"url": clipText(u.String(), 2048), "tab": req.Tab},
		func() (map[string]any, error) {
			err := s.runOn(ctx, sc, id, req.Tab, "navigation to "+shown, timeout, true, load)
			if errors.Is(err, errLost) && req.Tab == "" {
				// The browser went away (it is being restarted): loading
				// a page is harmless to repeat, so once more, in the new
				// browser.
				err = s.runOn(ctx, sc, id, "", "navigation to "+shown, timeout, true, load)
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

// Click clicks an element.
func (s *Service) Click(ctx context.Context, sc sandbox.Scope, id string, req wire.ClickRequest) (wire.Page, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Page{}, err
	}
	sel, _, err := targetOf(req.Target, true)
	if err != nil {
		return wire.Page{}, err
	}
	button := input.MouseButtonLeft
	switch req.Button {
	case "", "left":
	case "right":
		button = input.MouseButtonRight
	case "middle":
		button = input.MouseButtonMiddle
	default:
		return wire.Page{}, errs.Invalid("button must be left, right or middle")
	}
	count := req.ClickCount
	if count == 0 {
		count = 1
	}
	if count < 1 || count > 3 {
		return wire.Page{}, errs.Invalid("click_count must be 1..3")
	}
	timeout, err := s.timeout(req.TimeoutMs, s.o.ActionTimeout)
	if err != nil {
		return wire.Page{}, err
	}
	var out wire.Page
	err = s.audited(ctx, sc, id, "click", map[string]any{"target": sel.String(), "tab": req.Tab}, func() error {
		return s.run(ctx, sc, id, req.Tab, "click on "+sel.String(), timeout, func(a *act) error {
			pt, _, err := a.actionable(sel, needClick)
			if err != nil {
				return err
			}
			nav := a.watchNav()
			defer nav.stop()
			before := a.pageIDs()
			a.front()
			if err := a.click(pt.X, pt.Y, button, count); err != nil {
				return err
			}
			nav.settle(a)
			out = a.page()
			out.NewTabs = a.newTabs(before)
			return nil
		})
	})
	return out, err
}

func (a *act) click(x, y float64, button input.MouseButton, count int) error {
	buttons := map[input.MouseButton]int64{input.MouseButtonLeft: 1, input.MouseButtonRight: 2, input.MouseButtonMiddle: 4}[button]
	if _, err := cdp.Call(a.ctx, a.t, input.DispatchMouseEvent, input.DispatchMouseEventParams{
		Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}); err != nil {
		return err
	}
	for i := 1; i <= count; i++ {
		p := input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: button,
			Buttons: buttons, ClickCount: int64(i)}
		if _, err := cdp.Call(a.ctx, a.t, input.DispatchMouseEvent, p); err != nil {
			return err
		}
		p.Type, p.Buttons = input.DispatchMouseEventTypeMouseReleased, 0
		if _, err := cdp.Call(a.ctx, a.t, input.DispatchMouseEvent, p); err != nil {
			return err
		}
	}
	return nil
}

// Type types text into an element.
func (s *Service) Type(ctx context.Context, sc sandbox.Scope, id string, req wire.TypeRequest) (wire.Page, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Page{}, err
	}
	sel, _, err := targetOf(req.Target, true)
	if err != nil {
		return wire.Page{}, err
	}
	if len(req.Text) > maxTypeText || !utf8.ValidString(req.Text) {
		return wire.Page{}, errs.Invalid("text must be UTF-8 under %d bytes", maxTypeText)
	}
	timeout, err := s.timeout(req.TimeoutMs, s.o.ActionTimeout)
	if err != nil {
		return wire.Page{}, err
	}
	var out wire.Page
	// The text itself is not recorded: it may be a password.
	intent := map[string]any{"target": sel.String(), "chars": utf8.RuneCountInString(req.Text), "clear": req.Clear,
		"submit": req.Submit, "tab": req.Tab}
	err = s.audited(ctx, sc, id, "type", intent, func() error {
		return s.run(ctx, sc, id, req.Tab, "typing into "+sel.String(), timeout, func(a *act) error {
			_, obj, err := a.actionable(sel, needType)
			if err != nil {
				return err
			}
			a.front()
			var focused bool
			if err := callOn(a.ctx, a.t, obj, jsFocus, &focused, req.Clear); err != nil {
				return err
			}
			if req.Clear && req.Text == "" {
				if err := a.press(keyCombo{r: '\b', name: "Backspace"}); err != nil {
					return err
				}
			}
			if err := a.typeText(req.Text); err != nil {
				return err
			}
			nav := a.watchNav()
			defer nav.stop()
			if req.Submit {
				if err := a.press(keyCombo{r: '\r', name: "Enter"}); err != nil {
					return err
				}
				nav.settle(a)
			}
			out = a.page()
			return nil
		})
	})
	return out, err
}

// typeText sends text as key presses (pages see keydown, keypress, input
// and keyup, as from a keyboard), or inserts it at once when it is long.
func (a *act) typeText(text string) error {
	if text == "" {
		return nil
	}
	if utf8.RuneCountInString(text) > keyEventsUpTo {
		_, err := cdp.Call(a.ctx, a.t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	}
	_, err := chromedp.KeyEvent(text)(a.ctx, a.t)
	return err
}

// front brings the tab to the front before an input: Chromium holds input
// to a page behind another window (a popup the page opened) for seconds
// before delivering it.
func (a *act) front() {
	_, _ = cdp.Call(a.ctx, a.t, page.BringToFront, cdp.Empty{})
}

func (a *act) press(k keyCombo) error {
	_, err := chromedp.KeyEvent(string(k.r), chromedp.KeyModifiers(k.modifierList()...))(a.ctx, a.t)
	return err
}

// Press presses a key (on an element, if one is named: it is focused
// first).
func (s *Service) Press(ctx context.Context, sc sandbox.Scope, id string, req wire.PressRequest) (wire.Page, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Page{}, err
	}
	k, err := parseKey(req.Key)
	if err != nil {
		return wire.Page{}, err
	}
	sel, hasSel, err := targetOf(req.Target, false)
	if err != nil {
		return wire.Page{}, err
	}
	timeout, err := s.timeout(req.TimeoutMs, s.o.ActionTimeout)
	if err != nil {
		return wire.Page{}, err
	}
	what := "pressing " + req.Key
	intent := map[string]any{"key": req.Key, "tab": req.Tab}
	if hasSel {
		what += " on " + sel.String()
		intent["target"] = sel.String()
	}
	var out wire.Page
	err = s.audited(ctx, sc, id, "press", intent, func() error {
		return s.run(ctx, sc, id, req.Tab, what, timeout, func(a *act) error {
			if hasSel {
				_, obj, err := a.actionable(sel, needVisible)
				if err != nil {
					return err
				}
				if err := callOn(a.ctx, a.t, obj, jsFocus, nil, false); err != nil {
					return err
				}
			}
			nav := a.watchNav()
			defer nav.stop()
			before := a.pageIDs()
			a.front()
			if err := a.press(k); err != nil {
				return err
			}
			nav.settle(a)
			out = a.page()
			out.NewTabs = a.newTabs(before)
			return nil
		})
	})
	return out, err
}

// Scroll scrolls an element into view, or the page by an amount.
func (s *Service) Scroll(ctx context.Context, sc sandbox.Scope, id string, req wire.ScrollRequest) (wire.ScrollResult, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.ScrollResult{}, err
	}
	sel, hasSel, err := targetOf(req.Target, false)
	if err != nil {
		return wire.ScrollResult{}, err
	}
	if req.Amount < 0 || req.Amount > 1<<20 {
		return wire.ScrollResult{}, errs.Invalid("amount must be 0..%d pixels", 1<<20)
	}
	switch req.Direction {
	case "", "down", "up", "left", "right":
	default:
		return wire.ScrollResult{}, errs.Invalid("direction must be down, up, left or right")
	}
	timeout, err := s.timeout(req.TimeoutMs, s.o.ActionTimeout)
	if err != nil {
		return wire.ScrollResult{}, err
	}
	what := "scrolling"
	if hasSel {
		what += " to " + sel.String()
	}
	var out wire.ScrollResult
	err = s.run(ctx, sc, id, req.Tab, what, timeout, func(a *act) error {
		var pos struct {
			X, Y, MaxX, MaxY, DX, DY, VW, VH float64
			AtEnd                            bool
		}
		args := map[string]float64{"dx": 0, "dy": 0}
		if hasSel {
			if _, _, err := a.actionable(sel, needVisible); err != nil { // scrolls it into view
				return err
			}
		} else {
			if err := evalValue(a.ctx, a.t, jsScroll, args, &pos); err != nil {
				return err
			}
			amount := float64(req.Amount)
			switch req.Direction {
			case "", "down", "up":
				if amount == 0 {
					amount = math.Round(pos.VH * 0.8)
				}
				args["dy"] = amount
				if req.Direction == "up" {
					args["dy"] = -amount
				}
			default:
				if amount == 0 {
					amount = math.Round(pos.VW * 0.8)
				}
				args["dx"] = amount
				if req.Direction == "left" {
					args["dx"] = -amount
				}
			}
		}
		if err := evalValue(a.ctx, a.t, jsScroll, args, &pos); err != nil {
			return err
		}
		out = wire.ScrollResult{Page: a.page(), X: pos.X, Y: pos.Y, MaxX: pos.MaxX, MaxY: pos.MaxY, AtEnd: pos.AtEnd,
			ScrolledX: pos.DX, ScrolledY: pos.DY}
		return nil
	})
	return out, err
}

// Text reads the page's text, or its readable content as Markdown.
func (s *Service) Text(ctx context.Context, sc sandbox.Scope, id string, req wire.TextRequest) (wire.TextResult, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.TextResult{}, err
	}
	src := jsText
	switch req.Format {
	case "", wire.FormatText:
		req.Format = wire.FormatText
	case wire.FormatMarkdown:
		src = jsMarkdown
	default:
		return wire.TextResult{}, errs.Invalid("format must be text or markdown")
	}
	max, err := maxBytes(req.MaxBytes, defaultTextBytes, maxTextBytes)
	if err != nil {
		return wire.TextResult{}, err
	}
	var out wire.TextResult
	err = s.run(ctx, sc, id, req.Tab, "reading the page's "+req.Format, s.o.ActionTimeout, func(a *act) error {
		var res struct {
			Text   string `json:"text"`
			Length int    `json:"length"`
		}
		if err := evalValue(a.ctx, a.t, src, map[string]int{"max": max + 1}, &res); err != nil {
			return err
		}
		p := a.page()
		text, cut := clipBytes(strings.ToValidUTF8(res.Text, "\uFFFD"), max)
		out = wire.TextResult{Tab: p.Tab, URL: p.URL, Title: p.Title, Format: req.Format, Text: text,
			Bytes: len(res.Text), Truncated: cut || res.Length > max+1}
		if res.Length > max+1 {
			out.Bytes = res.Length // cut in the page already: its length in UTF-16 units
		}
		return nil
	})
	return out, err
}

func maxBytes(asked, def, limit int) (int, error) {
	switch {
	case asked < 0 || asked > limit:
		return 0, errs.Invalid("max_bytes must be 0..%d", limit)
	case asked == 0:
		return def, nil
	}
	return asked, nil
}

// clipBytes cuts s to at most n bytes at a character boundary.
func clipBytes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n], true
}

// Eval evaluates JavaScript in the page; a promise is awaited. The
// expression may use top-level await.
func (s *Service) Eval(ctx context.Context, sc sandbox.Scope, id string, req wire.EvalRequest) (wire.EvalResult, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.EvalResult{}, err
	}
	if strings.TrimSpace(req.Expression) == "" || len(req.Expression) > maxExpression || !utf8.ValidString(req.Expression) {
		return wire.EvalResult{}, errs.Invalid("expression must be UTF-8 JavaScript under %d bytes", maxExpression)
	}
	timeout, err := s.timeout(req.TimeoutMs, s.o.ActionTimeout)
	if err != nil {
		return wire.EvalResult{}, err
	}
	var out wire.EvalResult
	err = s.audited(ctx, sc, id, "eval", map[string]any{"expression": clipText(req.Expression, 1024), "tab": req.Tab}, func() error {
		return s.run(ctx, sc, id, req.Tab, "the script", timeout, func(a *act) error {
			yes := true
			res, err := cdp.Call(a.ctx, a.t, runtime.Evaluate, runtime.EvaluateParams{Expression: req.Expression,
				ReturnByValue: &yes, AwaitPromise: &yes, UserGesture: &yes, ReplMode: &yes,
				Timeout: runtime.TimeDelta(timeout.Milliseconds())})
			if err != nil {
				return err
			}
			if res.ExceptionDetails != nil {
				return scriptError(res.ExceptionDetails)
			}
			out = wire.EvalResult{Tab: string(a.tab.id), Value: json.RawMessage("null")}
			if r := res.Result; r != nil {
				out.Type = string(r.Type)
				switch {
				case r.UnserializableValue != "":
					b, _ := json.Marshal(string(r.UnserializableValue))
					out.Value = b
				case len(r.Value) > maxEvalBytes:
					b, _ := json.Marshal(clipText(string(r.Value), maxEvalBytes))
					out.Value, out.Truncated = b, true
				case len(r.Value) > 0 && json.Valid(r.Value):
					out.Value = append(json.RawMessage(nil), r.Value...)
				case r.Description != "":
					b, _ := json.Marshal(clipText(r.Description, 4096))
					out.Value = b
				}
			}
			return nil
		})
	})
	return out, err
}

// Screenshot takes a PNG of the viewport or of the whole page (at most
// 16384 pixels tall).
func (s *Service) Screenshot(ctx context.Context, sc sandbox.Scope, id string, req wire.ScreenshotRequest) (wire.Screenshot, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.Screenshot{}, err
	}
	var out wire.Screenshot
	err := s.run(ctx, sc, id, req.Tab, "the screenshot", s.o.ActionTimeout, func(a *act) error {
		fast := true
		p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: &fast}
		if req.FullPage {
			m, err := cdp.Call(a.ctx, a.t, page.GetLayoutMetrics, cdp.Empty{})
			if err != nil {
				return err
			}
			if m.CSSContentSize == nil {
				return errs.New(errs.CodeUnavailable, "the page reported no size")
			}
			w, h := math.Ceil(m.CSSContentSize.Width), math.Min(math.Ceil(m.CSSContentSize.Height), maxFullPageHeight)
			if w < 1 || h < 1 {
				return errs.New(errs.CodeUnavailable, "the page is empty (%gx%g)", w, h)
			}
			yes := true
			p.Clip = &page.Viewport{X: 0, Y: 0, Width: math.Min(w, maxFullPageHeight), Height: h, Scale: 1}
			p.CaptureBeyondViewport = &yes
		}
		res, err := cdp.Call(a.ctx, a.t, page.CaptureScreenshot, p)
		if err != nil {
			return err
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(res.Data))
		if err != nil {
			return errs.Wrap(errs.CodeUnavailable, err, "the browser sent a screenshot that is not a PNG")
		}
		pg := a.page()
		out = wire.Screenshot{Tab: pg.Tab, URL: pg.URL, Width: cfg.Width, Height: cfg.Height, PNG: res.Data}
		return nil
	})
	return out, err
}

// Tabs lists the browser's tabs.
func (s *Service) Tabs(ctx context.Context, sc sandbox.Scope, id string) (wire.Tabs, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.Tabs{}, err
	}
	sess, err := s.session(ctx, sc, id)
	if err != nil {
		return wire.Tabs{}, err
	}
	tabs, err := sess.tabList(ctx)
	if err != nil {
		return wire.Tabs{}, s.explain(ctx, sess, "listing the tabs", attachTimeout, err)
	}
	if cur := sess.currentTab(); cur == "" && len(tabs) > 0 {
		sess.setCurrent(target.ID(tabs[0].ID))
		tabs[0].Current = true
	}
	return wire.Tabs{Tabs: nonNil(tabs)}, nil
}

// OpenTab opens a tab, makes it current and loads req.URL in it.
func (s *Service) OpenTab(ctx context.Context, sc sandbox.Scope, id string, req wire.OpenTabRequest) (wire.Tab, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Tab{}, err
	}
	if req.URL != "" {
		if _, err := checkURL(req.URL); err != nil {
			return wire.Tab{}, err
		}
	}
	var tid target.ID
	err := s.audited(ctx, sc, id, "tab_open", map[string]any{"url": clipText(req.URL, 2048)}, func() error {
		sess, err := s.session(ctx, sc, id)
		if err != nil {
			return err
		}
		unlock, err := sess.lock(ctx)
		if err != nil {
			return err
		}
		tid, err = sess.newPage(ctx, "about:blank")
		unlock()
		if err != nil {
			return s.explain(ctx, sess, "opening a tab", attachTimeout, err)
		}
		return nil
	})
	if err != nil {
		return wire.Tab{}, err
	}
	if req.URL != "" {
		p, err := s.Navigate(ctx, sc, id, wire.NavigateRequest{URL: req.URL, Tab: string(tid), TimeoutMs: req.TimeoutMs})
		if err != nil {
			return wire.Tab{ID: string(tid), URL: "about:blank", Current: true}, err
		}
		return wire.Tab{ID: p.Tab, URL: p.URL, Title: p.Title, Current: true}, nil
	}
	return wire.Tab{ID: string(tid), URL: "about:blank", Current: true}, nil
}

// SwitchTab makes a tab the current one (and brings it to the front).
func (s *Service) SwitchTab(ctx context.Context, sc sandbox.Scope, id, ref string) (wire.Tab, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Tab{}, err
	}
	var out wire.Tab
	err := s.audited(ctx, sc, id, "tab_switch", map[string]any{"tab": ref}, func() error {
		return s.runOn(ctx, sc, id, ref, "switching tabs", attachTimeout, true, func(a *act) error {
			a.sess.setCurrent(a.tab.id)
			_, _ = cdp.Call(a.ctx, chromedp.FromContext(a.sess.ctx).Browser, target.ActivateTarget,
				target.ActivateTargetParams{TargetID: a.tab.id})
			p := a.page()
			out = wire.Tab{ID: p.Tab, URL: p.URL, Title: p.Title, Current: true}
			return nil
		})
	})
	return out, err
}

// CloseTab closes a tab and returns the ones left.
func (s *Service) CloseTab(ctx context.Context, sc sandbox.Scope, id, ref string) (wire.Tabs, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Tabs{}, err
	}
	if ref == "" {
		return wire.Tabs{}, errs.Invalid("name the tab to close (its id or index)")
	}
	err := s.audited(ctx, sc, id, "tab_close", map[string]any{"tab": ref}, func() error {
		sess, err := s.session(ctx, sc, id)
		if err != nil {
			return err
		}
		unlock, err := sess.lock(ctx)
		if err != nil {
			return err
		}
		defer unlock()
		tid, err := sess.resolveTab(ctx, ref)
		if err != nil {
			return s.explain(ctx, sess, "closing the tab", attachTimeout, err)
		}
		sess.forget(tid)
		cctx, cancel := context.WithTimeout(sess.ctx, attachTimeout)
		defer cancel()
		if _, err := cdp.Call(cctx, chromedp.FromContext(sess.ctx).Browser, target.CloseTarget,
			target.CloseTargetParams{TargetID: tid}); err != nil {
			return s.explain(ctx, sess, "closing the tab", attachTimeout, err)
		}
		// Chromium answers before the tab is gone from the list.
		for i := 0; i < 50; i++ {
			infos, err := sess.pages(ctx)
			if err != nil {
				break
			}
			gone := true
			for _, in := range infos {
				gone = gone && in.TargetID != tid
			}
			if gone {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	})
	if err != nil {
		return wire.Tabs{}, err
	}
	return s.Tabs(ctx, sc, id)
}

// Downloads lists the downloads the server saw in this browser session.
func (s *Service) Downloads(ctx context.Context, sc sandbox.Scope, id string) (wire.Downloads, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.Downloads{}, err
	}
	sess, err := s.session(ctx, sc, id)
	if err != nil {
		return wire.Downloads{}, err
	}
	return wire.Downloads{Dir: s.o.DownloadDir, Downloads: nonNil(sess.downloadsSince(0))}, nil
}

// audited records a mutating action.
func (s *Service) audited(ctx context.Context, sc sandbox.Scope, id, action string, intent map[string]any, fn func() error) error {
	if _, err := s.m.Resolve(ctx, sc, id, 0); err != nil {
		return err // no record for a sandbox the caller cannot see
	}
	return s.m.BrowserAction(ctx, sc, id, action, intent, func() (map[string]any, error) { return nil, fn() })
}

// pageIDs are the tabs open now (to tell which ones an action opens).
func (a *act) pageIDs() map[target.ID]bool {
	infos, err := a.sess.pages(a.ctx)
	if err != nil {
		return nil
	}
	out := map[target.ID]bool{}
	for _, in := range infos {
		out[in.TargetID] = true
	}
	return out
}

func (a *act) newTabs(before map[target.ID]bool) []wire.Tab {
	if before == nil {
		return nil
	}
	infos, err := a.sess.pages(context.WithoutCancel(a.ctx))
	if err != nil {
		return nil
	}
	var out []wire.Tab
	for _, in := range infos {
		if !before[in.TargetID] {
			out = append(out, wire.Tab{ID: string(in.TargetID), URL: clipText(in.URL, 2048), Title: clipText(in.Title, 512)})
		}
	}
	return out
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

// Element readiness an action needs.
type need int

const (
	needVisible need = iota
	needClick        // visible, enabled, not covered
	needType         // visible, enabled, editable
)

// point is where an element is and what state it is in (js/point.js).
type point struct {
	X, Y, W, H float64
	Visible    bool
	Disabled   bool
	Editable   bool
	Covered    string
	Offscreen  bool
	Gone       bool
	Tag        string
}

// actionable waits (polling, until the action's timeout) for sel to match
// an element in the state n needs; scrolled into view. It returns where
// to click it and the element.
func (a *act) actionable(sel selector, n need) (point, runtime.RemoteObjectID, error) {
	var last string
	for {
		obj, why, err := a.find(sel)
		if err != nil {
			if a.ctx.Err() != nil { // the wait's bound fell during a lookup: still "nothing matched in time"
				return point{}, "", a.waitError(sel, last)
			}
			return point{}, "", err
		}
		if obj != "" {
			var pt point
			if err := callOn(a.ctx, a.t, obj, jsPoint, &pt); err != nil {
				if a.ctx.Err() != nil {
					return point{}, "", a.waitError(sel, last)
				}
				return point{}, "", err
			}
			switch {
			case pt.Gone || !pt.Visible:
				why = "it is not visible"
			case n != needVisible && pt.Disabled:
				why = "it is disabled"
			case n == needType && !pt.Editable:
				return point{}, "", errs.Invalid("%s is a <%s>, which does not take text: name an input, a textarea or an editable element", sel, pt.Tag)
			case n == needClick && pt.Covered != "":
				why = "another element (" + pt.Covered + ") covers it"
			default:
				return pt, obj, nil
			}
		}
		last = why
		select {
		case <-a.ctx.Done():
			return point{}, "", a.waitError(sel, last)
		case <-time.After(pollEvery):
		}
	}
}

// find resolves sel to an element: its object id, or why there is none
// yet ("": nothing matches). Errors are final (a bad selector, a stale
// reference).
func (a *act) find(sel selector) (runtime.RemoteObjectID, string, error) {
	if sel.kind == byRef {
		id, ok := a.tab.ref(sel.value)
		if !ok {
			return "", "", errs.Invalid("ref %s is unknown on this page: take a snapshot first (references last until the page navigates)", sel.value)
		}
		res, err := cdp.Call(a.ctx, a.t, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ObjectGroup: "paddock"})
		if err != nil || res.Object == nil || res.Object.ObjectID == "" {
			if a.ctx.Err() != nil {
				return "", "", a.ctx.Err()
			}
			return "", "", errs.Invalid("ref %s is no longer on the page (it changed since the snapshot): take a new snapshot", sel.value)
		}
		return res.Object.ObjectID, "", nil
	}
	obj, err := evalFunc(a.ctx, a.t, jsFind, map[string]string{"kind": sel.kind, "value": sel.value}, false)
	if err != nil {
		return "", "", err
	}
	if obj.Type == runtime.RemoteObjectTypeObject && obj.Subtype == runtime.RemoteObjectSubtypeNode && obj.ObjectID != "" {
		return obj.ObjectID, "", nil
	}
	var s string
	_ = json.Unmarshal(obj.Value, &s)
	switch {
	case strings.HasPrefix(s, "invalid:"):
		return "", "", errs.Invalid("%s is not a valid CSS selector: %s", sel, clipText(strings.TrimPrefix(s, "invalid:"), 200))
	case strings.HasPrefix(s, "hidden:"):
		return "", strings.TrimPrefix(s, "hidden:") + " elements match, but none is visible", nil
	}
	return "", "", nil
}

// waitError is the answer when no element became ready in time.
func (a *act) waitError(sel selector, why string) error {
	d := time.Since(a.start).Round(100 * time.Millisecond)
	where := ""
	if p := a.page(); p.URL != "" {
		where = " on " + clipText(p.URL, 200)
	}
	if why == "" {
		return errs.New(errs.CodeTimeout, "no element matches %s%s (waited %s; raise timeout_ms, or check the page with snapshot or text)", sel, where, d)
	}
	return errs.New(errs.CodeTimeout, "the element matching %s%s is not ready: %s (waited %s)", sel, where, why, d)
}
