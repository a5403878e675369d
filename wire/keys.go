package wire

import "time"

// Keys, tenants, quotas and tokens (docs/auth.md).

// Scope is one permission a key carries.
type Scope string

// Scopes. A key holds some of them; admin holds every one.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
	ScopeExec  Scope = "exec"
	ScopeAdmin Scope = "admin"
)

// Key formats.
const (
	FormatPaddock = "paddock" // "pdk_" + 32 base32 characters
	FormatE2B     = "e2b"     // "e2b_" + 40 hex digits
)

// KeyInfo is what may be shown of a key: everything but the key.
type KeyInfo struct {
	ID          string     `json:"id"`
	Tenant      string     `json:"tenant"`
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description,omitempty"`
	Scopes      []Scope    `json:"scopes"`
	Format      string     `json:"format"`
	Hint        string     `json:"hint"` // the key's first characters
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at,omitempty"` // to the minute
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
	Revoked     bool       `json:"revoked"`
}

// CreatedKey is a new key: the only time the key itself is shown.
type CreatedKey struct {
	KeyInfo
	Key string `json:"key"`
}

// KeyList is GET /v1/keys.
type KeyList struct {
	Keys []KeyInfo `json:"keys"`
}

// KeyRequest asks for a key (POST /v1/keys). Give ExpiresAt or
// ExpiresInS, not both; neither: it never expires.
type KeyRequest struct {
	Tenant      string     `json:"tenant"`
	Scopes      []Scope    `json:"scopes"`
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description,omitempty"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	ExpiresInS  int64      `json:"expires_in_s,omitempty"`
	Format      string     `json:"format,omitempty"` // FormatPaddock (default) or FormatE2B
}

// TokenRequest asks for a sandbox-scoped token (POST
// /v1/sandboxes/{id}/tokens).
type TokenRequest struct {
	Scopes []Scope `json:"scopes"`
	TTLS   int64   `json:"ttl_s"` // 0: 15 minutes
}

// Token is a minted sandbox-scoped token.
type Token struct {
	Token     string    `json:"token"`
	ID        string    `json:"id"`
	Sandbox   string    `json:"sandbox"`
	Scopes    []Scope   `json:"scopes"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Quotas bound a tenant. A zero field sets no tenant limit (the server's
// limits still apply).
type Quotas struct {
	// Counts and totals across the tenant's running sandboxes (429 when
	// exceeded).
	MaxSandboxes     int     `json:"max_sandboxes,omitempty"`
	MaxTotalCPU      float64 `json:"max_total_cpu,omitempty"`
	MaxTotalMemoryMB int64   `json:"max_total_memory_mb,omitempty"`

	// Create rate: a token bucket refilled at CreatePerMinute holding
	// CreateBurst tokens (default: CreatePerMinute, at least 1).
	CreatePerMinute float64 `json:"create_per_minute,omitempty"`
	CreateBurst     int     `json:"create_burst,omitempty"`

	// Per-sandbox ceilings (403 when exceeded).
	MaxCPU      float64 `json:"max_cpu,omitempty"`
	MaxMemoryMB int64   `json:"max_memory_mb,omitempty"`
	MaxDiskMB   int64   `json:"max_disk_mb,omitempty"`
	MaxPids     int64   `json:"max_pids,omitempty"`
	MaxTimeoutS int64   `json:"max_timeout_s,omitempty"`

	// MaxSnapshotMB bounds the tenant's snapshots together (each counted
	// whole; 0: the server's default, if any). Over it: 429.
	MaxSnapshotMB int64 `json:"max_snapshot_mb,omitempty"`
	// MaxVolumeMB bounds the sizes of the tenant's volumes summed (0: no
	// bound). Over it: 429.
	MaxVolumeMB int64 `json:"max_volume_mb,omitempty"`
	// MaxPaused bounds how many of the tenant's sandboxes may be paused at
	// once (0: no bound). MaxForks bounds the sandboxes one fork call
	// makes (0: the server's 100); each fork also counts against
	// MaxSandboxes.
	MaxPaused int `json:"max_paused,omitempty"`
	MaxForks  int `json:"max_forks,omitempty"`

	// MaxTemplates and MaxTemplateMB bound the tenant's own templates
	// (count, and their layers' bytes, shared layers counted whole;
	// 0: unlimited). Over either: 429.
	MaxTemplates  int   `json:"max_templates,omitempty"`
	MaxTemplateMB int64 `json:"max_template_mb,omitempty"`

	// Policy. NetworkModes empty: any mode the server offers.
	// AllowedDomains empty: any domain; otherwise every domain a sandbox
	// asks to reach must be covered by one ("example.com" exactly,
	// "*.example.com" any subdomain), and mode "open" is refused.
	NetworkModes     []string `json:"network_modes,omitempty"`
	AllowedDomains   []string `json:"allowed_domains,omitempty"`
	DenySecrets      bool     `json:"deny_secrets,omitempty"`
	DenyExposedPorts bool     `json:"deny_exposed_ports,omitempty"`
	// Runtimes the tenant's sandboxes may run in (RuntimeNative,
	// RuntimeGVisor); empty: any the server offers. ["gvisor"] requires
	// gVisor: a spec that names no runtime gets the first one listed.
	Runtimes []string `json:"runtimes,omitempty"`

	// Defaults fill what a spec leaves unset, before the server's defaults.
	Defaults Defaults `json:"defaults,omitzero"`
}

// Defaults are a tenant's spec defaults.
type Defaults struct {
	Template string  `json:"template,omitempty"`
	CPU      float64 `json:"cpu,omitempty"`
	MemoryMB int64   `json:"memory_mb,omitempty"`
	DiskMB   int64   `json:"disk_mb,omitempty"`
	Pids     int64   `json:"pids,omitempty"`
	TimeoutS int64   `json:"timeout_s,omitempty"`
	Runtime  string  `json:"runtime,omitempty"`
}

// Usage is what a tenant's running sandboxes hold.
type Usage struct {
	Sandboxes int     `json:"sandboxes"`
	CPU       float64 `json:"cpu"`
	MemoryMB  int64   `json:"memory_mb"`
}

// Tenant is a tenant as the server shows it, with its current usage.
type Tenant struct {
	Name      string    `json:"name"`
	Quotas    Quotas    `json:"quotas"`
	CreatedAt time.Time `json:"created_at"`
	Usage     *Usage    `json:"usage,omitempty"`
}

// TenantList is GET /v1/tenants.
type TenantList struct {
	Tenants []Tenant `json:"tenants"`
}

// TenantRequest creates a tenant (POST /v1/tenants).
type TenantRequest struct {
	Name   string `json:"name"`
	Quotas Quotas `json:"quotas"`
}

// QuotasRequest replaces a tenant's quotas (PUT /v1/tenants/{name}).
type QuotasRequest struct {
	Quotas Quotas `json:"quotas"`
}

// SecretInfo is what anyone may know of a secret: never its value.
type SecretInfo struct {
	Name string `json:"name"`
	// Hosts are where the secret may be sent (exact names, optionally
	// :port); empty: nowhere until bound.
	Hosts     []string  `json:"hosts"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SecretList is GET /v1/secrets.
type SecretList struct {
	Secrets []SecretInfo `json:"secrets"`
}

// SecretValue sets a secret (PUT /v1/secrets/{name}): a JSON string, so a
// secret is text.
type SecretValue struct {
	Value *string `json:"value,omitempty"`
	// Hosts, if given, replace the hosts the secret may be sent to; with
	// no value, only the binding changes.
	Hosts []string `json:"hosts,omitempty"`
}
