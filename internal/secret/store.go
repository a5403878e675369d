package secret

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/wire"
)

// Migrations create the secrets table; the composition root passes them
// to store.Open.
var Migrations = []store.Migration{{Name: "secrets-1", SQL: `CREATE TABLE secrets (
		tenant     TEXT NOT NULL,
		name       TEXT NOT NULL,
		value      BLOB NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (tenant, name)
	)`},
	// The hosts a secret may be sent to (newline-separated, canonical
	// rule hosts). Rows stored before this column are bound to none: they
	// cannot be injected until a key with the secrets right binds them.
	{Name: "secrets-2-hosts", SQL: `ALTER TABLE secrets ADD COLUMN hosts TEXT NOT NULL DEFAULT ''`}}

// Limits.
const (
	MaxNameLen       = 128
	MaxValueBytes    = 8 << 10
	MaxPerTenant     = 1000
	MaxHosts         = 16 // hosts one secret is bound to
	maxTenantNameLen = 256
)

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// ValidName reports whether s can name a secret: a letter or underscore,
// then letters, digits, '_', '.', '-'; at most 128.
func ValidName(s string) bool { return len(s) <= MaxNameLen && nameRE.MatchString(s) }

// Info is what anyone may know of a secret: never its value.
type Info = wire.SecretInfo

// Admitter decides whether a tenant may use secrets at all
// (tenant.Admission.AdmitSecrets has this shape).
type Admitter func(ctx context.Context, tenant string, names []string) error

// Store keeps secrets in the database, encrypted.
type Store struct {
	db    *sql.DB
	key   *Key
	admit Admitter
	now   func() time.Time
}

// Options configure a Store.
type Options struct {
	DB  *sql.DB // holds the secrets table (Migrations)
	Key *Key
	// Admit, if set, is asked before a secret is stored (a tenant denied
	// secrets cannot store them).
	Admit Admitter
}

// NewStore returns a store.
func NewStore(o Options) (*Store, error) {
	if o.DB == nil || o.Key == nil {
		return nil, errors.New("secret store: a database and a key are required")
	}
	return &Store{db: o.DB, key: o.Key, admit: o.Admit, now: time.Now}, nil
}

// Key is the store's encryption key (the egress CAs' private keys are
// sealed with it too).
func (s *Store) Key() *Key { return s.key }

// aad binds a ciphertext to its row: a value copied to another tenant's
// or name's row does not decrypt there.
func aad(tenant, name string) []byte {
	return []byte("paddock secret v1\x00" + tenant + "\x00" + name)
}

func checkTenant(tenant string) error {
	if tenant == "" || len(tenant) > maxTenantNameLen {
		return errs.Invalid("invalid tenant")
	}
	return nil
}

func checkName(name string) error {
	if !ValidName(name) {
		return errs.Invalid("secret name %q is invalid (a letter or '_', then letters, digits, '_', '.', '-'; at most %d)", clip(name), MaxNameLen)
	}
	return nil
}

// CheckValue reports whether v can be stored: secrets are sent as (part
// of) HTTP header values, so control characters other than tab are
// refused here rather than when a request is already on its way.
func CheckValue(v []byte) error {
	switch {
	case len(v) == 0:
		return errs.Invalid("a secret value cannot be empty")
	case len(v) > MaxValueBytes:
		return errs.Invalid("a secret value is at most %d bytes", MaxValueBytes)
	case !httpguts.ValidHeaderFieldValue(string(v)):
		return errs.Invalid("a secret value cannot hold control characters (newlines, NUL...): it is sent in HTTP headers")
	}
	return nil
}

// Set stores (or replaces) tenant's secret name for sc (tenant "": sc's
// own). hosts, if given, replace the hosts the secret may be sent to
// (NormalizeHosts); without them an existing secret keeps its own and a
// new one is bound to none (it cannot be injected until bound). It
// reports whether the secret is new.
func (s *Store) Set(ctx context.Context, sc rights.Scope, tenant, name string, value []byte, hosts ...string) (Info, bool, error) {
	tenant, err := s.caller(sc, rights.Secrets, tenant)
	if err != nil {
		return Info{}, false, err
	}
	if err := checkTenant(tenant); err != nil {
		return Info{}, false, err
	}
	if err := checkName(name); err != nil {
		return Info{}, false, err
	}
	if err := CheckValue(value); err != nil {
		return Info{}, false, err
	}
	var bound []string
	if len(hosts) > 0 {
		if bound, err = NormalizeHosts(hosts); err != nil {
			return Info{}, false, err
		}
	}
	if s.admit != nil {
		if err := s.admit(ctx, tenant, []string{name}); err != nil {
			return Info{}, false, err
		}
	}
	sealed := s.key.Seal(aad(tenant, name), value)
	now := s.now().UTC()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Info{}, false, storeErr(err)
	}
	defer tx.Rollback()
	var created int64
	var had string
	err = tx.QueryRowContext(ctx, `SELECT created_at, hosts FROM secrets WHERE tenant=? AND name=?`, tenant, name).Scan(&created, &had)
	isNew := errors.Is(err, sql.ErrNoRows)
	if err != nil && !isNew {
		return Info{}, false, storeErr(err)
	}
	if bound == nil {
		bound = splitHosts(had)
	}
	if isNew {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM secrets WHERE tenant=?`, tenant).Scan(&n); err != nil {
			return Info{}, false, storeErr(err)
		}
		if n >= MaxPerTenant {
			return Info{}, false, errs.New(errs.CodeLimit, "a tenant has at most %d secrets", MaxPerTenant)
		}
		created = now.UnixNano()
		_, err = tx.ExecContext(ctx, `INSERT INTO secrets (tenant, name, value, created_at, updated_at, hosts) VALUES (?, ?, ?, ?, ?, ?)`,
			tenant, name, sealed, created, now.UnixNano(), joinHosts(bound))
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE secrets SET value=?, updated_at=?, hosts=? WHERE tenant=? AND name=?`,
			sealed, now.UnixNano(), joinHosts(bound), tenant, name)
	}
	if err != nil {
		return Info{}, false, storeErr(err)
	}
	if err := tx.Commit(); err != nil {
		return Info{}, false, storeErr(err)
	}
	return Info{Name: name, Hosts: orEmpty(bound), CreatedAt: time.Unix(0, created).UTC(), UpdatedAt: now}, isNew, nil
}

// Bind replaces the hosts tenant's secret name may be sent to (tenant "":
// sc's own), keeping its value. Rules of running sandboxes that name a
// host no longer bound are refused from their next connection.
func (s *Store) Bind(ctx context.Context, sc rights.Scope, tenant, name string, hosts []string) (Info, error) {
	tenant, err := s.caller(sc, rights.Secrets, tenant)
	if err != nil {
		return Info{}, err
	}
	if err := checkName(name); err != nil {
		return Info{}, err
	}
	bound, err := NormalizeHosts(hosts)
	if err != nil {
		return Info{}, err
	}
	now := s.now().UTC()
	res, err := s.db.ExecContext(ctx, `UPDATE secrets SET hosts=?, updated_at=? WHERE tenant=? AND name=?`,
		joinHosts(bound), now.UnixNano(), tenant, name)
	if err != nil {
		return Info{}, storeErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Info{}, errs.NotFound("secret %q does not exist", clip(name))
	}
	return s.Info(ctx, sc, tenant, name)
}

// GetFor returns the value of tenant's secret name for a request to host
// (a canonical rule host): for the egress interceptor only, never for an
// API answer. A secret not bound to host is refused, whatever the rule
// says (secret exfiltration: a rule can only send a secret where the
// secret's manager allowed).
func (s *Store) GetFor(ctx context.Context, tenant, name, host string) ([]byte, error) {
	var sealed []byte
	var hosts string
	err := s.db.QueryRowContext(ctx, `SELECT value, hosts FROM secrets WHERE tenant=? AND name=?`, tenant, name).Scan(&sealed, &hosts)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.NotFound("secret %q does not exist", clip(name))
	}
	if err != nil {
		return nil, storeErr(err)
	}
	if err := boundTo(name, splitHosts(hosts), host); err != nil {
		return nil, err
	}
	v, err := s.key.Open(aad(tenant, name), sealed)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, fmt.Errorf("secret %s/%s: %w", tenant, name, err), "secret %q cannot be decrypted", clip(name))
	}
	return v, nil
}

// Info returns what may be shown of tenant's secret name (tenant "":
// sc's own).
func (s *Store) Info(ctx context.Context, sc rights.Scope, tenant, name string) (Info, error) {
	tenant, err := s.caller(sc, rights.Read, tenant)
	if err != nil {
		return Info{}, err
	}
	if err := checkName(name); err != nil {
		return Info{}, err
	}
	var c, u int64
	var hosts string
	err = s.db.QueryRowContext(ctx, `SELECT created_at, updated_at, hosts FROM secrets WHERE tenant=? AND name=?`, tenant, name).Scan(&c, &u, &hosts)
	if errors.Is(err, sql.ErrNoRows) {
		return Info{}, errs.NotFound("secret %q does not exist", clip(name))
	}
	if err != nil {
		return Info{}, storeErr(err)
	}
	return Info{Name: name, Hosts: orEmpty(splitHosts(hosts)), CreatedAt: time.Unix(0, c).UTC(), UpdatedAt: time.Unix(0, u).UTC()}, nil
}

// List returns tenant's secrets by name (tenant "": sc's own).
func (s *Store) List(ctx context.Context, sc rights.Scope, tenant string) ([]Info, error) {
	tenant, err := s.caller(sc, rights.Read, tenant)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT name, created_at, updated_at, hosts FROM secrets WHERE tenant=? ORDER BY name`, tenant)
	if err != nil {
		return nil, storeErr(err)
	}
	defer rows.Close()
	out := []Info{}
	for rows.Next() {
		var in Info
		var c, u int64
		var hosts string
		if err := rows.Scan(&in.Name, &c, &u, &hosts); err != nil {
			return nil, storeErr(err)
		}
		in.Hosts = orEmpty(splitHosts(hosts))
		in.CreatedAt, in.UpdatedAt = time.Unix(0, c).UTC(), time.Unix(0, u).UTC()
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, storeErr(err)
	}
	return out, nil
}

// Delete removes tenant's secret name (tenant "": sc's own). Sandboxes
// whose rules name it have their requests to those hosts refused from
// then on.
func (s *Store) Delete(ctx context.Context, sc rights.Scope, tenant, name string) error {
	tenant, err := s.caller(sc, rights.Secrets, tenant)
	if err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM secrets WHERE tenant=? AND name=?`, tenant, name)
	if err != nil {
		return storeErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errs.NotFound("secret %q does not exist", clip(name))
	}
	return nil
}

// caller checks that sc holds need and may act on tenant's secrets, and
// returns the tenant ("" is sc's). A nil Store is a server without a
// secret store: it refuses as a real one would, then answers unsupported.
func (s *Store) caller(sc rights.Scope, need rights.Right, tenant string) (string, error) {
	if err := sc.Need(need); err != nil {
		return "", err
	}
	if s == nil {
		return "", errs.New(errs.CodeUnsupported, "this server has no secret store")
	}
	if sc.Sandbox != "" {
		return "", errs.New(errs.CodeForbidden, "a sandbox token cannot manage secrets")
	}
	if tenant == "" || tenant == sc.Tenant {
		return sc.Tenant, nil
	}
	if !sc.Can(rights.Admin) {
		return "", errs.New(errs.CodeForbidden, "only an admin key can manage another tenant's secrets")
	}
	return tenant, nil
}

// CheckRules reports whether rules (normalised) may be given to a
// sandbox of tenant: every secret they name exists and is bound to the
// host of each rule that names it. This is asked of every create and
// policy change, whoever makes it (secret exfiltration: a rule to a host
// the caller controls would echo the secret back).
func (s *Store) CheckRules(ctx context.Context, tenant string, rules []Rule) error {
	names := Names(rules)
	if len(names) == 0 {
		return nil
	}
	args := make([]any, 0, len(names)+1)
	args = append(args, tenant)
	for _, n := range names {
		args = append(args, n)
	}
	q := `SELECT name, hosts FROM secrets WHERE tenant=? AND name IN (?` + strings.Repeat(",?", len(names)-1) + `)`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return storeErr(err)
	}
	defer rows.Close()
	bound := map[string][]string{}
	for rows.Next() {
		var n, h string
		if err := rows.Scan(&n, &h); err != nil {
			return storeErr(err)
		}
		bound[n] = splitHosts(h)
	}
	if err := rows.Err(); err != nil {
		return storeErr(err)
	}
	var missing []string
	for _, n := range names {
		if _, ok := bound[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return errs.Invalid("network.inject names secrets that do not exist: %s (create them with paddock secret set NAME --host HOST)",
			strings.Join(missing, ", "))
	}
	for i, r := range rules {
		t, err := ParseTemplate(r.Value)
		if err != nil {
			return errs.Invalid("network.inject[%d].value: %v", i, err)
		}
		for _, n := range t.Refs() {
			if err := boundTo(n, bound[n], r.Host); err != nil {
				return errs.New(errs.CodeForbidden, "network.inject[%d]: %s", i, errs.Public(err))
			}
		}
	}
	return nil
}

// boundTo refuses host unless it is one of the secret's bound hosts.
func boundTo(name string, bound []string, host string) error {
	for _, h := range bound {
		if h == host {
			return nil
		}
	}
	if len(bound) == 0 {
		return errs.New(errs.CodeForbidden, "secret %s is bound to no host, so it is sent nowhere (bind it: paddock secret bind %s --host %s)",
			clip(name), clip(name), clip(host))
	}
	return errs.New(errs.CodeForbidden, "secret %s may be sent only to %s, not to %s (a key with the secrets right can bind it: paddock secret bind %s --host ...)",
		clip(name), strings.Join(bound, ", "), clip(host), clip(name))
}

// NormalizeHosts validates the hosts a secret is bound to — exact names,
// optionally with :port, as in a rule — and returns them canonical,
// sorted, without repeats.
func NormalizeHosts(hosts []string) ([]string, error) {
	if len(hosts) == 0 {
		return nil, errs.Invalid("hosts: give at least one host the secret may be sent to (delete the secret to stop its use)")
	}
	if len(hosts) > MaxHosts {
		return nil, errs.Invalid("hosts: a secret is bound to at most %d hosts", MaxHosts)
	}
	set := map[string]bool{}
	for i, h := range hosts {
		n, err := normalizeHost(h)
		if err != nil {
			return nil, errs.Invalid("hosts[%d] %q: %v", i, clip(h), err)
		}
		set[n] = true
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sort.Strings(out)
	return out, nil
}

func splitHosts(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func joinHosts(h []string) string { return strings.Join(h, "\n") }

func orEmpty(h []string) []string {
	if h == nil {
		return []string{}
	}
	return h
}

func storeErr(err error) error {
	return errs.Wrap(errs.CodeUnavailable, err, "the secret store cannot be read or written")
}

func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
