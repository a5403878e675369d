package browser

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
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

// run runs fn on a tab of sandbox id (tabRef: see resolveTab) for a
// caller acting with need, bounded by timeout; what names the action in
// errors.
func (s *Service) run(ctx context.Context, sc sandbox.Scope, id string, need rights.Right, tabRef, what string, timeout time.Duration, fn func(a *act) error) error {
	return s.runOn(ctx, sc, id, need, tabRef, what, timeout, false, fn)
}

// runOn is run; loads says the action loads a page itself. Any other
// action that is the first after the browser crashed and restarted fails
// saying so: its page is gone, and acting on a blank one would only
// confuse.
func (s *Service) runOn(ctx context.Context, sc sandbox.Scope, id string, need rights.Right, tabRef, what string, timeout time.Duration, loads bool, fn func(a *act) error) error {
	sess, err := s.session(ctx, sc, id, need)
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

// audited records a mutating action (kind "browser."+action).
func (s *Service) audited(ctx context.Context, sc sandbox.Scope, id string, need rights.Right, action string, intent map[string]any, fn func() error) error {
	return s.m.Act(ctx, sc, id, need, "browser."+action, intent, func() (map[string]any, error) { return nil, fn() })
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
