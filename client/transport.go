package client

import "net/http"

// WithHTTPClient returns a copy of c that sends its requests with hc: a
// transport tuned for many concurrent requests (Go's default keeps only
// two idle connections per host, so concurrent callers would keep
// reconnecting), a proxy, or custom TLS.
func (c *Client) WithHTTPClient(hc *http.Client) *Client {
	cp := *c
	cp.hc = hc
	return &cp
}
