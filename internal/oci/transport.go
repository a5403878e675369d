package oci

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// Default network timeouts.
const (
	DefaultDialTimeout   = 10 * time.Second
	DefaultHeaderTimeout = 30 * time.Second
	DefaultStallTimeout  = 30 * time.Second
)

// ErrPlainHTTP is the cause when a request would go over plain HTTP to a
// registry not named insecure.
var ErrPlainHTTP = errors.New("plain HTTP to a registry not named insecure")

// ErrStalled is the cause when a response body made no progress for the
// stall timeout.
var ErrStalled = errors.New("registry stopped sending data")

// guardTransport enforces TLS except for named insecure hosts, and bounds
// connect, response-header and body-stall times. go-containerregistry
// falls back to http:// on its own for loopback, RFC 1918 and
// "localhost" registries; this refuses that unless the host is named
// (a network attacker could otherwise strip TLS: downgrade class).
type guardTransport struct {
	inner    http.RoundTripper
	insecure map[string]bool
	stall    time.Duration
}

func newTransport(o *Options) *guardTransport {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.RootCAs != nil {
		tlsCfg.RootCAs = o.RootCAs
	}
	dial := &net.Dialer{Timeout: o.dialTimeout(), KeepAlive: 30 * time.Second}
	inner := &http.Transport{
		Proxy:                 o.Proxy,
		DialContext:           dial.DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   o.dialTimeout(),
		ResponseHeaderTimeout: o.headerTimeout(),
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
		ForceAttemptHTTP2:     true,
	}
	ins := map[string]bool{}
	for _, h := range o.Insecure {
		ins[strings.ToLower(h)] = true
	}
	return &guardTransport{inner: inner, insecure: ins, stall: o.stallTimeout()}
}

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" && !t.insecure[strings.ToLower(req.URL.Host)] {
		return nil, errs.Wrap(errs.CodeInvalid, ErrPlainHTTP,
			"registry %s does not speak HTTPS; name it insecure to allow plain HTTP", quoteRef(req.URL.Host))
	}
	resp, err := t.inner.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = newStallReader(resp.Body, t.stall)
	return resp, nil
}

func (t *guardTransport) close() {
	if it, ok := t.inner.(*http.Transport); ok {
		it.CloseIdleConnections()
	}
}

// stallReader fails a body that sends nothing for d (a slow-loris
// registry would otherwise hold a pull forever).
type stallReader struct {
	rc    io.ReadCloser
	d     time.Duration
	timer *time.Timer
	mu    sync.Mutex
	fired bool
}

func newStallReader(rc io.ReadCloser, d time.Duration) *stallReader {
	s := &stallReader{rc: rc, d: d}
	s.timer = time.AfterFunc(d, func() {
		s.mu.Lock()
		s.fired = true
		s.mu.Unlock()
		rc.Close()
	})
	return s
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	if n > 0 {
		s.timer.Reset(s.d)
	}
	if err != nil && err != io.EOF {
		s.mu.Lock()
		fired := s.fired
		s.mu.Unlock()
		if fired {
			return n, errs.Wrap(errs.CodeTimeout, ErrStalled, "the registry stopped sending data for %s", s.d)
		}
	}
	return n, err
}

func (s *stallReader) Close() error {
	s.timer.Stop()
	return s.rc.Close()
}

// Options configure a Client.
type Options struct {
	Credentials                              CredentialFunc
	Insecure                                 []string // "host:port" registries reached over plain HTTP
	RootCAs                                  *x509.CertPool
	Proxy                                    func(*http.Request) (*url.URL, error)
	Platform                                 string // "os/arch[/variant]"; default the host's
	DialTimeout, HeaderTimeout, StallTimeout time.Duration
	// MaxLayers bounds an image's layer count (overlayfs stacks at most
	// ~500 lowers, and mount options are one page).
	MaxLayers int
	// Jobs is how many layers are fetched at once.
	Jobs int
}

func (o *Options) dialTimeout() time.Duration { return orDefault(o.DialTimeout, DefaultDialTimeout) }
func (o *Options) headerTimeout() time.Duration {
	return orDefault(o.HeaderTimeout, DefaultHeaderTimeout)
}
func (o *Options) stallTimeout() time.Duration { return orDefault(o.StallTimeout, DefaultStallTimeout) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
