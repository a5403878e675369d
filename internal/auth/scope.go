package auth

import (
	"github.com/paddockhq/paddock/internal/rights"
)

// ScopeOf is who p is for every service that acts for callers: its
// tenant, its key (for the record), the one sandbox of a sandbox-scoped
// token, and the rights its scopes grant (rights.FromScopes). It is the
// only place a credential becomes a Scope; every surface calls it.
func ScopeOf(p Principal) rights.Scope {
	names := make([]string, len(p.Scopes))
	for i, s := range p.Scopes {
		names[i] = string(s)
	}
	return rights.Scope{Tenant: p.Tenant, Actor: p.KeyID, Sandbox: p.Sandbox, Token: p.TokenID != "",
		Rights: rights.FromScopes(names)}
}
