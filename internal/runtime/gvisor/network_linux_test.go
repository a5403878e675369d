//go:build linux

package gvisor_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

// netLab: the network stack's host side in a namespace of the test's own,
// and "the internet" in another (two HTTP servers on its loopback), so
// that nothing the sandboxes do leaves the machine.
//
//	host ns: sandbox veths, nftables, proxy, resolver; lab0 10.250.0.1/30
//	out ns:  lab1 10.250.0.2/30; 203.0.113.10 allowed.test, 203.0.113.11 other.test
func netLab(t *testing.T) *network.Stack {
	t.Helper()
	host, out := netlab.New(t), netlab.New(t)
	hh, oh := host.Handle(), out.Handle()
	la := netlink.NewLinkAttrs()
	la.Name = "lab0"
	la.Flags = net.FlagUp
	v := &netlink.Veth{LinkAttrs: la, PeerName: "lab1", PeerNamespace: netlink.NsFd(out.FD)}
	if err := hh.LinkAdd(v); err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, hh, v, "10.250.0.1/30")
	peer, err := oh.LinkByName("lab1")
	if err != nil {
		t.Fatal(err)
	}
	if err := oh.LinkSetUp(peer); err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, oh, peer, "10.250.0.2/30")
	lo, _ := oh.LinkByName("lo")
	netlab.AddAddr(t, oh, lo, "203.0.113.10/32", "203.0.113.11/32")
	_, dst, _ := net.ParseCIDR("203.0.113.0/24")
	if err := hh.RouteAdd(&netlink.Route{LinkIndex: v.Attrs().Index, Dst: dst, Gw: net.ParseIP("10.250.0.2")}); err != nil {
		t.Fatal(err)
	}
	if err := oh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP("10.250.0.1")}); err != nil {
		t.Fatal(err)
	}
	for addr, who := range map[string]string{"203.0.113.10:80": "allowed.test", "203.0.113.11:80": "other.test"} {
		ln := out.Listen("tcp", addr)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello from %s\n", who)
		}), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	db, err := store.Open(t.TempDir(), network.Migrations...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := network.New(context.Background(), network.Options{
		DB: db.SQL(), HostNS: host.Path(), PoolV6: "none",
		Upstreams: []netip.AddrPort{netip.MustParseAddrPort("10.250.0.2:53")}, // nothing answers: names are static
		Static: map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("203.0.113.10")},
			"other.test": {netip.MustParseAddr("203.0.113.11")}},
		AllowCIDR: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")},
	})
	if err != nil {
		t.Fatalf("network stack: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestNetwork: egress from gVisor's netstack leaves through the sandbox's
// veth, so Paddock's nftables rules, proxy and resolver apply as on
// native.
func TestNetwork(t *testing.T) {
	st := netLab(t)
	e := newEnv(t, func(o *gvisor.Options) { o.Network = st })

	none := e.create(e.config())
	if res := sh(t, none, "curl -s -m 5 --noproxy '*' http://203.0.113.10/; echo rc=$?"); strings.Contains(res.Stdout, "hello") {
		t.Fatalf("a sandbox without network reached the internet: %+v", res)
	}

	cfg := e.config()
	cfg.Network = &runtime.NetPolicy{Mode: "allowlist", Allow: []string{"allowed.test"}}
	inst := e.create(cfg)
	// Through the proxy (HTTP_PROXY is set for the sandbox).
	if res := sh(t, inst, "curl -s -m 10 http://allowed.test/"); res.Stdout != "hello from allowed.test\n" {
		t.Fatalf("allowed name through the proxy: %+v", res)
	}
	if res := sh(t, inst, "curl -s -m 10 -o /dev/null -w '%{http_code}' http://other.test/"); res.Stdout == "200" {
		t.Fatalf("a name outside the allowlist was reached: %+v", res)
	}
	// Around the proxy: straight to an address, refused by the host's
	// filtering.
	if res := sh(t, inst, "curl -s -m 5 --noproxy '*' http://203.0.113.11/; echo rc=$?"); strings.Contains(res.Stdout, "hello") {
		t.Fatalf("a direct connection passed the filtering: %+v", res)
	}
	// Names resolve through the egress resolver: allowed ones only.
	if res := sh(t, inst, "getent hosts allowed.test"); !strings.Contains(res.Stdout, "203.0.113.10") {
		t.Fatalf("resolver: %+v", res)
	}
	// A policy change applies at once; none detaches, and gVisor cannot
	// take a new interface later.
	ni := inst.(runtime.NetworkInstance)
	if _, err := ni.SetNetwork(t.Context(), runtime.NetPolicy{Mode: "allowlist", Allow: []string{"other.test"}}); err != nil {
		t.Fatalf("policy change: %v", err)
	}
	if res := sh(t, inst, "curl -s -m 10 http://other.test/"); res.Stdout != "hello from other.test\n" {
		t.Fatalf("after the policy change: %+v", res)
	}
	if _, err := none.(runtime.NetworkInstance).SetNetwork(t.Context(), runtime.NetPolicy{Mode: "open"}); err == nil {
		t.Fatal("a sandbox made without network got one")
	}
}
