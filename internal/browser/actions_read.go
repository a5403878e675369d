package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Reading the page: its text, a script's value, a screenshot.

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
	err = s.run(ctx, sc, id, rights.Read, req.Tab, "reading the page's "+req.Format, s.o.ActionTimeout, func(a *act) error {
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
	err = s.audited(ctx, sc, id, rights.Exec, "eval", map[string]any{"expression": clipText(req.Expression, 1024), "tab": req.Tab}, func() error {
		return s.run(ctx, sc, id, rights.Exec, req.Tab, "the script", timeout, func(a *act) error {
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
	err := s.run(ctx, sc, id, rights.Read, req.Tab, "the screenshot", s.o.ActionTimeout, func(a *act) error {
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
