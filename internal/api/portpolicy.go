package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/auth"
)

// Hooks other surfaces (the E2B adapter) give port routing: ports of a
// port host that a mount serves, a sandbox's public ports and Host mask,
// and the headers a port token may come in.

// HostPortHandler serves a request for port host {port}-{id}.{domain} in
// place of the sandbox's port (the mount authenticates it itself).
type HostPortHandler func(w http.ResponseWriter, r *http.Request, sandboxID string)

// PortPolicy is what a sandbox's owner chose for its ports.
type PortPolicy struct {
	// Tenant is the sandbox's ("": no such running sandbox: nothing below
	// applies).
	Tenant string
	// Public: its port hosts answer requests that carry no credential (a
	// credential that is given is still checked).
	Public bool
	// Host, if set, is the Host header the sandbox's server is sent,
	// "${PORT}" replaced by the port.
	Host string
}

// publicActor is the actor on the record of a request to a public port.
const publicActor = "public"

// policy is sandbox id's port policy (none without the hook).
func (s *Server) policy(id string, port int) PortPolicy {
	if s.o.PortPolicy == nil {
		return PortPolicy{}
	}
	return s.o.PortPolicy(id, port)
}

// publicPrincipal is who a credential-less request to a public port acts
// as: the sandbox's tenant, with exec on that port alone (the claim of a
// port link's token), rate-limited per sandbox.
func publicPrincipal(tenant, id string, port int) auth.Principal {
	return auth.Principal{KeyID: publicActor + ":" + id, Tenant: tenant, Scopes: []auth.Scope{auth.ScopeExec},
		Sandbox: portClaim(id, port), TokenID: publicActor}
}

// maskHost is the Host header of a masked request.
func maskHost(mask string, port int) string {
	return strings.ReplaceAll(mask, "${PORT}", strconv.Itoa(port))
}

// headerToken is a port token sent in one of the configured headers.
func (s *Server) headerToken(r *http.Request) (name, tok string) {
	for _, h := range s.o.PortTokenHeaders {
		if v := strings.TrimSpace(r.Header.Get(h)); v != "" {
			return h, v
		}
	}
	return "", ""
}
