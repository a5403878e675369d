package auth

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenant"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	svc   *Service
	db    *sql.DB
	clock *fakeClock
	admin string
	dir   string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(dir, Migrations...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ts := tenant.NewStore(db.SQL())
	if _, err := ts.Create(context.Background(), "acme", tenant.Quotas{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Create(context.Background(), "globex", tenant.Quotas{}); err != nil {
		t.Fatal(err)
	}
	secret, err := LoadSecret(dir)
	if err != nil {
		t.Fatal(err)
	}
	admin := NewKey()
	svc, err := NewService(Options{DB: db.SQL(), Tenants: ts, AdminKey: admin, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	c := &fakeClock{t: time.Now()}
	svc.now = c.now
	return &fixture{svc: svc, db: db.SQL(), clock: c, admin: admin, dir: dir}
}

func (f *fixture) key(t testing.TB, req KeyRequest) CreatedKey {
	t.Helper()
	k, err := f.svc.CreateKey(context.Background(), testAdmin, req)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (f *fixture) auth(cred string) (Principal, error) {
	return f.svc.Authenticate(context.Background(), cred)
}

func wantUnauth(t *testing.T, what string, p Principal, err error) {
	t.Helper()
	if errs.CodeOf(err) != errs.CodeUnauthenticated {
		t.Fatalf("%s: got %+v, %v; want unauthenticated", what, p, err)
	}
}

func TestKeyLifecycle(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	k := f.key(t, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeExec, ScopeRead, ScopeRead}, Name: "ci"})
	if !regexp.MustCompile(`^pdk_[a-z2-7]{32}$`).MatchString(k.Key) || !regexp.MustCompile(`^key_[a-z2-7]{16}$`).MatchString(k.ID) {
		t.Fatalf("key %q id %q", k.Key, k.ID)
	}
	if k.Hint != k.Key[:8] || k.Format != FormatPaddock {
		t.Fatalf("hint %q format %q", k.Hint, k.Format)
	}
	if got := joinScopes(k.Scopes); got != "read,exec" {
		t.Fatalf("scopes = %s", got)
	}
	p, err := f.auth(k.Key)
	if err != nil {
		t.Fatal(err)
	}
	if p.KeyID != k.ID || p.Tenant != "acme" || !p.Can(ScopeExec) || p.Can(ScopeWrite) || p.Sandbox != "" {
		t.Fatalf("principal = %+v", p)
	}
	// Stored hashed: the key itself is in no column.
	var hash []byte
	var hint string
	if err := f.db.QueryRow(`SELECT hash, hint FROM api_keys WHERE id=?`, k.ID).Scan(&hash, &hint); err != nil {
		t.Fatal(err)
	}
	h := Hash(k.Key)
	if !bytes.Equal(hash, h[:]) {
		t.Fatal("stored hash is not SHA-256 of the key")
	}
	dump, _ := os.ReadFile(filepath.Join(f.dir, "paddock.db"))
	wal, _ := os.ReadFile(filepath.Join(f.dir, "paddock.db-wal"))
	if bytes.Contains(dump, []byte(k.Key)) || bytes.Contains(wal, []byte(k.Key)) {
		t.Fatal("the key itself is in the database file")
	}
	list, err := f.svc.ListKeys(ctx, testAdmin, "acme")
	if err != nil || len(list) != 1 || list[0].ID != k.ID || list[0].Revoked {
		t.Fatalf("list = %+v, %v", list, err)
	}
	// A wrong key of the right shape, and garbage, are refused.
	other := NewKey()
	p, err = f.auth(other)
	wantUnauth(t, "unknown key", p, err)
	last := "x"
	if strings.HasSuffix(k.Key, last) { // the altered key must differ
		last = "y"
	}
	p, err = f.auth(k.Key[:len(k.Key)-1] + last)
	wantUnauth(t, "altered key", p, err)
	// Revocation applies at once, though the key is cached.
	if err := f.svc.RevokeKey(ctx, testAdmin, k.ID); err != nil {
		t.Fatal(err)
	}
	p, err = f.auth(k.Key)
	wantUnauth(t, "revoked key", p, err)
	if err := f.svc.RevokeKey(ctx, testAdmin, k.ID); err != nil {
		t.Fatalf("second revoke: %v", err)
	}
	if err := f.svc.RevokeKey(ctx, testAdmin, "key_nope"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("revoke unknown: %v", err)
	}
	list, _ = f.svc.ListKeys(ctx, testAdmin, "")
	if len(list) != 1 || !list[0].Revoked || list[0].RevokedAt == nil {
		t.Fatalf("after revoke: %+v", list)
	}
}

func TestE2BKey(t *testing.T) {
	f := newFixture(t)
	k := f.key(t, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}, Format: FormatE2B})
	if !regexp.MustCompile(`^e2b_[0-9a-f]{40}$`).MatchString(k.Key) || k.Format != FormatE2B {
		t.Fatalf("e2b key %q (%s)", k.Key, k.Format)
	}
	p, err := f.auth(k.Key)
	if err != nil || p.Tenant != "acme" || p.KeyID != k.ID {
		t.Fatalf("e2b key: %+v, %v", p, err)
	}
	if _, err := f.svc.CreateKey(context.Background(), testAdmin, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}, Format: "jwt"}); errs.CodeOf(err) != errs.CodeInvalid {
		t.Fatalf("unknown format: %v", err)
	}
}

func TestCreateKeyValidation(t *testing.T) {
	f := newFixture(t)
	now := f.clock.now()
	cases := []struct {
		name string
		req  KeyRequest
		code errs.Code
	}{
		{"no tenant", KeyRequest{Tenant: "nope", Scopes: []Scope{ScopeRead}}, errs.CodeNotFound},
		{"no scopes", KeyRequest{Tenant: "acme"}, errs.CodeInvalid},
		{"unknown scope", KeyRequest{Tenant: "acme", Scopes: []Scope{"root"}}, errs.CodeInvalid},
		// Admin manages every tenant: held by a tenant's key it would let
		// that tenant raise its own quotas or read others' keys.
		{"admin for a tenant", KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeAdmin}}, errs.CodeInvalid},
		{"control chars", KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}, Name: "a\nb"}, errs.CodeInvalid},
		{"long name", KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}, Name: strings.Repeat("n", 65)}, errs.CodeInvalid},
		{"past expiry", KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}, ExpiresAt: now.Add(-time.Minute)}, errs.CodeInvalid},
		{"far expiry", KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}, ExpiresAt: now.Add(11 * 365 * 24 * time.Hour)}, errs.CodeInvalid},
	}
	for _, c := range cases {
		if _, err := f.svc.CreateKey(context.Background(), testAdmin, c.req); errs.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	// Positive control: admin for the default tenant.
	k := f.key(t, KeyRequest{Tenant: DefaultTenant, Scopes: []Scope{ScopeAdmin}})
	if p, err := f.auth(k.Key); err != nil || !p.Can(ScopeAdmin) {
		t.Fatalf("default-tenant admin key: %+v, %v", p, err)
	}
}

func TestKeyExpiry(t *testing.T) {
	f := newFixture(t)
	k := f.key(t, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}, ExpiresAt: f.clock.now().Add(time.Hour)})
	if _, err := f.auth(k.Key); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	f.clock.add(time.Hour)
	p, err := f.auth(k.Key)
	wantUnauth(t, "expired key", p, err)
}

func TestAdminKey(t *testing.T) {
	f := newFixture(t)
	p, err := f.auth(f.admin)
	if err != nil || p.KeyID != "admin" || p.Tenant != DefaultTenant || !p.Can(ScopeAdmin) {
		t.Fatalf("admin: %+v, %v", p, err)
	}
	for _, bad := range []string{"", " ", f.admin + "x", strings.Repeat("a", MaxCredentialLen+1), "pdt_", "pdt_!!!!"} {
		p, err := f.auth(bad)
		wantUnauth(t, "bad credential "+bad[:min(len(bad), 12)], p, err)
	}
}

func TestLastUsedThrottled(t *testing.T) {
	f := newFixture(t)
	k := f.key(t, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}})
	lastUsed := func() int64 {
		f.svc.bg.Wait()
		var n int64
		if err := f.db.QueryRow(`SELECT last_used_at FROM api_keys WHERE id=?`, k.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if lastUsed() != 0 {
		t.Fatal("a new key has a last use")
	}
	var writes int
	prev := int64(0)
	for i := range 300 { // five minutes of one request a second
		if _, err := f.auth(k.Key); err != nil {
			t.Fatal(err)
		}
		if n := lastUsed(); n != prev {
			writes++
			prev = n
		}
		f.clock.add(time.Second)
		_ = i
	}
	if writes < 4 || writes > 6 {
		t.Fatalf("last_used_at written %d times in five minutes of use, want about 5 (once a minute)", writes)
	}
	list, _ := f.svc.ListKeys(context.Background(), testAdmin, "acme")
	if list[0].LastUsedAt == nil || f.clock.now().Sub(*list[0].LastUsedAt) > 2*time.Minute {
		t.Fatalf("last used = %v", list[0].LastUsedAt)
	}
}

func TestTokens(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	k := f.key(t, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead, ScopeExec}})
	kp, _ := f.auth(k.Key)
	const sb = "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa"
	tok, err := f.svc.MintToken(ScopeOf(kp), sb, []Scope{ScopeExec}, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.Token, TokenPrefix) || !strings.HasPrefix(tok.ID, "tok_") || tok.Sandbox != sb {
		t.Fatalf("token = %+v", tok)
	}
	p, err := f.auth(tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	want := Principal{KeyID: k.ID, Tenant: "acme", Scopes: []Scope{ScopeExec}, Sandbox: sb, TokenID: tok.ID}
	if p.KeyID != want.KeyID || p.Tenant != want.Tenant || p.Sandbox != sb || p.TokenID != tok.ID || joinScopes(p.Scopes) != "exec" {
		t.Fatalf("token principal = %+v, want %+v", p, want)
	}

	// Never more than the key.
	if _, err := f.svc.MintToken(ScopeOf(kp), sb, []Scope{ScopeWrite}, time.Minute); errs.CodeOf(err) != errs.CodeForbidden {
		t.Fatalf("scope beyond the key: %v", err)
	}
	for _, bad := range [][]Scope{nil, {ScopeAdmin}, {"root"}} {
		if _, err := f.svc.MintToken(ScopeOf(kp), sb, bad, time.Minute); errs.CodeOf(err) != errs.CodeInvalid {
			t.Fatalf("scopes %v: %v", bad, err)
		}
	}
	for _, ttl := range []time.Duration{-time.Second, MaxTokenTTL + time.Second} {
		if _, err := f.svc.MintToken(ScopeOf(kp), sb, []Scope{ScopeRead}, ttl); errs.CodeOf(err) != errs.CodeInvalid {
			t.Fatalf("ttl %s: %v", ttl, err)
		}
	}
	// A token cannot mint tokens.
	if _, err := f.svc.MintToken(ScopeOf(p), sb, []Scope{ScopeExec}, time.Minute); errs.CodeOf(err) != errs.CodeForbidden {
		t.Fatalf("token minting: %v", err)
	}

	// Any altered byte voids it (a positive control: the original works).
	raw := tok.Token
	for i := len(TokenPrefix); i < len(raw); i += 7 {
		c := byte('A')
		if raw[i] == 'A' {
			c = 'B'
		}
		bad := raw[:i] + string(c) + raw[i+1:]
		p, err := f.auth(bad)
		wantUnauth(t, "altered token", p, err)
	}
	if _, err := f.auth(raw); err != nil {
		t.Fatalf("original token after the tampering attempts: %v", err)
	}

	// Another server's secret does not verify it.
	other, err := NewService(Options{DB: f.db, Tenants: f.svc.tenants, Secret: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	p, err = other.Authenticate(ctx, raw)
	wantUnauth(t, "foreign secret", p, err)

	// Expiry.
	f.clock.add(10 * time.Minute)
	p, err = f.auth(raw)
	wantUnauth(t, "expired token", p, err)

	// Revoking the key voids its live tokens.
	tok2, _ := f.svc.MintToken(ScopeOf(kp), sb, []Scope{ScopeRead}, time.Hour)
	if _, err := f.auth(tok2.Token); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RevokeKey(ctx, testAdmin, k.ID); err != nil {
		t.Fatal(err)
	}
	p, err = f.auth(tok2.Token)
	wantUnauth(t, "token of a revoked key", p, err)
}

func TestAdminTokensBoundToAdminKey(t *testing.T) {
	f := newFixture(t)
	admin, _ := f.auth(f.admin)
	tok, err := f.svc.MintToken(ScopeOf(admin), "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", []Scope{ScopeRead, ScopeWrite, ScopeExec}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.auth(tok.Token)
	if err != nil || p.Tenant != DefaultTenant || p.Can(ScopeAdmin) || len(p.Scopes) != 3 {
		t.Fatalf("admin token: %+v, %v", p, err)
	}
	secret, _ := LoadSecret(f.dir)
	rotated, _ := NewService(Options{DB: f.db, Tenants: f.svc.tenants, AdminKey: NewKey(), Secret: secret})
	p, err = rotated.Authenticate(context.Background(), tok.Token)
	wantUnauth(t, "admin token after the admin key changed", p, err)
	same, _ := NewService(Options{DB: f.db, Tenants: f.svc.tenants, AdminKey: f.admin, Secret: secret})
	if _, err := same.Authenticate(context.Background(), tok.Token); err != nil {
		t.Fatalf("positive control, same admin key and secret: %v", err)
	}
}

func TestLoadSecret(t *testing.T) {
	dir := t.TempDir()
	s1, err := LoadSecret(dir)
	if err != nil || len(s1) != 32 {
		t.Fatalf("first: %x, %v", s1, err)
	}
	st, _ := os.Stat(filepath.Join(dir, SecretFile))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	s2, err := LoadSecret(dir)
	if err != nil || !bytes.Equal(s1, s2) {
		t.Fatal("the secret changed between loads")
	}
	_ = os.Chmod(filepath.Join(dir, SecretFile), 0o644)
	if _, err := LoadSecret(dir); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("world-readable secret: %v", err)
	}
	_ = os.WriteFile(filepath.Join(dir, SecretFile), []byte(hex.EncodeToString([]byte("short"))), 0o600)
	_ = os.Chmod(filepath.Join(dir, SecretFile), 0o600)
	if _, err := LoadSecret(dir); err == nil {
		t.Fatal("a short secret was accepted")
	}
}

// TestRevokeDuringLookup: a lookup that read the row before a revocation
// may answer, but must not leave the key cached as valid.
func TestRevokeDuringLookup(t *testing.T) {
	f := newFixture(t)
	k := f.key(t, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}})
	h := Hash(k.Key)
	rec, err := f.svc.db.byHash(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	f.svc.mu.Lock()
	gen := f.svc.gen
	f.svc.mu.Unlock()
	if err := f.svc.RevokeKey(context.Background(), testAdmin, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.cacheResult(rec, nil, gen, f.clock.now()); err != nil {
		t.Fatal(err)
	}
	p, err := f.auth(k.Key)
	wantUnauth(t, "revoked key after a racing lookup", p, err)
}

// testAdmin is the bootstrap admin key as a caller.
var testAdmin = ScopeOf(Principal{KeyID: "admin", Tenant: DefaultTenant, Scopes: []Scope{ScopeAdmin}})
