package guestapi

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// NewTLSClient returns a client for a guest that listens on TCP at addr
// with TLS (the kube runtime's Pods); conf carries the host's client
// certificate, the CA and the guest's expected server name. The browser's
// DevTools connection is not available through it.
func NewTLSClient(addr string, conf *tls.Config) *Client {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}, Config: conf}
	tr := &http.Transport{
		// The URL says http://guest: the connection is TLS underneath.
		DialContext:           func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) },
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0,
		DisableCompression:    true,
	}
	return &Client{tr: tr, hc: &http.Client{Transport: tr}}
}
