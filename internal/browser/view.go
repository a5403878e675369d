package browser

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The live view: the browser's screen as it changes, so that a person can
// watch an agent work (the API serves the page and its WebSocket). It is
// the browser's screencast (CDP Page.startScreencast): one binary message
// per JPEG frame, and a text message {"type":"tab","url","title"} when the
// tab changes. The view only watches; it sends no input to the browser.

const (
	viewQuality  = 60
	viewTabCheck = 500 * time.Millisecond
)

// ViewSend sends one message of the live view to its viewer: a text
// (JSON) message or a binary one (a JPEG frame). An error ends the view.
type ViewSend func(ctx context.Context, text bool, p []byte) error

// View streams sandbox id's screen with send until ctx ends (the viewer
// went away). It follows the current tab, and reconnects when the browser
// restarts. The view is on the record (browser.view).
func (s *Service) View(ctx context.Context, sc sandbox.Scope, id string, send ViewSend) error {
	if err := sc.Need(rights.Read); err != nil {
		return err
	}
	release, err := s.acquire(id, "live view", s.o.MaxViewers)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	return s.m.Act(ctx, sc, id, rights.Read, "browser.view", nil, func() (map[string]any, error) {
		frames := 0
		for ctx.Err() == nil {
			n, err := s.viewOnce(ctx, sc, id, send)
			frames += n
			if ctx.Err() != nil {
				break
			}
			if err != nil {
				var pe *errs.Error
				if errors.As(err, &pe) && pe.Code != errs.CodeUnavailable && pe.Code != errs.CodeTimeout {
					msg, _ := json.Marshal(map[string]string{"type": "error", "message": errs.Public(err)})
					_ = send(ctx, true, msg)
					return map[string]any{"frames": frames}, err
				}
				select { // the browser restarts, or is slow: try again
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
		return map[string]any{"frames": frames, "duration_ms": time.Since(start).Milliseconds()}, nil
	})
}

// viewOnce streams the current tab until it stops being current or the
// connection to the browser ends; it returns the frames sent.
func (s *Service) viewOnce(ctx context.Context, sc sandbox.Scope, id string, send ViewSend) (int, error) {
	sess, err := s.session(ctx, sc, id, rights.Read)
	if err != nil {
		return 0, err
	}
	tid, err := func() (target.ID, error) {
		unlock, err := sess.lock(ctx)
		if err != nil {
			return "", err
		}
		defer unlock()
		return sess.resolveTab(ctx, "")
	}()
	if err != nil {
		return 0, err
	}
	// A session of its own on the tab: the actions' session is busy with
	// actions, and a screencast belongs to the session that started it.
	tctx, cancel := chromedp.NewContext(sess.ctx, chromedp.WithTargetID(tid), chromedp.WithDetachOnCancel())
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if err := within(ctx, attachTimeout, "attaching the live view", func() error { return chromedp.Do(tctx) }); err != nil {
		return 0, err
	}
	frames := 0
	_, err = chromedp.Run(tctx, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		events, unsub := t.Subscribe(page.ScreencastFrame.Method)
		defer unsub()
		q := int64(viewQuality)
		if _, err := cdp.Call(ctx, t, page.StartScreencast, page.StartScreencastParams{Format: page.StartScreencastFormatJpeg,
			Quality: &q, MaxWidth: int64(s.o.Width), MaxHeight: int64(s.o.Height), EveryNthFrame: 1}); err != nil {
			return chromedp.Void{}, err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_, _ = cdp.Call(sctx, t, page.StopScreencast, cdp.Empty{})
			cancel()
		}()
		tick := time.NewTicker(viewTabCheck)
		defer tick.Stop()
		lastURL, lastTitle := "", ""
		sendTab := func() error {
			ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			res, err := cdp.Call(ictx, chromedp.FromContext(sess.ctx).Browser, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: tid})
			if err != nil || res.TargetInfo == nil || (res.TargetInfo.URL == lastURL && res.TargetInfo.Title == lastTitle) {
				return nil
			}
			lastURL, lastTitle = res.TargetInfo.URL, res.TargetInfo.Title
			msg, _ := json.Marshal(map[string]string{"type": "tab", "tab": string(tid), "url": clipText(lastURL, 2048),
				"title": clipText(lastTitle, 512)})
			return send(ctx, true, msg)
		}
		if err := sendTab(); err != nil {
			return chromedp.Void{}, err
		}
		for {
			select {
			case <-ctx.Done():
				return chromedp.Void{}, ctx.Err()
			case <-tick.C:
				if sess.currentTab() != tid && sess.currentTab() != "" {
					return chromedp.Void{}, nil // follow the agent to its new tab
				}
				if err := sendTab(); err != nil {
					return chromedp.Void{}, err
				}
			case raw, ok := <-events:
				if !ok {
					return chromedp.Void{}, chromedp.ErrChannelClosed
				}
				var ev page.EventScreencastFrame
				if err := jsonv2.Unmarshal(raw, &ev); err != nil {
					return chromedp.Void{}, err
				}
				if err := send(ctx, false, ev.Data); err != nil {
					return chromedp.Void{}, err
				}
				frames++
				// Acknowledged once written: a slow viewer slows the
				// screencast down instead of queueing frames.
				if _, err := cdp.Call(ctx, t, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: ev.SessionID}); err != nil {
					return chromedp.Void{}, err
				}
			}
		}
	})
	if err != nil && ctx.Err() == nil {
		return frames, errs.Wrap(errs.CodeUnavailable, err, "the live view lost the browser")
	}
	return frames, nil
}
