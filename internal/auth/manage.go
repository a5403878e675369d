package auth

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/wire"
)

// Managing keys, tenants and tokens, for callers: every method takes the
// caller's rights.Scope and checks it first (package rights). A nil
// *Service is a server without a key store: it refuses as a real one
// would, and then answers unsupported.

// tokenRights is the right each token scope needs its minter to hold.
var tokenRights = map[Scope]rights.Right{ScopeRead: rights.Read, ScopeWrite: rights.Write, ScopeExec: rights.Exec}

var errNoKeyStore = errs.New(errs.CodeUnsupported, "this server has no key store")

// manages checks that sc may manage keys and tenants.
func (s *Service) manages(sc rights.Scope) error {
	if err := sc.Need(rights.Keys); err != nil {
		return err
	}
	// Tokens never carry admin; refusing them here as well keeps it so if
	// that ever changed.
	if sc.Sandbox != "" {
		return errs.New(errs.CodeForbidden, "a sandbox token cannot manage keys or tenants")
	}
	if s == nil {
		return errNoKeyStore
	}
	return nil
}

// CreateTenant makes a tenant.
func (s *Service) CreateTenant(ctx context.Context, sc rights.Scope, name string, q tenant.Quotas) (tenant.Tenant, error) {
	if err := s.manages(sc); err != nil {
		return tenant.Tenant{}, err
	}
	return s.tenants.Create(ctx, name, q)
}

// ListTenants lists the tenants.
func (s *Service) ListTenants(ctx context.Context, sc rights.Scope) ([]tenant.Tenant, error) {
	if err := s.manages(sc); err != nil {
		return nil, err
	}
	return s.tenants.List(ctx)
}

// GetTenant returns one tenant.
func (s *Service) GetTenant(ctx context.Context, sc rights.Scope, name string) (tenant.Tenant, error) {
	if err := s.manages(sc); err != nil {
		return tenant.Tenant{}, err
	}
	return s.tenants.Get(ctx, name)
}

// SetQuotas replaces a tenant's quotas.
func (s *Service) SetQuotas(ctx context.Context, sc rights.Scope, name string, q tenant.Quotas) (tenant.Tenant, error) {
	if err := s.manages(sc); err != nil {
		return tenant.Tenant{}, err
	}
	return s.tenants.SetQuotas(ctx, name, q)
}

// CreateKey makes a key for sc. The key itself is in the answer and
// nowhere else.
func (s *Service) CreateKey(ctx context.Context, sc rights.Scope, req KeyRequest) (CreatedKey, error) {
	if err := s.manages(sc); err != nil {
		return CreatedKey{}, err
	}
	if _, err := s.tenants.Get(ctx, req.Tenant); err != nil {
		if errs.CodeOf(err) == errs.CodeNotFound {
			return CreatedKey{}, errs.NotFound("tenant %q not found (create it first)", clipID(req.Tenant))
		}
		return CreatedKey{}, err
	}
	scopes, err := normalizeScopes(req.Scopes)
	if err != nil {
		return CreatedKey{}, err
	}
	for _, sc := range scopes {
		// Admin manages every tenant's keys and quotas; held by another
		// tenant's key it would let that tenant escape its own quotas.
		if sc == ScopeAdmin && req.Tenant != DefaultTenant {
			return CreatedKey{}, errs.Invalid("the admin scope is only for keys of the %q tenant: an admin key manages every tenant", DefaultTenant)
		}
	}
	if err := checkText("name", req.Name, maxKeyName); err != nil {
		return CreatedKey{}, err
	}
	if err := checkText("description", req.Description, maxKeyDescription); err != nil {
		return CreatedKey{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	var expires *time.Time
	if !req.ExpiresAt.IsZero() {
		if !req.ExpiresAt.After(now) {
			return CreatedKey{}, errs.Invalid("the expiry must be in the future")
		}
		if req.ExpiresAt.Sub(now) > maxKeyLife {
			return CreatedKey{}, errs.Invalid("the expiry must be within %d years", int(maxKeyLife/(365*24*time.Hour)))
		}
		t := req.ExpiresAt.UTC().Truncate(time.Microsecond)
		expires = &t
	}
	var key string
	switch req.Format {
	case "", FormatPaddock:
		req.Format, key = FormatPaddock, NewKey()
	case FormatE2B:
		key = NewE2BKey()
	default:
		return CreatedKey{}, errs.Invalid("key format must be %q or %q", FormatPaddock, FormatE2B)
	}
	active, total, err := s.db.counts(ctx, req.Tenant)
	if err != nil {
		return CreatedKey{}, errs.Wrap(errs.CodeUnavailable, err, "the key store cannot be read")
	}
	if active >= MaxActiveKeysPerTenant {
		return CreatedKey{}, errs.New(errs.CodeLimit, "tenant %s has %d active keys, the most allowed; revoke some first", req.Tenant, active)
	}
	if total >= maxKeyRows {
		return CreatedKey{}, errs.New(errs.CodeLimit, "the server holds %d keys, the most allowed", total)
	}
	k := KeyInfo{ID: newKeyID(), Tenant: req.Tenant, Name: req.Name, Description: req.Description, Scopes: scopes,
		Format: req.Format, Hint: key[:8], CreatedAt: now, ExpiresAt: expires}
	if err := s.db.insert(ctx, k, Hash(key)); err != nil {
		return CreatedKey{}, errs.Wrap(errs.CodeUnavailable, err, "the key store cannot be written")
	}
	return CreatedKey{KeyInfo: k, Key: key}, nil
}

// ListKeys returns the keys of tenantName ("" for all), oldest first.
func (s *Service) ListKeys(ctx context.Context, sc rights.Scope, tenantName string) ([]KeyInfo, error) {
	if err := s.manages(sc); err != nil {
		return nil, err
	}
	list, err := s.db.list(ctx, tenantName)
	if err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the key store cannot be read")
	}
	return list, nil
}

// GetKey returns one key.
func (s *Service) GetKey(ctx context.Context, sc rights.Scope, id string) (KeyInfo, error) {
	if err := s.manages(sc); err != nil {
		return KeyInfo{}, err
	}
	k, _, err := s.db.byID(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return KeyInfo{}, errs.NotFound("key %q not found", clipID(id))
	}
	if err != nil {
		return KeyInfo{}, errs.Wrap(errs.CodeUnavailable, err, "the key store cannot be read")
	}
	return k, nil
}

// RevokeKey revokes a key (and with it every token it minted), at once in
// this process. Revoking twice is not an error.
func (s *Service) RevokeKey(ctx context.Context, sc rights.Scope, id string) error {
	if err := s.manages(sc); err != nil {
		return err
	}
	found, err := s.db.revoke(ctx, id, s.now())
	if err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "the key store cannot be written")
	}
	s.forget(id)
	if !found {
		return errs.NotFound("key %q not found", clipID(id))
	}
	return nil
}

// Token is a minted sandbox token.
type Token = wire.Token

// MintToken makes a token for sandbox with scopes, valid for ttl (0:
// DefaultTokenTTL), on behalf of sc. The caller checks that sc reaches
// the sandbox. A token holds at most the rights of sc's key (the right
// each of its scopes grants), never admin, and cannot mint further
// tokens.
func (s *Service) MintToken(sc rights.Scope, sandboxID string, scopes []Scope, ttl time.Duration) (Token, error) {
	if sc.Sandbox != "" {
		return Token{}, errs.New(errs.CodeForbidden, "a sandbox token cannot mint tokens")
	}
	if s == nil {
		return Token{}, errNoKeyStore
	}
	if ttl == 0 {
		ttl = DefaultTokenTTL
	}
	if ttl < time.Second || ttl > MaxTokenTTL {
		return Token{}, errs.Invalid("ttl must be between 1 s and %d s", int64(MaxTokenTTL/time.Second))
	}
	if len(scopes) == 0 {
		return Token{}, errs.Invalid("scopes are required: any of read, write, exec")
	}
	want := map[Scope]bool{}
	for _, want1 := range scopes {
		switch want1 {
		case ScopeRead, ScopeWrite, ScopeExec:
		case ScopeAdmin:
			return Token{}, errs.Invalid("a sandbox token cannot hold the admin scope")
		default:
			return Token{}, errs.Invalid("unknown scope %q (tokens take read, write, exec)", clipID(string(want1)))
		}
		if !sc.Can(tokenRights[want1]) {
			return Token{}, errs.New(errs.CodeForbidden, "this key lacks the %q scope, so its tokens cannot have it", want1)
		}
		want[want1] = true
	}
	var ordered []Scope
	for _, s := range AllScopes {
		if want[s] {
			ordered = append(ordered, s)
		}
	}
	now := s.now()
	c := Claims{KeyID: sc.Actor, Sandbox: sandboxID, Scopes: ordered, IssuedAt: now.Truncate(time.Second),
		ExpiresAt: now.Add(ttl).Truncate(time.Second)}
	if !c.ExpiresAt.After(c.IssuedAt) {
		c.ExpiresAt = c.IssuedAt.Add(time.Second)
	}
	body, err := encodeClaims(&c)
	if err != nil {
		return Token{}, errs.Invalid("cannot make a token for this key and sandbox")
	}
	var binding []byte
	if s.admin != nil && sc.Actor == s.admin.Principal().KeyID {
		binding = s.admin.hash[:]
	}
	return Token{Token: encodeToken(body, tokenMAC(s.secret, body, binding)), ID: c.TokenID, Sandbox: sandboxID,
		Scopes: ordered, ExpiresAt: c.ExpiresAt.UTC()}, nil
}

func clipID(s string) string { return clip(s) }
