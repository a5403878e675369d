package client

import (
	"context"
	"net/http"
	"net/url"
)

// Network returns a sandbox's network policy.
func (c *Client) Network(ctx context.Context, id string) (Network, error) {
	var n Network
	err := c.call(ctx, http.MethodGet, "/v1/sandboxes/"+url.PathEscape(id)+"/network", nil, &n)
	return n, err
}

// SetNetwork changes a running sandbox's network policy; new connections
// follow it at once. It returns the policy in canonical form.
func (c *Client) SetNetwork(ctx context.Context, id string, n Network) (Network, error) {
	var out Network
	err := c.call(ctx, http.MethodPut, "/v1/sandboxes/"+url.PathEscape(id)+"/network", n, &out)
	return out, err
}
