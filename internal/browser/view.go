package browser

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The live view: a page that shows the browser's screen as it changes,
// so that a person can watch an agent work. The page opens a WebSocket
// (.../browser/view/ws) on which the server sends the browser's
// screencast (CDP Page.startScreencast): one binary message per JPEG
// frame, and a text message {"type":"tab","url","title"} when the tab
// changes. The view only watches; it sends no input to the browser.

const (
	viewQuality    = 60
	viewWriteLimit = 10 * time.Second
	viewTabCheck   = 500 * time.Millisecond
)

var viewPage = template.Must(template.New("view").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Paddock · {{.ID}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="{{.Nonce}}">
 body{margin:0;background:#1d1f21;color:#c5c8c6;font:13px system-ui,sans-serif;display:flex;flex-direction:column;height:100vh}
 header{padding:6px 10px;display:flex;gap:12px;align-items:center;border-bottom:1px solid #333}
 #url{flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#8abeb7}
 #state{color:#b5bd68} #state.off{color:#cc6666}
 main{flex:1;min-height:0;display:flex;align-items:center;justify-content:center;overflow:hidden;padding:8px}
 img{max-width:100%;max-height:100%;object-fit:contain;box-shadow:0 0 12px #000;background:#fff}
</style></head>
<body><header><b>{{.ID}}</b><span id="url">connecting…</span><span id="state">●</span></header>
<main><img id="screen" alt="the sandbox's browser"></main>
<script nonce="{{.Nonce}}">
(function () {
  const q = new URLSearchParams(location.search), token = q.get("token") || "";
  const img = document.getElementById("screen"), url = document.getElementById("url"), state = document.getElementById("state");
  let last = null, retry = 500;
  function connect() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + location.pathname.replace(/\/$/, "") + "/ws",
      token ? ["paddock.v1", "bearer." + token] : ["paddock.v1"]);
    ws.binaryType = "blob";
    ws.onopen = () => { state.className = ""; state.title = "live"; retry = 500; };
    ws.onmessage = (m) => {
      if (typeof m.data === "string") {
        const ev = JSON.parse(m.data);
        if (ev.type === "tab") { url.textContent = ev.url || "about:blank"; document.title = (ev.title || ev.url) + " · Paddock"; }
        if (ev.type === "error") { url.textContent = ev.message; }
        return;
      }
      const u = URL.createObjectURL(m.data);
      img.onload = () => { if (last) URL.revokeObjectURL(last); last = u; };
      img.src = u;
    };
    ws.onclose = () => { state.className = "off"; state.title = "disconnected"; setTimeout(connect, retry); retry = Math.min(retry * 2, 10000); };
  }
  connect();
})();
</script></body></html>
`))

// ServeViewPage writes the live view page of sandbox id (the caller has
// authenticated the request; the page authenticates its WebSocket with the
// token of its own URL). The page allows only its own script and style,
// frames nothing and is framed by nothing, and sends no referrer (its URL
// carries the token).
func (s *Service) ServeViewPage(w http.ResponseWriter, r *http.Request, sc sandbox.Scope, id string) error {
	if err := sc.Need(rights.Read); err != nil {
		return err
	}
	if _, err := s.m.Get(r.Context(), sc, id); err != nil {
		return err
	}
	var nb [16]byte
	_, _ = rand.Read(nb[:])
	nonce := base64.RawStdEncoding.EncodeToString(nb[:])
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"'; style-src 'nonce-"+nonce+"'; "+
		"img-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	return viewPage.Execute(w, struct{ ID, Nonce string }{id, nonce})
}

// View streams sandbox id's screen to c until the client goes away, or ctx
// ends. It follows the current tab, and reconnects when the browser
// restarts.
func (s *Service) View(ctx context.Context, sc sandbox.Scope, id string, c *websocket.Conn) error {
	if err := sc.Need(rights.Read); err != nil {
		return err
	}
	release, err := s.acquire(id, "live view", s.o.MaxViewers)
	if err != nil {
		return err
	}
	defer release()
	ctx = c.CloseRead(ctx) // the viewer sends nothing; this notices it leaving
	start := time.Now()
	return s.m.BrowserAction(ctx, sc, id, "view", nil, func() (map[string]any, error) {
		frames := 0
		for ctx.Err() == nil {
			n, err := s.viewOnce(ctx, sc, id, c)
			frames += n
			if ctx.Err() != nil {
				break
			}
			if err != nil {
				var pe *errs.Error
				if errors.As(err, &pe) && pe.Code != errs.CodeUnavailable && pe.Code != errs.CodeTimeout {
					msg, _ := json.Marshal(map[string]string{"type": "error", "message": errs.Public(err)})
					wctx, cancel := context.WithTimeout(ctx, viewWriteLimit)
					_ = c.Write(wctx, websocket.MessageText, msg)
					cancel()
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
func (s *Service) viewOnce(ctx context.Context, sc sandbox.Scope, id string, c *websocket.Conn) (int, error) {
	sess, err := s.session(ctx, sc, id)
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
			return write(ctx, c, websocket.MessageText, msg)
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
				if err := write(ctx, c, websocket.MessageBinary, ev.Data); err != nil {
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

func write(ctx context.Context, c *websocket.Conn, typ websocket.MessageType, p []byte) error {
	wctx, cancel := context.WithTimeout(ctx, viewWriteLimit)
	defer cancel()
	return c.Write(wctx, typ, p)
}
