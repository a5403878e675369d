package auth

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/wire"
)

// Migrations are the tables of this package: the tenants (package tenant;
// keys reference them) and the API keys. Pass them to store.Open.
var Migrations = slices.Clip(append(slices.Clone(tenant.Migrations), store.Migration{Name: "api-keys-1", SQL: `
	CREATE TABLE api_keys (
		id           TEXT PRIMARY KEY,
		hash         BLOB NOT NULL UNIQUE,
		hint         TEXT NOT NULL,
		tenant       TEXT NOT NULL REFERENCES tenants(name),
		scopes       TEXT NOT NULL,
		name         TEXT NOT NULL DEFAULT '',
		description  TEXT NOT NULL DEFAULT '',
		format       TEXT NOT NULL,
		created_at   INTEGER NOT NULL,
		last_used_at INTEGER NOT NULL DEFAULT 0,
		expires_at   INTEGER NOT NULL DEFAULT 0,
		revoked_at   INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX api_keys_tenant ON api_keys(tenant);`}))

// Key formats.
const (
	FormatPaddock = wire.FormatPaddock // "pdk_" + 32 base32 characters
	FormatE2B     = wire.FormatE2B     // "e2b_" + 40 hex digits
)

// Limits on what grows.
const (
	MaxActiveKeysPerTenant = 1000
	maxKeyRows             = 100000
	maxKeyName             = 64
	maxKeyDescription      = 256
	maxKeyLife             = 10 * 365 * 24 * time.Hour
)

// KeyInfo is what may be shown of a key: everything but the key.
type KeyInfo = wire.KeyInfo

// KeyRequest asks for a new key.
type KeyRequest struct {
	Tenant      string
	Scopes      []Scope
	Name        string
	Description string
	ExpiresAt   time.Time // zero: never
	Format      string    // FormatPaddock (default) or FormatE2B
}

// CreatedKey is a new key: the only time the key itself is returned.
type CreatedKey = wire.CreatedKey

// keyRecord is a row as the authenticator needs it.
type keyRecord struct {
	id, tenant string
	hash       [32]byte
	scopes     []Scope
	expires    time.Time // zero: never
	revoked    bool
	lastUsed   time.Time
}

func (r *keyRecord) valid(now time.Time) bool {
	return !r.revoked && (r.expires.IsZero() || now.Before(r.expires))
}

func newKeyID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "key_" + keyEncoding.EncodeToString(b[:])
}

// normalizeScopes validates, de-duplicates and orders scopes.
func normalizeScopes(in []Scope) ([]Scope, error) {
	if len(in) == 0 {
		return nil, errs.Invalid("at least one scope is needed (read, write, exec, admin)")
	}
	want := map[Scope]bool{}
	for _, s := range in {
		if _, err := ParseScope(string(s)); err != nil {
			return nil, err
		}
		want[s] = true
	}
	var out []Scope
	for _, s := range AllScopes {
		if want[s] {
			out = append(out, s)
		}
	}
	return out, nil
}

func joinScopes(s []Scope) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = string(x)
	}
	return strings.Join(parts, ",")
}

func splitScopes(s string) []Scope {
	var out []Scope
	for _, p := range strings.Split(s, ",") {
		if p != "" {
			out = append(out, Scope(p))
		}
	}
	return out
}

func checkText(field, s string, max int) error {
	if len(s) > max || !utf8.ValidString(s) {
		return errs.Invalid("%s must be valid UTF-8 of at most %d bytes", field, max)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return errs.Invalid("%s must not contain control characters", field)
		}
	}
	return nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func optTime(n int64) *time.Time {
	if n == 0 {
		return nil
	}
	t := fromNanos(n)
	return &t
}

const keyColumns = `id, hash, hint, tenant, scopes, name, description, format, created_at, last_used_at, expires_at, revoked_at`

type rowScanner interface{ Scan(...any) error }

func scanKey(row rowScanner) (KeyInfo, keyRecord, error) {
	var k KeyInfo
	var r keyRecord
	var hash []byte
	var scopes string
	var created, used, expires, revoked int64
	if err := row.Scan(&k.ID, &hash, &k.Hint, &k.Tenant, &scopes, &k.Name, &k.Description, &k.Format,
		&created, &used, &expires, &revoked); err != nil {
		return k, r, err
	}
	if len(hash) != len(r.hash) {
		return k, r, errors.New("stored key hash has the wrong length")
	}
	k.Scopes = splitScopes(scopes)
	k.CreatedAt = fromNanos(created)
	k.LastUsedAt, k.ExpiresAt, k.RevokedAt = optTime(used), optTime(expires), optTime(revoked)
	k.Revoked = revoked != 0
	r = keyRecord{id: k.ID, tenant: k.Tenant, scopes: k.Scopes, expires: fromNanos(expires), revoked: revoked != 0,
		lastUsed: fromNanos(used)}
	copy(r.hash[:], hash)
	return k, r, nil
}

// keyDB is the api_keys table.
type keyDB struct{ db *sql.DB }

func (d keyDB) insert(ctx context.Context, k KeyInfo, hash [32]byte) error {
	_, err := d.db.ExecContext(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0)`,
		k.ID, hash[:], k.Hint, k.Tenant, joinScopes(k.Scopes), k.Name, k.Description, k.Format,
		nanos(k.CreatedAt), nanosPtr(k.ExpiresAt))
	return err
}

func nanosPtr(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return nanos(*t)
}

func (d keyDB) counts(ctx context.Context, tenantName string) (active, total int, err error) {
	err = d.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(tenant=? AND revoked_at=0), 0) FROM api_keys`, tenantName).Scan(&total, &active)
	return active, total, err
}

func (d keyDB) byHash(ctx context.Context, h [32]byte) (keyRecord, error) {
	_, r, err := scanKey(d.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash=?`, h[:]))
	return r, err
}

func (d keyDB) byID(ctx context.Context, id string) (KeyInfo, keyRecord, error) {
	return scanKey(d.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id=?`, id))
}

func (d keyDB) list(ctx context.Context, tenantName string) ([]KeyInfo, error) {
	q := `SELECT ` + keyColumns + ` FROM api_keys`
	args := []any{}
	if tenantName != "" {
		q += ` WHERE tenant=?`
		args = append(args, tenantName)
	}
	q += ` ORDER BY created_at, id LIMIT ?`
	args = append(args, maxKeyRows)
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []KeyInfo{}
	for rows.Next() {
		k, _, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

func (d keyDB) revoke(ctx context.Context, id string, at time.Time) (found bool, err error) {
	res, err := d.db.ExecContext(ctx, `UPDATE api_keys SET revoked_at=? WHERE id=? AND revoked_at=0`, nanos(at), id)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return true, nil
	}
	var n int
	err = d.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_keys WHERE id=?`, id).Scan(&n)
	return n > 0, err
}

func (d keyDB) touch(ctx context.Context, id string, at time.Time) error {
	_, err := d.db.ExecContext(ctx, `UPDATE api_keys SET last_used_at=? WHERE id=? AND last_used_at<?`, nanos(at), id, nanos(at))
	return err
}
