package wire

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Exposed ports (docs/ports.md).

// PortTokenParam is the query parameter of a port URL's token.
const PortTokenParam = "paddock_token"

// PortURLRequest asks for a port URL (POST .../ports/{port}/url).
type PortURLRequest struct {
	TTLS int64 `json:"ttl_s"` // 0: an hour
}

// PortURL is a link to a sandbox's port: the URL carries a token that
// reaches that one port and nothing else.
type PortURL struct {
	Sandbox   string    `json:"sandbox"`
	Port      int       `json:"port"`
	URL       string    `json:"url"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// PortPath is the path of a sandbox's port on the API's own origin.
func PortPath(sandbox string, port int) string {
	return "/v1/sandboxes/" + url.PathEscape(sandbox) + "/ports/" + strconv.Itoa(port) + "/"
}

// PortLink is the URL of a sandbox's port, the one rule every surface
// builds it by: under base (the API's scheme://host[:port], as the caller
// reached it), or, when domain is set (serve's --ports-domain), at
// PORT-SANDBOX.DOMAIN with base's scheme and port. token, if set, is
// appended as PortTokenParam.
func PortLink(base, domain, sandbox string, port int, token string) string {
	scheme, host, ok := strings.Cut(strings.TrimRight(base, "/"), "://")
	if !ok {
		scheme, host = "http", base
	}
	path := PortPath(sandbox, port)
	if domain != "" {
		name := strconv.Itoa(port) + "-" + sandbox + "." + domain
		if _, p, err := net.SplitHostPort(host); err == nil && p != "" {
			name += ":" + p
		}
		host, path = name, "/"
	}
	s := scheme + "://" + host + path
	if token != "" {
		s += "?" + PortTokenParam + "=" + url.QueryEscape(token)
	}
	return s
}
