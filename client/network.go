package client

import (
	"context"
	"net/http"
	"net/url"
)

// Network returns a sandbox's network policy.
func (c *Client) Network(ctx context.Context, id string) (Network, error) {
	return do[Network](ctx, c, http.MethodGet, "/v1/sandboxes/"+url.PathEscape(id)+"/network", nil)
}

// SetNetwork changes a running sandbox's network policy; new connections
// follow it at once. It returns the policy in canonical form.
func (c *Client) SetNetwork(ctx context.Context, id string, n Network) (Network, error) {
	return do[Network](ctx, c, http.MethodPut, "/v1/sandboxes/"+url.PathEscape(id)+"/network", n)
}
