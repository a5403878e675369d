package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/wire"
)

// PortURL is a signed, expiring URL for one port of a sandbox.
type PortURL = wire.PortURL

// PortURL asks for a URL that reaches port of sandbox id for ttl (0: the
// server's default, an hour).
func (c *Client) PortURL(ctx context.Context, id string, port int, ttl time.Duration) (PortURL, error) {
	var out PortURL
	body := wire.PortURLRequest{}
	if ttl > 0 {
		body.TTLS = int64(ttl / time.Second)
	}
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/ports/"+strconv.Itoa(port)+"/url", body, &out)
	return out, err
}
