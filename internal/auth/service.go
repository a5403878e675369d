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
