package tenant

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/wire"
)

// Default is the operator's tenant: the bootstrap admin key belongs to it,
// it always exists and it starts without quotas.
const Default = "default"

// Network modes a tenant may allow. The sandbox spec decides which ones
// the server actually offers; a tenant can only narrow that set.
var (
	knownNetworkModes = []string{"none", "allowlist", "open"}
	knownRuntimes     = []string{wire.RuntimeNative, wire.RuntimeGVisor}
)

// Quotas bound a tenant: the REST API's wire.Quotas, one type on both
// sides (a zero field sets no tenant limit; the server's limits still
// apply). ValidateQuotas checks one.
type Quotas = wire.Quotas

// Defaults are a tenant's spec defaults.
type Defaults = wire.Defaults

// Tenant is one tenant.
type Tenant struct {
	Name      string    `json:"name"`
	Quotas    Quotas    `json:"quotas"`
	CreatedAt time.Time `json:"created_at"`
}

// Bounds on what quotas may say; they keep a typo from meaning "infinite"
// in a way that overflows arithmetic.
const (
	maxDomains     = 1024
	maxCount       = 1 << 20
	maxRate        = 1e6
	MaxTenants     = 10000
	maxTemplateLen = 64
)

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	templateRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

// ValidName reports whether s can name a tenant: lower-case letters,
// digits, '-' and '_', at most 63, starting with a letter or digit.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// ValidateQuotas checks q, returning an invalid_argument error naming the
// first bad field. It normalises domain patterns (lower case, no trailing
// dot).
func ValidateQuotas(q *Quotas) error {
	nonNeg := func(name string, v float64) error {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return errs.Invalid("quota %s must be a non-negative number", name)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
		max  float64
	}{
		{"max_sandboxes", float64(q.MaxSandboxes), maxCount},
		{"max_total_cpu", q.MaxTotalCPU, maxCount},
		{"max_total_memory_mb", float64(q.MaxTotalMemoryMB), 1 << 40},
		{"create_per_minute", q.CreatePerMinute, maxRate},
		{"create_burst", float64(q.CreateBurst), maxRate},
		{"max_cpu", q.MaxCPU, maxCount},
		{"max_memory_mb", float64(q.MaxMemoryMB), 1 << 40},
		{"max_disk_mb", float64(q.MaxDiskMB), 1 << 40},
		{"max_pids", float64(q.MaxPids), 1 << 30},
		{"max_timeout_s", float64(q.MaxTimeoutS), 1 << 40},
		{"max_snapshot_mb", float64(q.MaxSnapshotMB), 1 << 40},
		{"max_templates", float64(q.MaxTemplates), maxCount},
		{"max_template_mb", float64(q.MaxTemplateMB), 1 << 40},
		{"max_volume_mb", float64(q.MaxVolumeMB), 1 << 40},
		{"max_paused", float64(q.MaxPaused), maxCount},
		{"max_forks", float64(q.MaxForks), 100},
		{"defaults.cpu", q.Defaults.CPU, maxCount},
		{"defaults.memory_mb", float64(q.Defaults.MemoryMB), 1 << 40},
		{"defaults.disk_mb", float64(q.Defaults.DiskMB), 1 << 40},
		{"defaults.pids", float64(q.Defaults.Pids), 1 << 30},
		{"defaults.timeout_s", float64(q.Defaults.TimeoutS), 1 << 40},
	} {
		if err := nonNeg(f.name, f.v); err != nil {
			return err
		}
		if f.v > f.max {
			return errs.Invalid("quota %s must be at most %g", f.name, f.max)
		}
	}
	if q.CreateBurst > 0 && q.CreatePerMinute == 0 {
		return errs.Invalid("quota create_burst needs create_per_minute")
	}
	if err := knownOnce("network_modes", "mode", q.NetworkModes, knownNetworkModes); err != nil {
		return err
	}
	if err := validRuntimes(q); err != nil {
		return err
	}
	if len(q.AllowedDomains) > maxDomains {
		return errs.Invalid("quota allowed_domains: at most %d entries", maxDomains)
	}
	for i, d := range q.AllowedDomains {
		n, ok := normalizeDomain(d)
		if !ok {
			return errs.Invalid("quota allowed_domains: %q is not a domain or *.domain pattern", clip(d))
		}
		q.AllowedDomains[i] = n
	}
	d := q.Defaults
	if d.Template != "" && !templateRE.MatchString(d.Template) {
		return errs.Invalid("quota defaults.template %q is not a template name", clip(d.Template))
	}
	for _, c := range []struct {
		name     string
		def, max float64
	}{
		{"cpu", d.CPU, q.MaxCPU}, {"memory_mb", float64(d.MemoryMB), float64(q.MaxMemoryMB)},
		{"disk_mb", float64(d.DiskMB), float64(q.MaxDiskMB)}, {"pids", float64(d.Pids), float64(q.MaxPids)},
		{"timeout_s", float64(d.TimeoutS), float64(q.MaxTimeoutS)},
	} {
		if c.def > 0 && c.max > 0 && c.def > c.max {
			return errs.Invalid("quota defaults.%s (%g) is above max_%s (%g)", c.name, c.def, c.name, c.max)
		}
	}
	return nil
}

// knownOnce checks that list (quota field) holds only known values, each
// once.
func knownOnce(field, what string, list, known []string) error {
	for i, v := range list {
		if !contains(known, v) {
			return errs.Invalid("quota %s: unknown %s %q (known: %s)", field, what, clip(v), strings.Join(known, ", "))
		}
		if contains(list[:i], v) {
			return errs.Invalid("quota %s: %q listed twice", field, v)
		}
	}
	return nil
}

// validRuntimes checks the runtime policy: known names, each once, and a
// default runtime the tenant may use.
func validRuntimes(q *Quotas) error {
	if err := knownOnce("runtimes", "runtime", q.Runtimes, knownRuntimes); err != nil {
		return err
	}
	d := q.Defaults.Runtime
	if d != "" && !contains(knownRuntimes, d) {
		return errs.Invalid("quota defaults.runtime: unknown runtime %q (known: %s)", clip(d), strings.Join(knownRuntimes, ", "))
	}
	if d != "" && len(q.Runtimes) > 0 && !contains(q.Runtimes, d) {
		return errs.Invalid("quota defaults.runtime %q is not among the allowed runtimes (%s)", d, strings.Join(q.Runtimes, ", "))
	}
	return nil
}

// burst is the bucket size of the create rate.
func burst(q Quotas) float64 {
	if q.CreateBurst > 0 {
		return float64(q.CreateBurst)
	}
	return math.Max(1, math.Floor(q.CreatePerMinute))
}

// Migrations create the tenants table and the default tenant. Pass them
// to store.Open (auth.Migrations includes them, because keys reference
// tenants).
var Migrations = []store.Migration{{Name: "tenants-1", SQL: `CREATE TABLE tenants (
		name       TEXT PRIMARY KEY,
		quotas     TEXT NOT NULL DEFAULT '{}',
		created_at INTEGER NOT NULL
	);
	INSERT INTO tenants (name, quotas, created_at) VALUES ('default', '{}', CAST(strftime('%s','now') AS INTEGER) * 1000000000);`}}

// cacheTTL bounds how stale a cached tenant may be when another process
// changed it; this process's own changes apply immediately.
const cacheTTL = 30 * time.Second

// Store reads and writes tenants, with a small cache in front of the
// database (admission reads a tenant on every create).
type Store struct {
	db  *sql.DB
	now func() time.Time

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	t       Tenant
	fetched time.Time
}

// NewStore returns a store over db (the handle of store.DB.SQL()).
func NewStore(db *sql.DB) *Store {
	return &Store{db: db, now: time.Now, cache: map[string]cached{}}
}

// Create adds a tenant. An existing name is a conflict.
func (s *Store) Create(ctx context.Context, name string, q Quotas) (Tenant, error) {
	if !ValidName(name) {
		return Tenant{}, errs.Invalid("tenant name %q is invalid (lower-case letters, digits, - and _; at most 63)", clip(name))
	}
	if err := ValidateQuotas(&q); err != nil {
		return Tenant{}, err
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants`).Scan(&n); err != nil {
		return Tenant{}, errs.Wrap(errs.CodeUnavailable, err, "the tenant store cannot be read")
	}
	if n >= MaxTenants {
		return Tenant{}, errs.New(errs.CodeLimit, "the server is at its limit of %d tenants", MaxTenants)
	}
	b, _ := json.Marshal(q)
	t := Tenant{Name: name, Quotas: q, CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
	res, err := s.db.ExecContext(ctx, `INSERT INTO tenants (name, quotas, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING`,
		name, string(b), t.CreatedAt.UnixNano())
	if err != nil {
		return Tenant{}, errs.Wrap(errs.CodeUnavailable, err, "the tenant store cannot be written")
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return Tenant{}, errs.New(errs.CodeConflict, "tenant %s already exists", name)
	}
	s.forget(name)
	return t, nil
}

// Get returns a tenant (from the cache when fresh).
func (s *Store) Get(ctx context.Context, name string) (Tenant, error) {
	now := s.now()
	s.mu.Lock()
	c, ok := s.cache[name]
	s.mu.Unlock()
	if ok && now.Sub(c.fetched) < cacheTTL {
		return c.t, nil
	}
	if !ValidName(name) {
		return Tenant{}, errs.NotFound("tenant %q not found", clip(name))
	}
	t, err := s.read(ctx, name)
	if err != nil {
		return Tenant{}, err
	}
	s.mu.Lock()
	if len(s.cache) >= MaxTenants {
		clear(s.cache)
	}
	s.cache[name] = cached{t: t, fetched: now}
	s.mu.Unlock()
	return t, nil
}

func (s *Store) read(ctx context.Context, name string) (Tenant, error) {
	var q string
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT quotas, created_at FROM tenants WHERE name=?`, name).Scan(&q, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, errs.NotFound("tenant %s not found", name)
	}
	if err != nil {
		return Tenant{}, errs.Wrap(errs.CodeUnavailable, err, "the tenant store cannot be read")
	}
	t := Tenant{Name: name, CreatedAt: time.Unix(0, created).UTC()}
	if err := json.Unmarshal([]byte(q), &t.Quotas); err != nil {
		return Tenant{}, errs.Wrap(errs.CodeInternal, fmt.Errorf("tenant %s: quotas: %w", name, err), "tenant %s has unreadable quotas", name)
	}
	return t, nil
}

// List returns every tenant, by name.
func (s *Store) List(ctx context.Context) ([]Tenant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, quotas, created_at FROM tenants ORDER BY name LIMIT ?`, MaxTenants)
	if err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the tenant store cannot be read")
	}
	defer rows.Close()
	out := []Tenant{}
	for rows.Next() {
		var t Tenant
		var q string
		var created int64
		if err := rows.Scan(&t.Name, &q, &created); err != nil {
			return nil, errs.Wrap(errs.CodeUnavailable, err, "the tenant store cannot be read")
		}
		t.CreatedAt = time.Unix(0, created).UTC()
		if err := json.Unmarshal([]byte(q), &t.Quotas); err != nil {
			return nil, errs.Wrap(errs.CodeInternal, fmt.Errorf("tenant %s: quotas: %w", t.Name, err), "tenant %s has unreadable quotas", t.Name)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the tenant store cannot be read")
	}
	return out, nil
}

// SetQuotas replaces a tenant's quotas; the change applies to the next
// admission decision in this process.
func (s *Store) SetQuotas(ctx context.Context, name string, q Quotas) (Tenant, error) {
	if err := ValidateQuotas(&q); err != nil {
		return Tenant{}, err
	}
	b, _ := json.Marshal(q)
	res, err := s.db.ExecContext(ctx, `UPDATE tenants SET quotas=? WHERE name=?`, string(b), name)
	if err != nil {
		return Tenant{}, errs.Wrap(errs.CodeUnavailable, err, "the tenant store cannot be written")
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return Tenant{}, errs.NotFound("tenant %s not found", clip(name))
	}
	s.forget(name)
	return s.Get(ctx, name)
}

func (s *Store) forget(name string) {
	s.mu.Lock()
	delete(s.cache, name)
	s.mu.Unlock()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
