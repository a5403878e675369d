package client

import (
	"context"
	"net/http"
	"net/url"
)

// Pause freezes a sandbox in place (its timeout clock stops); pausing a
// paused sandbox returns it as it is.
func (c *Client) Pause(ctx context.Context, id string) (Sandbox, error) {
	var sb Sandbox
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/pause", nil, &sb)
	return sb, err
}

// Resume thaws a paused sandbox; resuming a running one returns it as it is.
func (c *Client) Resume(ctx context.Context, id string) (Sandbox, error) {
	var sb Sandbox
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/resume", nil, &sb)
	return sb, err
}
