package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// PortURL is a signed, expiring URL for one port of a sandbox.
type PortURL struct {
	Sandbox   string    `json:"sandbox"`
	Port      int       `json:"port"`
	URL       string    `json:"url"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// PortURL asks for a URL that reaches port of sandbox id for ttl (0: the
// server's default, an hour).
func (c *Client) PortURL(ctx context.Context, id string, port int, ttl time.Duration) (PortURL, error) {
	var out PortURL
	body := map[string]int64{}
	if ttl > 0 {
		body["ttl_s"] = int64(ttl / time.Second)
	}
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/ports/"+strconv.Itoa(port)+"/url", body, &out)
	return out, err
}
