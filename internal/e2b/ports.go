package e2b

import (
	"maps"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
)

// Sandbox URLs: getHost(port) is PORT-ID.DOMAIN, DOMAIN being serve's
// --ports-domain (the create answer's domain), served by Paddock's port
// routing. There, a port needs a credential — the trafficAccessToken in
// the e2b-traffic-access-token header (or any of Paddock's port
// credentials) — unless the sandbox was created with
// network.allowPublicTraffic: true. network.maskRequestHost sets the Host
// header the sandbox's server sees ("${PORT}" replaced). Envd's and the
// code interpreter's ports on a port host are this adapter's (the SDK
// reaches envd at 49983-ID.DOMAIN when it is given no sandbox URL).
//
// Both options are kept in the sandbox's labels (Paddock's, hidden from
// E2B's metadata and refused in it), so they survive a restart and follow
// a fork.

// Labels of the port options.
const (
	publicTrafficLabel = "paddock.e2b/public-traffic"
	maskHostLabel      = "paddock.e2b/mask-host"
)

// TrafficTokenHeader is the header E2B's clients send a sandbox's
// trafficAccessToken in.
const TrafficTokenHeader = "E2b-Traffic-Access-Token"

// maskRE is a Host mask: a host name or address, an optional port, with
// ${PORT} anywhere (no spaces, no CR/LF: it becomes a header).
var maskRE = regexp.MustCompile(`^([A-Za-z0-9._\-\[\]:]|\$\{PORT\})+$`)

// portLabels adds a create's port options to the sandbox's labels.
func portLabels(labels map[string]string, n *e2bNetwork) (map[string]string, error) {
	for k := range labels {
		if k == publicTrafficLabel || k == maskHostLabel {
			return nil, errs.Invalid("metadata key %s is reserved by Paddock", k)
		}
	}
	if n == nil || (n.AllowPublicTraffic == nil && n.MaskRequestHost == nil) {
		return labels, nil
	}
	out := make(map[string]string, len(labels)+2)
	maps.Copy(out, labels)
	if n.AllowPublicTraffic != nil && *n.AllowPublicTraffic {
		out[publicTrafficLabel] = "true"
	}
	if n.MaskRequestHost != nil {
		m := strings.TrimSpace(*n.MaskRequestHost)
		if m == "" || len(m) > 253 || !maskRE.MatchString(m) {
			return nil, errs.Invalid("network.maskRequestHost must be a host name (${PORT} may stand for the port)")
		}
		out[maskHostLabel] = m
	}
	return out, nil
}

// portUpdate refuses the port options in a network update: E2B sets them
// at create only.
func portUpdate(n *e2bNetwork) error {
	if n.AllowPublicTraffic != nil || n.MaskRequestHost != nil {
		return errs.Invalid("network.allowPublicTraffic and network.maskRequestHost are set at create, not updated")
	}
	return nil
}

// hidePortLabels removes the port options' labels from E2B's metadata.
func hidePortLabels(meta map[string]string) map[string]string {
	delete(meta, publicTrafficLabel)
	delete(meta, maskHostLabel)
	return meta
}

// PortPolicy is a sandbox's port options, for Paddock's port routing
// (api.Options.PortPolicy): its tenant, whether its ports are public, its
// Host mask.
func (s *Server) PortPolicy(id string, _ int) (tenant string, public bool, host string) {
	tenant, labels, ok := s.m.PortLabels(id)
	if !ok {
		return "", false, ""
	}
	return tenant, labels[publicTrafficLabel] == "true", labels[maskHostLabel]
}

// HostPorts are the ports of a port host this adapter serves (envd's and
// the code interpreter's), for api.Options.HostPorts: the host names the
// sandbox, whatever E2b-Sandbox-Id the request carries.
func (s *Server) HostPorts() map[int]func(http.ResponseWriter, *http.Request, string) {
	out := map[int]func(http.ResponseWriter, *http.Request, string){}
	h := s.Handler()
	for _, p := range []string{EnvdPort, CodeInterpreterPort} {
		port, _ := strconv.Atoi(p)
		out[port] = func(w http.ResponseWriter, r *http.Request, id string) {
			r = r.Clone(r.Context())
			r.Header.Set(hdrSandboxID, id)
			r.Header.Set(hdrSandboxPort, p)
			h.ServeHTTP(w, r)
		}
	}
	return out
}

// domain is the create answer's domain: the ports domain, if any.
func (s *Server) domain() *string {
	d := strings.Trim(strings.ToLower(strings.TrimSpace(s.o.PortsDomain)), ".")
	if d == "" {
		return nil
	}
	return &d
}
