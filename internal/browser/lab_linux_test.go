//go:build linux

package browser_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/paddockhq/paddock/internal/testenv/netlab"

	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/store"
)

// The lab: two network namespaces this test makes, so that nothing the
// browser does reaches the machine's own network.
//
//	"host" ns: the server's side (sandbox veths, nftables, egress proxy)
//	   blab0 10.252.7.1/30 ── blab1 10.252.7.2/30  "web" ns, on its lo:
//	                                203.0.113.20  site.test (the test site)
//	                                203.0.113.21  blocked.test (never allowed)
//
// The sandboxes resolve the names through the egress resolver's static
// entries (paddock serve --dns-host), and 203.0.113.0/24 (documentation
// addresses, refused by default) is the admin's exception
// (--egress-allow-cidr), as the network tests do.
const (
	siteAddr    = "203.0.113.20"
	blockedAddr = "203.0.113.21"
)

type lab struct {
	host, web *netlab.NS
	site      *counter // requests site.test served
	blocked   *counter
}

type counter struct{ n atomic.Int64 }

func newLab(t testing.TB, site http.Handler) *lab {
	t.Helper()
	l := &lab{host: netlab.New(t), web: netlab.New(t), site: &counter{}, blocked: &counter{}}
	hh, wh := l.host.Handle(), l.web.Handle()
	la := netlink.NewLinkAttrs()
	la.Name = "blab0"
	la.Flags = net.FlagUp
	veth := &netlink.Veth{LinkAttrs: la, PeerName: "blab1", PeerNamespace: netlink.NsFd(l.web.FD)}
	if err := hh.LinkAdd(veth); err != nil {
		t.Fatalf("veth: %v", err)
	}
	netlab.AddAddr(t, hh, veth, "10.252.7.1/30")
	peer, err := wh.LinkByName("blab1")
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.LinkSetUp(peer); err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, wh, peer, "10.252.7.2/30")
	lo, err := wh.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, wh, lo, siteAddr+"/32")
	netlab.AddAddr(t, wh, lo, blockedAddr+"/32")
	_, web, _ := net.ParseCIDR("203.0.113.0/24")
	if err := hh.RouteAdd(&netlink.Route{LinkIndex: veth.Attrs().Index, Dst: web, Gw: net.ParseIP("10.252.7.2")}); err != nil {
		t.Fatal(err)
	}
	if err := wh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP("10.252.7.1")}); err != nil {
		t.Fatal(err)
	}
	l.serve(t, siteAddr+":80", l.site, site)
	l.serve(t, blockedAddr+":80", l.blocked, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "<title>Blocked</title><h1>hello from blocked.test</h1>")
	}))
	return l
}

func (l *lab) serve(t testing.TB, at string, c *counter, h http.Handler) {
	t.Helper()
	var ln net.Listener
	if err := l.web.Do(func() (err error) { ln, err = net.Listen("tcp4", at); return err }); err != nil {
		t.Fatalf("listen %s: %v", at, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		h.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// get fetches url from the host side, unsandboxed (the positive control
// of a refusal: the server answers anyone who can route to it).
func (l *lab) get(url string) (string, error) {
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := l.host.Do(func() (err error) {
				c, err = (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		}}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// stack is the sandboxes' network, its host side in the lab.
func (l *lab) stack(t testing.TB) *network.Stack {
	t.Helper()
	db, err := store.Open(t.TempDir(), network.Migrations...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := network.New(context.Background(), network.Options{
		DB: db.SQL(), HostNS: l.host.Path(), PoolV6: "none",
		Upstreams: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.53:53")}, // nobody: only static names resolve
		Static: map[string][]netip.Addr{"site.test": {netip.MustParseAddr(siteAddr)},
			"blocked.test": {netip.MustParseAddr(blockedAddr)}},
		AllowCIDR: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")},
	})
	if err != nil {
		t.Fatalf("network stack: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
