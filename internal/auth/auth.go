// Package auth authenticates API callers and carries who they are through
// a request's context.
//
// Three kinds of credential are accepted, in this order: the bootstrap
// admin key (Admin, from Bootstrap); API keys kept in the database
// (random, shown once, stored as SHA-256 hashes, each with an id, a tenant,
// scopes, an optional expiry and a revoked flag; "pdk_" or, for E2B
// clients, "e2b_" + hex); and sandbox-scoped tokens ("pdt_"), which need
// no row: they are HMAC-SHA256-signed with a secret kept in the data
// directory, bound to one sandbox, short-lived, and never hold more than
// the key that minted them still holds. Service is the Authenticator that
// checks all three; Migrations are its tables (tenants included).
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/wire"
)

// Scope is one permission a key carries (wire.Scope).
type Scope = wire.Scope

// Scopes.
const (
	ScopeRead  = wire.ScopeRead
	ScopeWrite = wire.ScopeWrite
	ScopeExec  = wire.ScopeExec
	ScopeAdmin = wire.ScopeAdmin
)

// AllScopes is every scope, in display order.
var AllScopes = []Scope{ScopeRead, ScopeWrite, ScopeExec, ScopeAdmin}

// DefaultTenant owns what the bootstrap admin key creates.
const DefaultTenant = "default"

// Principal is an authenticated caller.
type Principal struct {
	KeyID  string
	Tenant string
	Scopes []Scope
	// Sandbox, for a sandbox-scoped token, is the one sandbox it reaches.
	Sandbox string
	// TokenID, for a sandbox-scoped token, is the token's own id (KeyID is
	// then the key that minted it).
	TokenID string
}

// Can reports whether p holds scope s (admin holds every scope).
func (p Principal) Can(s Scope) bool {
	for _, have := range p.Scopes {
		if have == s || have == ScopeAdmin {
			return true
		}
	}
	return false
}

// Authenticator checks a bearer token.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// ParseScope reads a scope name.
func ParseScope(s string) (Scope, error) {
	for _, sc := range AllScopes {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", errs.Invalid("unknown scope %q (scopes: read, write, exec, admin)", clip(s))
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the caller of a request.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}

// KeyPrefix starts every Paddock key, so that secret scanners and people
// recognise one.
const KeyPrefix = "pdk_"

var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewKey returns a fresh random key: the prefix and 160 random bits.
func NewKey() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return KeyPrefix + keyEncoding.EncodeToString(b[:])
}

// Hash is how keys are stored: never the key itself.
func Hash(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// Admin authenticates the bootstrap admin key.
type Admin struct{ hash [32]byte }

// NewAdmin returns an authenticator for key.
func NewAdmin(key string) *Admin { return &Admin{hash: Hash(key)} }

// Principal is the admin's identity.
func (a *Admin) Principal() Principal {
	return Principal{KeyID: "admin", Tenant: DefaultTenant, Scopes: []Scope{ScopeAdmin}}
}

// Authenticate implements Authenticator, in constant time.
func (a *Admin) Authenticate(_ context.Context, token string) (Principal, error) {
	h := Hash(token)
	if subtle.ConstantTimeCompare(h[:], a.hash[:]) == 1 {
		return a.Principal(), nil
	}
	return Principal{}, errs.ErrUnauthenticated
}

// Bootstrap returns the admin key: envKey if set; else the one stored in
// dataDir/admin.key; else a new one, stored there (0600) and printed once
// to out.
func Bootstrap(dataDir, envKey string, out io.Writer) (string, error) {
	if envKey != "" {
		if len(envKey) < 16 {
			return "", errors.New("PADDOCK_ADMIN_KEY must be at least 16 characters")
		}
		return envKey, nil
	}
	path := filepath.Join(dataDir, "admin.key")
	if b, err := os.ReadFile(path); err == nil {
		key := strings.TrimSpace(string(b))
		if key == "" {
			return "", fmt.Errorf("%s is empty", path)
		}
		return key, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	key := NewKey()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write admin key: %w", err)
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	fmt.Fprintf(out, "Generated the admin API key (shown once; also stored in %s):\n\n    %s\n\n", path, key)
	return key, nil
}
