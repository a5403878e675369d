package client

import (
	"context"
	"net/http"
	"net/url"
)

// Hibernate checkpoints a gVisor sandbox to disk and releases its memory
// (state "hibernated"; Resume restores it). Hibernating a hibernated
// sandbox returns it as it is; a native one is refused (unsupported).
func (c *Client) Hibernate(ctx context.Context, id string) (Sandbox, error) {
	var sb Sandbox
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/hibernate", nil, &sb)
	return sb, err
}
