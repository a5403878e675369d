package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/paddockhq/paddock/wire"
)

// SecretInfo is what anyone may know of a secret: never its value.
type SecretInfo = wire.SecretInfo

func secretPath(name, tenant string) string {
	p := "/v1/secrets"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	if tenant != "" {
		p += "?tenant=" + url.QueryEscape(tenant)
	}
	return p
}

// SetSecret creates or replaces a secret of the key's tenant (another
// tenant's with an admin key and tenant set). The value is sent once and
// never answered. hosts, if given, are where the secret may be sent
// (exact names, optionally :port); without them an existing secret keeps
// its hosts and a new one is sent nowhere until bound (BindSecret).
func (c *Client) SetSecret(ctx context.Context, tenant, name, value string, hosts ...string) (SecretInfo, error) {
	return do[SecretInfo](ctx, c, http.MethodPut, secretPath(name, tenant), wire.SecretValue{Value: &value, Hosts: hosts})
}

// BindSecret replaces the hosts an existing secret may be sent to,
// keeping its value.
func (c *Client) BindSecret(ctx context.Context, tenant, name string, hosts []string) (SecretInfo, error) {
	if hosts == nil {
		hosts = []string{}
	}
	return do[SecretInfo](ctx, c, http.MethodPut, secretPath(name, tenant), wire.SecretValue{Hosts: hosts})
}

// ListSecrets lists secrets: names and times, never values.
func (c *Client) ListSecrets(ctx context.Context, tenant string) ([]SecretInfo, error) {
	var out wire.SecretList
	err := c.call(ctx, http.MethodGet, secretPath("", tenant), nil, &out)
	return out.Secrets, err
}

// DeleteSecret removes a secret.
func (c *Client) DeleteSecret(ctx context.Context, tenant, name string) error {
	return c.call(ctx, http.MethodDelete, secretPath(name, tenant), nil, nil)
}
