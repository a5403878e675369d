package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/paddockhq/paddock/wire"
)

// Types of keys, tenants and tokens (package wire).
type (
	Key          = wire.KeyInfo
	CreatedKey   = wire.CreatedKey
	Scope        = wire.Scope
	Quotas       = wire.Quotas
	Defaults     = wire.Defaults
	Usage        = wire.Usage
	SandboxToken = wire.Token
	// Tenant is a tenant as the server shows it, with its current usage.
	Tenant = wire.Tenant
	// KeyRequest asks for a key. Format is "paddock" (default) or "e2b".
	KeyRequest = wire.KeyRequest
)

// CreateKey makes an API key (admin). The answer holds the key: the only
// time it is shown.
func (c *Client) CreateKey(ctx context.Context, req KeyRequest) (CreatedKey, error) {
	return do[CreatedKey](ctx, c, http.MethodPost, "/v1/keys", req)
}

// ListKeys lists keys (admin), of one tenant if tenantName is set.
func (c *Client) ListKeys(ctx context.Context, tenantName string) ([]Key, error) {
	path := "/v1/keys"
	if tenantName != "" {
		path += "?tenant=" + url.QueryEscape(tenantName)
	}
	var out wire.KeyList
	err := c.call(ctx, http.MethodGet, path, nil, &out)
	return out.Keys, err
}

// RevokeKey revokes a key and every token it minted (admin).
func (c *Client) RevokeKey(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, "/v1/keys/"+url.PathEscape(id), nil, nil)
}

// CreateTenant makes a tenant (admin).
func (c *Client) CreateTenant(ctx context.Context, name string, q Quotas) (Tenant, error) {
	return do[Tenant](ctx, c, http.MethodPost, "/v1/tenants", wire.TenantRequest{Name: name, Quotas: q})
}

// ListTenants lists tenants (admin).
func (c *Client) ListTenants(ctx context.Context) ([]Tenant, error) {
	var out wire.TenantList
	err := c.call(ctx, http.MethodGet, "/v1/tenants", nil, &out)
	return out.Tenants, err
}

// GetTenant reads a tenant (admin).
func (c *Client) GetTenant(ctx context.Context, name string) (Tenant, error) {
	return do[Tenant](ctx, c, http.MethodGet, "/v1/tenants/"+url.PathEscape(name), nil)
}

// SetQuotas replaces a tenant's quotas (admin).
func (c *Client) SetQuotas(ctx context.Context, name string, q Quotas) (Tenant, error) {
	return do[Tenant](ctx, c, http.MethodPut, "/v1/tenants/"+url.PathEscape(name), wire.QuotasRequest{Quotas: q})
}

// CreateToken mints a token that reaches only sandbox id, with scopes
// (read, write, exec; at most the caller's), for ttl (0: the server's
// default, 15 minutes).
func (c *Client) CreateToken(ctx context.Context, id string, scopes []Scope, ttl time.Duration) (SandboxToken, error) {
	var t SandboxToken
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/tokens",
		wire.TokenRequest{Scopes: scopes, TTLS: int64(ttl / time.Second)}, &t)
	return t, err
}
