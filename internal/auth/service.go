package auth

import (
	"context"
	"crypto/hmac"
	"crypto/subtle"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/tenant"
)

// Token lifetimes.
const (
	DefaultTokenTTL = 15 * time.Minute
	MaxTokenTTL     = 24 * time.Hour
)

// Cache tuning. A cached key is re-read after keyCacheTTL (a change made
// by another process shows within that); this process's own revocations
// apply at once.
const (
	keyCacheTTL   = 30 * time.Second
	keyCacheMax   = 4096
	touchInterval = time.Minute // last_used_at is written at most this often per key
)

// Options configure a Service.
type Options struct {
	DB      *sql.DB       // store.DB.SQL(), with Migrations applied
	Tenants *tenant.Store // tenant existence, for new keys
	// AdminKey is the bootstrap admin key ("" disables it).
	AdminKey string
	// Secret signs sandbox tokens (LoadSecret); at least 32 bytes.
	Secret []byte
	Log    *slog.Logger
}

// Service is the Authenticator of the API server: the bootstrap admin key,
// then the database of keys (through a small cache), and sandbox tokens.
// It also manages keys and mints tokens.
type Service struct {
	db      keyDB
	tenants *tenant.Store
	admin   *Admin
	secret  []byte
	log     *slog.Logger
	now     func() time.Time

	mu     sync.Mutex
	byHash map[[32]byte]*keyEntry
	byID   map[string]*keyEntry
	gen    uint64 // bumped by every revocation: a lookup begun before one is not cached
	closed bool
	bg     sync.WaitGroup
}

type keyEntry struct {
	rec      keyRecord
	fetched  time.Time
	touching bool
}

// NewService returns the authenticator.
func NewService(o Options) (*Service, error) {
	if o.DB == nil || o.Tenants == nil {
		return nil, errors.New("auth: a database and a tenant store are required")
	}
	if len(o.Secret) < 32 {
		return nil, errors.New("auth: the token secret must be at least 32 bytes")
	}
	s := &Service{db: keyDB{o.DB}, tenants: o.Tenants, secret: append([]byte{}, o.Secret...), log: o.Log,
		now: time.Now, byHash: map[[32]byte]*keyEntry{}, byID: map[string]*keyEntry{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if o.AdminKey != "" {
		s.admin = NewAdmin(o.AdminKey)
	}
	return s, nil
}

// Tenants is the tenant store the service checks new keys against.
func (s *Service) Tenants() *tenant.Store { return s.tenants }

// Close waits for pending last-used writes; later uses skip them.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.bg.Wait()
	return nil
}

var errUnauth = errs.ErrUnauthenticated

// Authenticate implements Authenticator.
func (s *Service) Authenticate(ctx context.Context, cred string) (Principal, error) {
	if cred == "" || len(cred) > MaxCredentialLen {
		return Principal{}, errUnauth
	}
	h := Hash(cred)
	if s.admin != nil && subtle.ConstantTimeCompare(h[:], s.admin.hash[:]) == 1 {
		return s.admin.Principal(), nil
	}
	parsed, err := ParseToken(cred)
	if err != nil {
		return Principal{}, errUnauth
	}
	switch parsed.Kind {
	case KindKey, KindE2BKey:
		return s.authKey(ctx, h)
	case KindToken:
		return s.authToken(ctx, parsed)
	}
	return Principal{}, errUnauth
}

func (s *Service) authKey(ctx context.Context, h [32]byte) (Principal, error) {
	now := s.now()
	e, err := s.entryByHash(ctx, h, now)
	if err != nil {
		return Principal{}, err
	}
	// The lookup was by hash; comparing in constant time anyway keeps this
	// path free of any early-exit on key material.
	if subtle.ConstantTimeCompare(e.rec.hash[:], h[:]) != 1 || !e.rec.valid(now) {
		return Principal{}, errUnauth
	}
	s.touch(e, now)
	return Principal{KeyID: e.rec.id, Tenant: e.rec.tenant, Scopes: e.rec.scopes}, nil
}

func (s *Service) authToken(ctx context.Context, p Parsed) (Principal, error) {
	c := p.Claims
	var binding []byte
	var keyScopes []Scope
	var tenantName string
	if s.admin != nil && c.KeyID == s.admin.Principal().KeyID {
		binding = s.admin.hash[:]
	}
	// The MAC first: nothing unsigned reaches the key store.
	if !hmac.Equal(p.mac, tokenMAC(s.secret, p.body, binding)) {
		return Principal{}, errUnauth
	}
	now := s.now()
	if !now.Before(c.ExpiresAt) {
		return Principal{}, errUnauth
	}
	if binding != nil {
		ap := s.admin.Principal()
		keyScopes, tenantName = ap.Scopes, ap.Tenant
	} else {
		e, err := s.entryByID(ctx, c.KeyID, now)
		if err != nil {
			return Principal{}, err
		}
		if !e.rec.valid(now) { // a revoked or expired key takes its tokens with it
			return Principal{}, errUnauth
		}
		keyScopes, tenantName = e.rec.scopes, e.rec.tenant
	}
	// Never more than the key holds now.
	key := Principal{Scopes: keyScopes}
	var scopes []Scope
	for _, sc := range c.Scopes {
		if sc != ScopeAdmin && key.Can(sc) {
			scopes = append(scopes, sc)
		}
	}
	if len(scopes) == 0 {
		return Principal{}, errUnauth
	}
	return Principal{KeyID: c.KeyID, Tenant: tenantName, Scopes: scopes, Sandbox: c.Sandbox, TokenID: c.TokenID}, nil
}

func (s *Service) entryByHash(ctx context.Context, h [32]byte, now time.Time) (*keyEntry, error) {
	s.mu.Lock()
	e := s.byHash[h]
	gen := s.gen
	s.mu.Unlock()
	if e != nil && now.Sub(e.fetched) < keyCacheTTL {
		return e, nil
	}
	rec, err := s.db.byHash(ctx, h)
	return s.cacheResult(rec, err, gen, now)
}

func (s *Service) entryByID(ctx context.Context, id string, now time.Time) (*keyEntry, error) {
	s.mu.Lock()
	e := s.byID[id]
	gen := s.gen
	s.mu.Unlock()
	if e != nil && now.Sub(e.fetched) < keyCacheTTL {
		return e, nil
	}
	_, rec, err := s.db.byID(ctx, id)
	return s.cacheResult(rec, err, gen, now)
}

func (s *Service) cacheResult(rec keyRecord, err error, gen uint64, now time.Time) (*keyEntry, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errUnauth
	}
	if err != nil {
		s.log.Error("key store lookup failed", "err", err)
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the key store cannot be read")
	}
	e := &keyEntry{rec: rec, fetched: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen { // revoked meanwhile: answer from what was read, but do not keep it
		return e, nil
	}
	if old := s.byID[rec.id]; old != nil {
		if old.rec.lastUsed.After(e.rec.lastUsed) {
			e.rec.lastUsed = old.rec.lastUsed
		}
		delete(s.byHash, old.rec.hash)
	}
	if len(s.byID) >= keyCacheMax {
		clear(s.byID)
		clear(s.byHash)
	}
	s.byID[rec.id] = e
	s.byHash[rec.hash] = e
	return e, nil
}

// touch records a key's use, at most once per touchInterval and off the
// request's path.
func (s *Service) touch(e *keyEntry, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || e.touching || now.Sub(e.rec.lastUsed) < touchInterval {
		return
	}
	e.touching = true
	prev := e.rec.lastUsed
	e.rec.lastUsed = now
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := s.db.touch(ctx, e.rec.id, now.Truncate(time.Minute))
		s.mu.Lock()
		e.touching = false
		if err != nil {
			e.rec.lastUsed = prev
		}
		s.mu.Unlock()
		if err != nil {
			s.log.Warn("cannot record key use", "key", e.rec.id, "err", err)
		}
	}()
}

// forget drops a key from the cache and voids lookups in flight.
func (s *Service) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	if e := s.byID[id]; e != nil {
		delete(s.byHash, e.rec.hash)
		delete(s.byID, id)
	}
}

// CreateKey makes a key. The key itself is in the answer and nowhere else.
func (s *Service) CreateKey(ctx context.Context, req KeyRequest) (CreatedKey, error) {
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
func (s *Service) ListKeys(ctx context.Context, tenantName string) ([]KeyInfo, error) {
	list, err := s.db.list(ctx, tenantName)
	if err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the key store cannot be read")
	}
	return list, nil
}

// GetKey returns one key.
func (s *Service) GetKey(ctx context.Context, id string) (KeyInfo, error) {
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
func (s *Service) RevokeKey(ctx context.Context, id string) error {
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
type Token struct {
	Token     string    `json:"token"`
	ID        string    `json:"id"`
	Sandbox   string    `json:"sandbox"`
	Scopes    []Scope   `json:"scopes"`
	ExpiresAt time.Time `json:"expires_at"`
}

// MintToken makes a token for sandbox with scopes, valid for ttl (0:
// DefaultTokenTTL), on behalf of p. The caller checks that p reaches the
// sandbox. A token holds at most p's scopes, never admin, and cannot mint
// further tokens.
func (s *Service) MintToken(p Principal, sandboxID string, scopes []Scope, ttl time.Duration) (Token, error) {
	if p.Sandbox != "" {
		return Token{}, errs.New(errs.CodeForbidden, "a sandbox token cannot mint tokens")
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
	for _, sc := range scopes {
		switch sc {
		case ScopeRead, ScopeWrite, ScopeExec:
		case ScopeAdmin:
			return Token{}, errs.Invalid("a sandbox token cannot hold the admin scope")
		default:
			return Token{}, errs.Invalid("unknown scope %q (tokens take read, write, exec)", clipID(string(sc)))
		}
		if !p.Can(sc) {
			return Token{}, errs.New(errs.CodeForbidden, "this key lacks the %q scope, so its tokens cannot have it", sc)
		}
		want[sc] = true
	}
	var ordered []Scope
	for _, sc := range AllScopes {
		if want[sc] {
			ordered = append(ordered, sc)
		}
	}
	now := s.now()
	c := Claims{KeyID: p.KeyID, Sandbox: sandboxID, Scopes: ordered, IssuedAt: now.Truncate(time.Second),
		ExpiresAt: now.Add(ttl).Truncate(time.Second)}
	if !c.ExpiresAt.After(c.IssuedAt) {
		c.ExpiresAt = c.IssuedAt.Add(time.Second)
	}
	body, err := encodeClaims(&c)
	if err != nil {
		return Token{}, errs.Invalid("cannot make a token for this key and sandbox")
	}
	var binding []byte
	if s.admin != nil && p.KeyID == s.admin.Principal().KeyID {
		binding = s.admin.hash[:]
	}
	return Token{Token: encodeToken(body, tokenMAC(s.secret, body, binding)), ID: c.TokenID, Sandbox: sandboxID,
		Scopes: ordered, ExpiresAt: c.ExpiresAt.UTC()}, nil
}

func clipID(s string) string { return clip(s) }
