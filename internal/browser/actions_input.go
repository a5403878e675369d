package browser

import (
	"context"
	"math"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Input: clicks, typing, key presses, scrolling.

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
	err = s.audited(ctx, sc, id, rights.Exec, "click", map[string]any{"target": sel.String(), "tab": req.Tab}, func() error {
		return s.run(ctx, sc, id, rights.Exec, req.Tab, "click on "+sel.String(), timeout, func(a *act) error {
			pt, _, err := a.actionable(sel, needClick)
			if err != nil {
				return err
			}
			out, err = a.navigating(func() error { return a.click(pt.X, pt.Y, button, count) })
			return err
		})
	})
	return out, err
}

// navigating runs an input action on the front tab and answers the page
// it leaves: after the navigation it started, if any, has settled, with
// the tabs it opened.
func (a *act) navigating(do func() error) (wire.Page, error) {
	nav := a.watchNav()
	defer nav.stop()
	before := a.pageIDs()
	a.front()
	if err := do(); err != nil {
		return wire.Page{}, err
	}
	nav.settle(a)
	out := a.page()
	out.NewTabs = a.newTabs(before)
	return out, nil
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
	err = s.audited(ctx, sc, id, rights.Exec, "type", intent, func() error {
		return s.run(ctx, sc, id, rights.Exec, req.Tab, "typing into "+sel.String(), timeout, func(a *act) error {
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
	err = s.audited(ctx, sc, id, rights.Exec, "press", intent, func() error {
		return s.run(ctx, sc, id, rights.Exec, req.Tab, what, timeout, func(a *act) error {
			if hasSel {
				_, obj, err := a.actionable(sel, needVisible)
				if err != nil {
					return err
				}
				if err := callOn(a.ctx, a.t, obj, jsFocus, nil, false); err != nil {
					return err
				}
			}
			var err error
			out, err = a.navigating(func() error { return a.press(k) })
			return err
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
	err = s.run(ctx, sc, id, rights.Exec, req.Tab, what, timeout, func(a *act) error {
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
