// Package rights names what a caller may do — the one list of rights —
// and carries it with who the caller is (Scope) to every service that
// acts for callers: the sandbox manager, keys, tenants, secrets, the
// audit log.
//
// The rule every service follows: a method that acts for a caller takes
// its Scope and checks the right it needs (Need) before anything else —
// before looking anything up, so that a refusal is the same whether or
// not the thing exists. Methods without a Scope are the server's own.
// Surfaces (REST, E2B, MCP) only authenticate, map the credential to a
// Scope (auth.ScopeOf) and translate; they decide nothing.
//
// A key holds scopes (read, write, exec, admin; wire.Scope); FromScopes
// maps them to rights. Rights are finer than scopes so that a coming
// feature gets its own right without a new key format: today each right
// is granted by one scope (Right.Scope), which is also what a refusal
// names.
package rights

import (
	"context"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
)

// Right is one thing a caller may do.
type Right uint32

// Rights. Keep in step with names, grants and docs/auth.md.
const (
	// Read: see sandboxes, their files, processes, network policy,
	// browser pages; list templates and the tenant's secret names.
	Read Right = 1 << iota
	// Write: create, delete and renew sandboxes; change files.
	Write
	// Exec: run code in a sandbox (exec, processes, terminals, browser
	// actions, DevTools) and reach its ports.
	Exec
	// Admin: act on other tenants (their secrets, their keys).
	Admin
	// Network: change a running sandbox's egress policy.
	Network
	// Secrets: set and delete the tenant's secrets (values are never read
	// back by anyone).
	Secrets
	// Keys: manage API keys, tenants and quotas.
	Keys
	// Audit: read the audit log and the metrics.
	Audit
	// Templates: pull, import, build, push and delete the tenant's own
	// templates (publishing shared ones needs Admin).
	Templates
	// Snapshots: take, restore and delete sandbox snapshots (coming).
	Snapshots
	// Volumes: create, attach and delete volumes (coming).
	Volumes

	last
)

var names = map[Right]string{Read: "read", Write: "write", Exec: "exec", Admin: "admin", Network: "network",
	Secrets: "secrets", Keys: "keys", Audit: "audit", Templates: "templates", Snapshots: "snapshots", Volumes: "volumes"}

// grants is the key scope that grants each right (admin grants all).
var grants = map[Right]string{Read: "read", Write: "write", Exec: "exec", Admin: "admin", Network: "write",
	Secrets: "write", Keys: "admin", Audit: "admin", Templates: "write", Snapshots: "write", Volumes: "write"}

// All is every right (what the admin scope holds).
const All Set = Set(last - 1)

// Every lists each right once, in order.
func Every() []Right {
	out := make([]Right, 0, len(names))
	for r := Read; r < last; r <<= 1 {
		out = append(out, r)
	}
	return out
}

func (r Right) String() string {
	if n, ok := names[r]; ok {
		return n
	}
	return "unknown"
}

// Scope is the key scope that grants r: what a refusal tells the caller
// their key lacks.
func (r Right) Scope() string { return grants[r] }

// Set is a set of rights.
type Set uint32

// Of returns the set of rs.
func Of(rs ...Right) Set {
	var s Set
	for _, r := range rs {
		s |= Set(r)
	}
	return s
}

// Has reports whether s holds r.
func (s Set) Has(r Right) bool { return r != 0 && Set(r)&s == Set(r) }

// Without returns s less r.
func (s Set) Without(r Right) Set { return s &^ Set(r) }

func (s Set) String() string {
	var parts []string
	for _, r := range Every() {
		if s.Has(r) {
			parts = append(parts, r.String())
		}
	}
	return strings.Join(parts, ",")
}

// FromScopes maps a key's (or token's) scopes to rights: read, write and
// exec grant what Right.Scope says, admin grants everything. Unknown
// scope names grant nothing.
func FromScopes(scopes []string) Set {
	var s Set
	for _, sc := range scopes {
		if sc == "admin" {
			return All
		}
		for r, g := range grants {
			if g == sc {
				s |= Set(r)
			}
		}
	}
	return s
}

// Scope is who is asking and what they may do. A sandbox outside the
// tenant does not exist for them; Sandbox, when set (a sandbox-scoped
// token), is the only one they may see, and they may create or list no
// other.
type Scope struct {
	Tenant string
	Actor  string // key id, for the record
	// Sandbox, when set, is the only sandbox this caller may see.
	Sandbox string
	// Token: the caller is a sandbox-scoped token (not a key).
	Token bool
	// Rights are what the caller may do.
	Rights Set
}

// Need returns nil if sc holds r, else the forbidden error every surface
// answers: `this key lacks the "exec" scope`.
func (sc Scope) Need(r Right) error {
	if sc.Rights.Has(r) {
		return nil
	}
	who := "key"
	if sc.Token {
		who = "token"
	}
	return errs.New(errs.CodeForbidden, "this %s lacks the %q scope", who, r.Scope())
}

// Can reports whether sc holds r.
func (sc Scope) Can(r Right) bool { return sc.Rights.Has(r) }

type scopeKey struct{}

// WithScope returns ctx carrying sc as the caller: for services whose
// callers are the request's (a surface's backend over the manager reads
// it with FromContext).
func WithScope(ctx context.Context, sc Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, sc)
}

// FromContext is the caller ctx carries; a context without one carries
// the zero Scope, which may do nothing.
func FromContext(ctx context.Context) Scope {
	sc, _ := ctx.Value(scopeKey{}).(Scope)
	return sc
}
