package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The DevTools protocol itself, for tools that speak it (Playwright's
// connectOverCDP, Puppeteer's connect, chromedp's remote allocator):
// Chromium's discovery documents and WebSockets, behind Paddock's
// authentication, relayed to the browser in the sandbox. What the client
// sent to authenticate (the key, cookies, its Origin) never reaches the
// sandbox.

// WSProtocol is the WebSocket subprotocol browsers offer (with
// "bearer.KEY") to authenticate; it is answered on the browser's behalf.
const WSProtocol = "paddock.v1"

// DevToolsJSON returns Chromium's /json/version or /json/list (which:
// "version" or "list") with every DevTools URL replaced by Paddock's:
// wsBase is where the client reaches this sandbox's browser routes, e.g.
// "wss://paddock.example.com/v1/sandboxes/sb-x/browser". The browser is
// started if it is not running (a client connecting wants one).
func (s *Service) DevToolsJSON(ctx context.Context, sc sandbox.Scope, id, which, wsBase string) ([]byte, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return nil, err
	}
	if which != "version" && which != "list" {
		return nil, errs.NotFound("no DevTools document %q", clipText(which, 32))
	}
	sess, err := s.session(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+sess.d.host()+"/json/"+which, nil)
	if err != nil {
		return nil, err
	}
	resp, err := sess.d.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the browser's DevTools do not answer")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONDoc+1))
	if err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "reading the browser's DevTools document")
	}
	if resp.StatusCode != http.StatusOK || len(body) > maxJSONDoc {
		return nil, errs.New(errs.CodeUnavailable, "the browser answered /json/%s with status %d (%d bytes)", which, resp.StatusCode, len(body))
	}
	out, err := rewriteDevToolsJSON(body, which, wsBase)
	if err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the browser sent a malformed DevTools document")
	}
	return out, nil
}

// rewriteDevToolsJSON replaces the DevTools URLs of a /json/version or
// /json/list document (the sandbox's, so untrusted: only well-formed
// target ids make it into a URL) with wsBase's, and drops the front-end
// URLs (they point at Google's servers with the sandbox's address).
func rewriteDevToolsJSON(body []byte, which, wsBase string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	switch which {
	case "version":
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			return nil, err
		}
		if doc == nil {
			return nil, errors.New("not an object")
		}
		doc["webSocketDebuggerUrl"] = wsBase + "/cdp"
		return json.MarshalIndent(doc, "", "   ")
	case "list":
		var list []map[string]any
		if err := dec.Decode(&list); err != nil {
			return nil, err
		}
		out := make([]map[string]any, 0, len(list))
		for _, t := range list {
			id, _ := t["id"].(string)
			if t == nil || !guestapi.ValidDevToolsID(id) {
				continue
			}
			delete(t, "devtoolsFrontendUrl")
			delete(t, "devtoolsFrontendUrlCompat")
			if _, ok := t["webSocketDebuggerUrl"]; ok {
				t["webSocketDebuggerUrl"] = wsBase + "/cdp/page/" + id
			}
			out = append(out, t)
		}
		return json.MarshalIndent(out, "", "   ")
	}
	return nil, fmt.Errorf("unknown document %q", which)
}

// Headers a DevTools WebSocket handshake passes on; everything else (the
// key, cookies, Origin — Chromium refuses unknown origins — and forwarding
// headers) stays out of the sandbox.
var cdpHeaders = []string{"Connection", "Upgrade", "Sec-Websocket-Key", "Sec-Websocket-Version",
	"Sec-Websocket-Extensions", "User-Agent"}

// ServeCDP relays a DevTools WebSocket to the sandbox's browser: the
// browser's endpoint (page ""), or a page's ("page/<target id>"). It
// answers the request itself; an error before the relay starts is
// returned without an answer written.
func (s *Service) ServeCDP(w http.ResponseWriter, r *http.Request, sc sandbox.Scope, id, page string) error {
	if err := sc.Need(rights.Exec); err != nil {
		return err
	}
	path := ""
	switch {
	case page == "":
	case strings.HasPrefix(page, "page/") && guestapi.ValidDevToolsID(strings.TrimPrefix(page, "page/")):
		path = "/devtools/" + page
	default:
		return errs.NotFound("no DevTools endpoint %q", clipText(page, 80))
	}
	if !headerHas(r.Header, "Upgrade", "websocket") {
		return errs.Invalid("this is a WebSocket endpoint (the DevTools protocol); connect with a CDP client such as Playwright's connectOverCDP")
	}
	sess, err := s.session(r.Context(), sc, id)
	if err != nil {
		return err
	}
	if path == "" {
		path = sess.d.wsPath
	}
	release, err := s.acquire(id, "CDP", s.o.MaxCDP)
	if err != nil {
		return err
	}
	defer release()
	d := sess.d
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
			pr.Out.URL = &url.URL{Scheme: "http", Host: d.host(), Path: path}
			pr.Out.Host = d.host()
		},
		Transport: d.transport(),
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
		ErrorLog: nil,
	}
	start := time.Now()
	return s.m.BrowserAction(r.Context(), sc, id, "cdp", map[string]any{"endpoint": path, "instance": d.instance},
		func() (map[string]any, error) {
			rp.ServeHTTP(w, r)
			data := map[string]any{"duration_ms": time.Since(start).Milliseconds()}
			if relayErr != nil {
				s.log.Debug("browser: CDP relay failed", "sandbox", id, "err", relayErr)
				data["error"] = "relay failed"
			}
			return data, nil
		})
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
