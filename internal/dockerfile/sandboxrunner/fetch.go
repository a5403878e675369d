package sandboxrunner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
)

// Fetcher implements dockerfile.Fetcher under a build's network policy,
// with the egress proxy's own rules: nothing under "none"; under
// "allowlist" only a URL whose host (and every redirect's) an --allow
// entry names, and only to addresses the egress Guard passes (no
// loopback, private, link-local or metadata address, none of the host's
// own, none of the sandbox pools, unless the admin opened a CIDR with
// --egress-allow-cidr). The address check is made on the socket being
// connected, so a name that resolves elsewhere on a second lookup
// (DNS rebinding) gains nothing. No proxy from the environment is used.
type Fetcher struct {
	Guard func() *policy.Guard // the egress Guard; nil: a default one
	// LookupHost resolves names (default: the host's resolver); Dial
	// connects (default: a net.Dialer). Tests set them.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	Dial       func(ctx context.Context, network, addr string) (net.Conn, error)
	Timeout    time.Duration // one download; default 10 minutes
}

const maxRedirects = 10

// Fetch implements dockerfile.Fetcher.
func (f *Fetcher) Fetch(ctx context.Context, raw string, np dockerfile.NetPolicy, w io.Writer, max int64) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errs.Invalid("ADD %s: not an http or https URL", clip(raw))
	}
	if np.Mode == "" || np.Mode == "none" {
		return "", errs.New(errs.CodeForbidden, "ADD %s: the build has no network (--net none); build with --net allowlist --allow %s", clip(raw), u.Hostname())
	}
	pol, err := policy.Compile(np.Mode, np.Allow, nil)
	if err != nil {
		return "", errs.Invalid("build network: %s", err.Error())
	}
	if err := allowed(pol, u); err != nil {
		return "", err
	}
	guard := policy.NewGuard(nil, nil)
	if f.Guard != nil {
		if g := f.Guard(); g != nil {
			guard = g
		}
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tr := &http.Transport{Proxy: nil, DialContext: f.dialer(guard), ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: 30 * time.Second, ResponseHeaderTimeout: time.Minute, MaxIdleConns: 1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return errs.Invalid("ADD %s: more than %d redirects", clip(raw), maxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return errs.New(errs.CodeForbidden, "ADD %s: redirected to a non-http URL", clip(raw))
		}
		return allowed(pol, req.URL)
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", errs.Invalid("ADD %s: %v", clip(raw), err)
	}
	resp, err := c.Do(req)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return "", e
		}
		return "", errs.Wrap(errs.CodeUnavailable, err, "ADD %s: cannot download it", clip(raw))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", errs.Invalid("ADD %s: the server answered %s", clip(raw), resp.Status)
	}
	if _, err := io.Copy(w, io.LimitReader(resp.Body, max+1)); err != nil {
		if errs.CodeOf(err) == errs.CodeTooLarge {
			return "", err
		}
		return "", errs.Wrap(errs.CodeUnavailable, err, "ADD %s: the download failed", clip(raw))
	}
	return path.Base(resp.Request.URL.Path), nil
}

// allowed applies the allowlist to u's host and port.
func allowed(pol *policy.Policy, u *url.URL) error {
	host := u.Hostname()
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return errs.Invalid("ADD: bad port in %s", clip(u.String()))
		}
		port = n
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if _, ok := pol.AllowAddr(a); !ok {
			return errs.New(errs.CodeForbidden, "ADD %s: %s is an address, and the build's allowlist names hosts", clip(u.String()), host)
		}
		return nil
	}
	name, ok := policy.NormalizeName(host)
	if !ok {
		return errs.Invalid("ADD %s: bad host name", clip(u.String()))
	}
	if _, ok := pol.AllowName(name, port); !ok {
		return errs.New(errs.CodeForbidden, "ADD %s: %s is not in the build's --allow list", clip(u.String()), name)
	}
	return nil
}

// dialer connects to the first address of the host the Guard passes,
// checking the address on the socket itself.
func (f *Fetcher) dialer(g *policy.Guard) func(ctx context.Context, network, addr string) (net.Conn, error) {
	lookup := f.LookupHost
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	dial := f.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
			return guardAddr(g, address)
		}}
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs := []string{host}
		if _, err := netip.ParseAddr(host); err != nil {
			if addrs, err = lookup(ctx, host); err != nil {
				return nil, errs.Wrap(errs.CodeUnavailable, err, "cannot resolve %s", host)
			}
		}
		var last error = errs.New(errs.CodeUnavailable, "%s has no address", host)
		for _, a := range addrs {
			if err := guardAddr(g, net.JoinHostPort(a, port)); err != nil {
				last = err
				continue
			}
			c, err := dial(ctx, network, net.JoinHostPort(a, port))
			if err == nil {
				return c, nil
			}
			last = err
		}
		return nil, last
	}
}

func guardAddr(g *policy.Guard, hostport string) error {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return errs.New(errs.CodeForbidden, "refused destination %s", hostport)
	}
	if reason, ok := g.Check(ap.Addr()); !ok {
		return errs.New(errs.CodeForbidden, "the egress policy refuses %s (%s)", ap.Addr(), reason)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return fmt.Sprint(s)
}
