package console

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"path"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
)

// apiPrefix is where the page reaches the REST API: /ui/api/v1/... is
// /v1/... with the session's key.
const apiPrefix = Prefix + "/api"

// upstream is the handler API calls go to.
func (c *Console) upstream(ctx context.Context) (http.Handler, error) {
	if c.o.Upstream != nil {
		return c.o.Upstream, nil
	}
	if srv, ok := ctx.Value(http.ServerContextKey).(*http.Server); ok && srv.Handler != nil {
		return srv.Handler, nil
	}
	return nil, errs.New(errs.CodeUnavailable, "the console is not mounted in an HTTP server")
}

// apiPath maps /ui/api/v1/... to /v1/... (and /ui/api/metrics to /metrics); anything else (another prefix, a
// path that is not clean) is refused, so that the console reaches only
// the versioned API and never loops back into itself.
func apiPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, apiPrefix)
	if ok && rest == "/metrics" { // the server overview reads it (admin scope, as for any client)
		return rest, true
	}
	if !ok || !strings.HasPrefix(rest, "/v1/") || (path.Clean(rest) != rest && path.Clean(rest)+"/" != rest) {
		return "", false
	}
	if strings.Contains(rest, "\\") || strings.Contains(rest, "\x00") {
		return "", false
	}
	return rest, true
}

// forward hands the call to the REST API as the session's key. The
// cookie, the CSRF token and any credential the page tried to add are
// dropped: the only credential is the session's.
func (c *Console) forward(w http.ResponseWriter, r *http.Request, s *session) {
	p, ok := apiPath(r.URL.Path)
	if !ok {
		writeError(w, errs.NotFound("the console reaches only /ui/api/v1/..."))
		return
	}
	raw := ""
	if r.URL.RawPath != "" {
		if rp, ok := strings.CutPrefix(r.URL.RawPath, apiPrefix); ok {
			raw = rp
		}
	}
	up, err := c.upstream(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	in := r.Clone(r.Context())
	in.URL.Path, in.URL.RawPath = p, raw
	q := in.URL.Query()
	if q.Has("token") { // a credential in the URL would override nothing, but keep it out of logs
		q.Del("token")
		in.URL.RawQuery = q.Encode()
	}
	in.RequestURI = in.URL.RequestURI()
	in.Header.Del("Cookie")
	in.Header.Del(CSRFHeader)
	in.Header.Set("Authorization", "Bearer "+s.key)
	if isWebSocket(r) {
		in.Header.Del("Sec-WebSocket-Protocol")
		var keep []string
		for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
			for _, sp := range strings.Split(v, ",") {
				sp = strings.TrimSpace(sp)
				if sp != "" && !strings.HasPrefix(sp, CSRFProtocol) && !gate.HasPrefixFold(sp, "bearer.") {
					keep = append(keep, sp)
				}
			}
		}
		if len(keep) > 0 {
			in.Header.Set("Sec-WebSocket-Protocol", strings.Join(keep, ", "))
		}
	}
	sw := &statusWriter{ResponseWriter: w}
	// Whatever the API answers — a sandbox's file, process output — runs
	// nothing on the console's origin even if opened directly: no script,
	// no plugin, a sandboxed document (stored XSS through sandbox content).
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; sandbox")
	h.Del("Cross-Origin-Opener-Policy")
	up.ServeHTTP(sw, in)
	if sw.status == http.StatusUnauthorized {
		// The key no longer authenticates (revoked, expired): this console
		// is signed out now, and so is every other of that key.
		c.log.Info("console signed out: the API refused its key", "key", s.p.KeyID, "tenant", s.p.Tenant)
		c.st.endKey(s.p)
	}
}

// statusWriter notes the status of the API's answer; it keeps the
// optional interfaces the API uses (flushing streams, hijacking for
// WebSockets).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
