package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The sandbox's browser (docs/browser.md): thin handlers over the browser
// service the composition root gives the API (Options.Browser); the
// DevTools relay and the live view are in browser_devtools.go. Actions that
// change the page need exec (they run code in it and reach the network);
// reading it needs read. The DevTools routes start the browser and hand
// out full control of it: exec.
func (s *Server) browserRoutes() {
	const b = "/v1/sandboxes/{id}/browser"
	s.authed("GET "+b, rights.Read, s.browserStatus)
	s.authed("POST "+b+"/start", rights.Exec, s.browserStart)
	s.authed("POST "+b+"/stop", rights.Exec, s.browserStop)
	s.authed("POST "+b+"/navigate", rights.Exec, browserJSON(s, (*browser.Service).Navigate))
	s.authed("POST "+b+"/click", rights.Exec, browserJSON(s, (*browser.Service).Click))
	s.authed("POST "+b+"/type", rights.Exec, browserJSON(s, (*browser.Service).Type))
	s.authed("POST "+b+"/press", rights.Exec, browserJSON(s, (*browser.Service).Press))
	s.authed("POST "+b+"/scroll", rights.Exec, browserJSON(s, (*browser.Service).Scroll))
	s.authed("POST "+b+"/eval", rights.Exec, browserJSON(s, (*browser.Service).Eval))
	s.authed("GET "+b+"/text", rights.Read, s.browserText)
	s.authed("GET "+b+"/snapshot", rights.Read, s.browserSnapshot)
	s.authed("GET "+b+"/screenshot", rights.Read, s.browserScreenshot)
	s.authed("GET "+b+"/tabs", rights.Read, s.browserTabs)
	s.authed("POST "+b+"/tabs", rights.Exec, s.browserOpenTab)
	s.authed("POST "+b+"/tabs/{tab}/activate", rights.Exec, s.browserSwitchTab)
	s.authed("DELETE "+b+"/tabs/{tab}", rights.Exec, s.browserCloseTab)
	s.authed("GET "+b+"/downloads", rights.Read, s.browserDownloads)
	// Chromium's discovery documents; Playwright asks for json/version/.
	for _, doc := range []string{"version", "list"} {
		s.authed("GET "+b+"/json/"+doc, rights.Exec, s.browserJSONDoc(doc))
		s.authed("GET "+b+"/json/"+doc+"/", rights.Exec, s.browserJSONDoc(doc))
	}
	s.authedWS("GET "+b+"/cdp", rights.Exec, s.browserCDP)
	s.authedWS("GET "+b+"/cdp/page/{target}", rights.Exec, s.browserCDP)
	s.authedWS("GET "+b+"/view", rights.Read, s.browserView)
	s.authedWS("GET "+b+"/view/ws", rights.Read, s.browserViewWS)
}

// browserService is the browser service, or an unsupported error. It
// looks the sandbox up first, so that a server without browsers answers
// another tenant's sandbox as it answers a missing one (404).
func (s *Server) browserService(r *http.Request, sc sandbox.Scope) (*browser.Service, error) {
	if _, err := s.m.Resolve(r.Context(), sc, r.PathValue("id"), 0); err != nil {
		return nil, err
	}
	if s.o.Browser != nil {
		return s.o.Browser, nil
	}
	return nil, errs.New(errs.CodeUnsupported, "this server runs no browsers")
}

// browserJSON adapts an action taking a JSON body.
func browserJSON[Req, Resp any](s *Server, fn func(*browser.Service, context.Context, sandbox.Scope, string, Req) (Resp, error)) handler {
	return func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		svc, err := s.browserService(r, sc)
		if err != nil {
			writeError(w, r, err)
			return
		}
		req, ok := decoded[Req](w, r)
		if !ok {
			return
		}
		out, err := fn(svc, r.Context(), sc, r.PathValue("id"), req)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func (s *Server) browserCall(w http.ResponseWriter, r *http.Request, sc sandbox.Scope, fn func(*browser.Service) (any, error)) {
	svc, err := s.browserService(r, sc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, err := fn(svc)
	reply(w, r, out, err)
}

func (s *Server) browserStatus(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) { return b.Status(r.Context(), sc, r.PathValue("id")) })
}

func (s *Server) browserStart(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) { return b.Start(r.Context(), sc, r.PathValue("id")) })
}

func (s *Server) browserStop(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) { return b.Stop(r.Context(), sc, r.PathValue("id")) })
}

// queryInt reads an optional non-negative integer parameter.
func queryInt(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errs.Invalid("%s must be a non-negative number", name)
	}
	return n, nil
}

func queryBool(r *http.Request, name string) bool {
	v := strings.ToLower(r.URL.Query().Get(name))
	return v == "1" || v == "true" || v == "yes"
}

func (s *Server) browserText(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) {
		max, err := queryInt(r, "max_bytes")
		if err != nil {
			return nil, err
		}
		q := r.URL.Query()
		return b.Text(r.Context(), sc, r.PathValue("id"), wire.TextRequest{Format: q.Get("format"), MaxBytes: max, Tab: q.Get("tab")})
	})
}

func (s *Server) browserSnapshot(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) {
		max, err := queryInt(r, "max_bytes")
		if err != nil {
			return nil, err
		}
		return b.Snapshot(r.Context(), sc, r.PathValue("id"), wire.SnapshotRequest{MaxBytes: max, Tab: r.URL.Query().Get("tab")})
	})
}

// browserScreenshot answers with the PNG itself; its size and tab are in
// headers.
func (s *Server) browserScreenshot(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	svc, err := s.browserService(r, sc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	shot, err := svc.Screenshot(r.Context(), sc, r.PathValue("id"),
		wire.ScreenshotRequest{FullPage: queryBool(r, "full_page"), Tab: r.URL.Query().Get("tab")})
	if err != nil {
		writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(shot.PNG)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Paddock-Width", strconv.Itoa(shot.Width))
	h.Set("X-Paddock-Height", strconv.Itoa(shot.Height))
	h.Set("X-Paddock-Tab", shot.Tab)
	h.Set("X-Paddock-Url", url.QueryEscape(shot.URL)) // the page's URL: anything, so escaped
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(shot.PNG)
}

func (s *Server) browserTabs(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) { return b.Tabs(r.Context(), sc, r.PathValue("id")) })
}

func (s *Server) browserOpenTab(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	svc, err := s.browserService(r, sc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	req, ok := decoded[wire.OpenTabRequest](w, r)
	if !ok {
		return
	}
	tab, err := svc.OpenTab(r.Context(), sc, r.PathValue("id"), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, tab)
}

func (s *Server) browserSwitchTab(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) {
		return b.SwitchTab(r.Context(), sc, r.PathValue("id"), r.PathValue("tab"))
	})
}

func (s *Server) browserCloseTab(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) {
		return b.CloseTab(r.Context(), sc, r.PathValue("id"), r.PathValue("tab"))
	})
}

func (s *Server) browserDownloads(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	s.browserCall(w, r, sc, func(b *browser.Service) (any, error) { return b.Downloads(r.Context(), sc, r.PathValue("id")) })
}

// browserWSBase is where the client reaches this sandbox's browser routes,
// as a WebSocket URL (for the DevTools documents).
func browserWSBase(r *http.Request, id string) string {
	scheme := "ws"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "wss"
	}
	return scheme + "://" + r.Host + "/v1/sandboxes/" + url.PathEscape(id) + "/browser"
}

func (s *Server) browserJSONDoc(doc string) handler {
	return func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		svc, err := s.browserService(r, sc)
		if err != nil {
			writeError(w, r, err)
			return
		}
		id := r.PathValue("id")
		body, err := svc.DevToolsJSON(r.Context(), sc, id, doc, browserWSBase(r, id))
		if err != nil {
			writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(body)
	}
}
