package api

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"html/template"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The DevTools protocol itself, for tools that speak it (Playwright's
// connectOverCDP, Puppeteer's connect), relayed to the sandbox's browser;
// and the live view, a page that shows the browser's screen. What the
// client sent to authenticate (the key, cookies, its Origin) never
// reaches the sandbox.

// cdpHeaders are what a DevTools WebSocket handshake passes on; everything
// else (the key, cookies, Origin — Chromium refuses unknown origins — and
// forwarding headers) stays out of the sandbox.
var cdpHeaders = []string{"Connection", "Upgrade", "Sec-Websocket-Key", "Sec-Websocket-Version",
	"Sec-Websocket-Extensions", "User-Agent"}

// browserCDP relays a DevTools WebSocket to the sandbox's browser: the
// browser's endpoint, or a page's (/cdp/page/{target}). The relay is on
// the record (browser.cdp).
func (s *Server) browserCDP(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	svc, err := s.browserService(r, sc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	id, page := r.PathValue("id"), r.PathValue("target")
	if page != "" && !browser.ValidTarget(page) {
		writeError(w, r, errs.NotFound("no DevTools endpoint %q", clipPath("page/"+page)))
		return
	}
	if !headerHas(r.Header, "Upgrade", "websocket") {
		writeError(w, r, errs.Invalid("this is a WebSocket endpoint (the DevTools protocol); connect with a CDP client such as Playwright's connectOverCDP"))
		return
	}
	relay, err := svc.Relay(r.Context(), sc, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer relay.Close()
	path := relay.Browser
	if page != "" {
		path = "/devtools/page/" + page
	}
	offered := headerHas(r.Header, "Sec-WebSocket-Protocol", WSProtocol)
	var relayErr error
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			h := http.Header{}
			for _, k := range cdpHeaders {
				if v := pr.Out.Header.Values(k); len(v) > 0 {
					h[k] = v
				}
			}
			pr.Out.Header = h
			pr.Out.URL = &url.URL{Scheme: "http", Host: relay.Host, Path: path}
			pr.Out.Host = relay.Host
		},
		Transport: relay.Transport,
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del("Set-Cookie")
			if offered && resp.StatusCode == http.StatusSwitchingProtocols {
				resp.Header.Set("Sec-WebSocket-Protocol", WSProtocol)
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			relayErr = err
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `{"error":{"code":"unavailable","message":"the sandbox's browser did not accept the DevTools connection"}}`+"\n")
		},
	}
	start := time.Now()
	err = s.m.Act(r.Context(), sc, id, rights.Exec, "browser.cdp", map[string]any{"endpoint": path, "instance": relay.Instance},
		func() (map[string]any, error) {
			rp.ServeHTTP(w, r)
			data := map[string]any{"duration_ms": time.Since(start).Milliseconds()}
			if relayErr != nil {
				s.log.Debug("browser: CDP relay failed", "sandbox", id, "err", relayErr)
				data["error"] = "relay failed"
			}
			return data, nil
		})
	if err != nil {
		writeError(w, r, err) // the record could not be written: nothing was relayed
	}
}

func headerHas(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// browserView writes the live view page of the sandbox (the page
// authenticates its WebSocket with the token of its own URL). The page
// allows only its own script and style, frames nothing and is framed by
// nothing, and sends no referrer (its URL carries the token).
func (s *Server) browserView(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	if _, err := s.browserService(r, sc); err != nil {
		writeError(w, r, err)
		return
	}
	id := r.PathValue("id")
	if _, err := s.m.Resolve(r.Context(), sc, id, rights.Read); err != nil {
		writeError(w, r, err)
		return
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
	_ = viewPage.Execute(w, struct{ ID, Nonce string }{id, nonce})
}

// viewWriteLimit bounds one message to a viewer (a slow one is cut off).
const viewWriteLimit = 10 * time.Second

// browserViewWS streams the screen to the live view page.
func (s *Server) browserViewWS(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	svc, err := s.browserService(r, sc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	id := r.PathValue("id")
	c, err := accept(w, r)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context()) // the viewer sends nothing; this notices it leaving
	send := func(ctx context.Context, text bool, p []byte) error {
		typ := websocket.MessageBinary
		if text {
			typ = websocket.MessageText
		}
		wctx, cancel := context.WithTimeout(ctx, viewWriteLimit)
		defer cancel()
		return c.Write(wctx, typ, p)
	}
	if err := svc.View(ctx, sc, id, send); err != nil {
		_ = c.Close(websocket.StatusInternalError, clipReason(errs.Public(err)))
		return
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
}

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
