package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The DevTools protocol itself, for tools that speak it (Playwright's
// connectOverCDP, Puppeteer's connect, chromedp's remote allocator):
// Chromium's discovery documents (DevToolsJSON) and relays of its
// WebSockets (Relay; the API serves them, behind Paddock's
// authentication).

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
	sess, err := s.session(ctx, sc, id, rights.Exec)
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
			if t == nil || !sandbox.ValidDevToolsID(id) {
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

// Relay is a caller's own DevTools connection to a sandbox's browser
// (Playwright's connectOverCDP through the API): the instance it reaches
// and how to reach it, counted against the sandbox's limit of DevTools
// connections until Close.
type Relay struct {
	Instance int
	Host     string // what Chromium must see in Host (it refuses names)
	Browser  string // the browser's endpoint, /devtools/browser/<id>
	// Transport dials the instance, for the caller, for each request.
	Transport *http.Transport
	release   func()
}

// Close releases the relay's place.
func (r *Relay) Close() { r.release() }

// Relay starts the sandbox's browser if it is not running and returns a
// relay to it for the caller (exec: DevTools are full control of the
// browser).
func (s *Service) Relay(ctx context.Context, sc sandbox.Scope, id string) (*Relay, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return nil, err
	}
	sess, err := s.session(ctx, sc, id, rights.Exec)
	if err != nil {
		return nil, err
	}
	release, err := s.acquire(id, "CDP", s.o.MaxCDP)
	if err != nil {
		return nil, err
	}
	d := sess.d
	d.sc, d.need = sc, rights.Exec // the caller's own connection
	return &Relay{Instance: d.instance, Host: d.host(), Browser: d.wsPath, Transport: d.transport(), release: release}, nil
}

// ValidTarget reports whether s is a well-formed DevTools target id (of a
// page endpoint a client asks for).
func ValidTarget(s string) bool { return sandbox.ValidDevToolsID(s) }
