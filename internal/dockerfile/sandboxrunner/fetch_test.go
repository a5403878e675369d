package sandboxrunner

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
)

// serve starts an HTTP server on addr; /file answers "payload", /jump
// redirects to http://evil.test/file. hits counts requests.
func serve(t *testing.T, addr string) (port string, hits *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	hits = new(atomic.Int32)
	mux := http.NewServeMux()
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) { hits.Add(1); io.WriteString(w, "payload") })
	mux.HandleFunc("/jump", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		http.Redirect(w, r, "http://evil.test:"+p+"/file", http.StatusFound)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, hits
}

func nonLoopback(t *testing.T) netip.Addr {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			ip, _ := netip.AddrFromSlice(n.IP.To4())
			return ip
		}
	}
	t.Skip("no non-loopback IPv4 address to serve on")
	return netip.Addr{}
}

// ADD <url> follows the build's network policy: refused under none,
// allowed only to --allow hosts under allowlist, and only to addresses
// the egress Guard passes; redirects are held to the same allowlist.
func TestFetchPolicy(t *testing.T) {
	ip := nonLoopback(t)
	port, hits := serve(t, ip.String())
	lport, lhits := serve(t, "127.0.0.1")
	names := map[string]string{"files.test": ip.String(), "evil.test": ip.String(), "local.test": "127.0.0.1"}
	lookup := func(_ context.Context, h string) ([]string, error) {
		if a, ok := names[h]; ok {
			return []string{a}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: h, IsNotFound: true}
	}
	// The admin opened this host's private address (--egress-allow-cidr).
	open := policy.NewGuard([]netip.Prefix{netip.PrefixFrom(ip, 32)}, nil)
	f := &Fetcher{Guard: func() *policy.Guard { return open }, LookupHost: lookup}
	allow := dockerfile.NetPolicy{Mode: "allowlist", Allow: []string{"files.test", "local.test"}}
	fetch := func(f *Fetcher, url string, np dockerfile.NetPolicy) (string, error) {
		var buf bytes.Buffer
		name, err := f.Fetch(context.Background(), url, np, &buf, 1<<20)
		if err == nil && buf.String() != "payload" {
			t.Fatalf("%s: body %q", url, buf.String())
		}
		return name, err
	}

	// Positive control: allowed by name, passed by the guard.
	if name, err := fetch(f, "http://files.test:"+port+"/file", allow); err != nil || name != "file" {
		t.Fatalf("allowed fetch: %q %v", name, err)
	}
	before := hits.Load()
	for _, c := range []struct {
		what, url string
		np        dockerfile.NetPolicy
	}{
		{"--net none", "http://files.test:" + port + "/file", dockerfile.NetPolicy{Mode: "none"}},
		{"the default network", "http://files.test:" + port + "/file", dockerfile.NetPolicy{}},
		{"a host not in --allow", "http://evil.test:" + port + "/file", allow},
		{"an address literal", "http://" + ip.String() + ":" + port + "/file", allow},
		{"a redirect out of the allowlist", "http://files.test:" + port + "/jump", allow},
	} {
		if _, err := fetch(f, c.url, c.np); errs.CodeOf(err) != errs.CodeForbidden {
			t.Errorf("%s: %v, want forbidden", c.what, err)
		}
	}
	if n := hits.Load() - before; n != 1 { // only /jump was asked, never evil.test's /file
		t.Errorf("refused fetches reached the server %d times, want 1 (the redirect)", n)
	}

	// An allowed name that resolves to loopback is refused by the guard
	// (SSRF to the host's own services); the host itself reaches it.
	resp, err := http.Get("http://127.0.0.1:" + lport + "/file")
	if err != nil {
		t.Fatalf("positive control: %v", err)
	}
	resp.Body.Close()
	if _, err := fetch(f, "http://local.test:"+lport+"/file", allow); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("loopback through an allowed name: %v, want forbidden", err)
	}
	if lhits.Load() != 1 {
		t.Errorf("the loopback server saw %d requests, want only the control's", lhits.Load())
	}
	// Without the admin's exception the host's private address is refused.
	strict := &Fetcher{LookupHost: lookup}
	if _, err := fetch(strict, "http://files.test:"+port+"/file", allow); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("a private address without an exception: %v, want forbidden", err)
	}
}
