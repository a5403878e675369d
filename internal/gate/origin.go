package gate

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
)

// The origin helpers of every browser check: the REST hardening's CORS
// and cross-site refusal, the WebSockets' check against cross-site
// WebSocket hijacking (CSWSH), and /mcp's. Each check keeps its own
// policy (which origins it lets in); how an Origin is read and compared
// is here, once.

// maxOrigin bounds an Origin header worth parsing.
const maxOrigin = 2048

// NormalizeOrigin returns an Origin header as scheme://host[:port] in
// lower case with the default port dropped, or false for "null" (sandboxed
// frames, file: pages) and anything else that is not an http(s) origin:
// user info, a path, a query, a fragment, an opaque part, an empty host or
// a port outside 1-65535.
func NormalizeOrigin(o string) (string, bool) {
	if len(o) > maxOrigin {
		return "", false
	}
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", false
	}
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", false
		}
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// SameOrigin reports whether origin names the host the request was sent
// to (scheme aside: behind a TLS-terminating proxy the server cannot know
// it; the Host check has already vouched for the name).
func SameOrigin(origin, reqHost string) bool {
	n, ok := NormalizeOrigin(origin)
	if !ok {
		return false
	}
	u, _ := url.Parse(n)
	oh, op := u.Hostname(), u.Port()
	if op == "" {
		op = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	rh, rp := SplitHost(reqHost)
	if rp == "" {
		// A Host without a port was sent to its scheme's default port;
		// which scheme is unknown behind a proxy, but another port is
		// another origin.
		return oh != "" && oh == rh && (op == "80" || op == "443")
	}
	return oh != "" && oh == rh && op == rp
}

// SplitHost splits a Host header into a lower-case name (no brackets, no
// trailing dot) and port.
func SplitHost(h string) (string, string) {
	host, port := h, ""
	if hh, pp, err := net.SplitHostPort(h); err == nil {
		host, port = hh, pp
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	return strings.TrimSuffix(strings.ToLower(host), "."), port
}

// CrossSiteSubresource reports a browser's cross-site request that
// carries no Origin (an img or script tag): following a link stays
// possible, anything else is refused by the checks.
func CrossSiteSubresource(r *http.Request) bool {
	return r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "cross-site" &&
		r.Header.Get("Sec-Fetch-Mode") != "navigate"
}

// Origins is a set of allowed cross-site origins (scheme://host[:port]).
type Origins struct{ set map[string]bool }

// NewOrigins reads allowed origins. An entry that is not an origin is
// left out and named in the error; the others are kept.
func NewOrigins(list []string) (*Origins, error) {
	o := &Origins{set: map[string]bool{}}
	var bad error
	for _, s := range list {
		n, ok := NormalizeOrigin(s)
		if !ok {
			if bad == nil {
				bad = fmt.Errorf("allowed origin %q: want scheme://host[:port]", s)
			}
			continue
		}
		o.set[n] = true
	}
	return o, bad
}

// Allowed returns origin's normal form and whether it is in the set.
func (o *Origins) Allowed(origin string) (string, bool) {
	n, ok := NormalizeOrigin(origin)
	if !ok || o == nil {
		return n, false
	}
	return n, o.set[n]
}

// ValidOriginPatterns checks WebSocket origin patterns (see
// CheckWebSocketOrigin).
func ValidOriginPatterns(patterns []string) error {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("websocket origin pattern %q: %w", p, err)
		}
	}
	return nil
}

// CheckWebSocketOrigin refuses a cross-site browser page opening a
// WebSocket (cross-site WebSocket hijacking: a page opening a socket to
// the API on its visitor's behalf). A request without Origin is not from
// a browser; a same-origin page is allowed; so is an origin matching one
// of patterns (path.Match, case insensitive), each against the origin's
// host, or against "scheme://host" if the pattern contains "://".
func CheckWebSocketOrigin(r *http.Request, patterns []string) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	n, ok := NormalizeOrigin(origin)
	if !ok {
		return errs.New(errs.CodeForbidden, "WebSocket Origin %q is not allowed", clip(origin))
	}
	if SameOrigin(origin, r.Host) {
		return nil
	}
	u, _ := url.Parse(n)
	for _, p := range patterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), target); ok {
			return nil
		}
	}
	return errs.New(errs.CodeForbidden, "WebSocket Origin %q is not allowed for this server", clip(origin))
}

func clip(s string) string {
	if len(s) > 128 {
		s = s[:128] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
