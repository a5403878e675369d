package api

import (
	"context"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// PortLinks makes the links of sandbox ports: the one place the REST
// API's POST /v1/sandboxes/{id}/ports/{port}/url and MCP's port_url build
// them (wire.PortLink). A link carries a sandbox token minted for that
// one port (portClaim), so that a browser can open it without a key.
type PortLinks struct {
	m      *sandbox.Manager
	keys   *auth.Service
	domain string
}

// NewPortLinks returns the links of m's ports, with tokens from keys, on
// the ports domain (serve's --ports-domain; "" for path links under the
// API's origin).
func NewPortLinks(m *sandbox.Manager, keys *auth.Service, domain string) *PortLinks {
	return &PortLinks{m: m, keys: keys, domain: strings.Trim(strings.ToLower(strings.TrimSpace(domain)), ".")}
}

// PortURL makes a link to port of sandbox id, valid for ttl (0: an
// hour), for the caller ctx carries (rights.FromContext) at the address
// the caller reached this server at (gate.BaseURL). The same method
// signature as the client's.
func (pl *PortLinks) PortURL(ctx context.Context, id string, port int, ttl time.Duration) (wire.PortURL, error) {
	sc := rights.FromContext(ctx)
	if ttl == 0 {
		ttl = defaultPortURLTTL
	}
	if ttl < time.Second || ttl > auth.MaxTokenTTL {
		return wire.PortURL{}, errs.Invalid("ttl_s must be between 1 and %d", int64(auth.MaxTokenTTL/time.Second))
	}
	if _, err := pl.m.ExposePort(ctx, sc, id, port); err != nil {
		return wire.PortURL{}, err
	}
	base := gate.BaseURL(ctx)
	if base == "" {
		return wire.PortURL{}, errs.New(errs.CodeUnsupported, "this server runs its own sandbox manager without an HTTP server, so sandbox ports have no URL; run `paddock serve` and point `paddock mcp` at it (PADDOCK_URL), or reach the port from inside the sandbox with exec")
	}
	tok, err := pl.keys.MintToken(sc, portClaim(id, port), []wire.Scope{wire.ScopeExec}, ttl)
	if err != nil {
		return wire.PortURL{}, err
	}
	return wire.PortURL{Sandbox: id, Port: port, URL: wire.PortLink(base, pl.domain, id, port, tok.Token), Token: tok.Token,
		ExpiresAt: tok.ExpiresAt}, nil
}
