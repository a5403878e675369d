//go:build linux

package inject_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

// The lab: two network namespaces this test makes, so that nothing the
// sandboxes reach can leave the machine.
//
//	host ns (the server's side: sandbox veths, nftables, proxy, resolver)
//	  lab0 10.250.0.1/30 ── lab1 10.250.0.2/30
//	outside ns, addresses on its lo:
//	  203.0.113.10  api.test: HTTPS :443 (gets the secret), HTTP :80
//	  203.0.113.11  other.test: HTTPS :443 (no inject rule)
//
// 203.0.113.0/24 stands for the internet: the stack gets it as an admin
// exception, as it is otherwise refused. Both servers' certificates are
// from the lab's own CA, which the egress proxy trusts upstream (as with
// paddock serve --egress-upstream-ca) and the sandbox does not.

var (
	addrAPI   = netip.MustParseAddr("203.0.113.10")
	addrOther = netip.MustParseAddr("203.0.113.11")
)

type netNS struct{ *netlab.NS }

func newNetNS(t testing.TB) *netNS { return &netNS{netlab.New(t)} }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ipnet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func addAddr(t testing.TB, h *netlink.Handle, l netlink.Link, cidrs ...string) {
	netlab.AddAddr(t, h, l, cidrs...)
}

// seen is what an upstream server was sent.
type seen struct {
	Host, Auth string
	TLS        bool
}

type lab struct {
	host, out *netNS
	caPEM     []byte         // the lab CA (upstream certificates)
	caPool    *x509.CertPool // for the proxy's upstream verification
	mu        sync.Mutex
	got       map[string][]seen // by server name
}

func newLab(t testing.TB, wantAuth string) *lab {
	t.Helper()
	l := &lab{host: newNetNS(t), out: newNetNS(t), got: map[string][]seen{}}
	hh, oh := l.host.Handle(), l.out.Handle()
	la := netlink.NewLinkAttrs()
	la.Name = "lab0"
	la.Flags = net.FlagUp
	v := &netlink.Veth{LinkAttrs: la, PeerName: "lab1", PeerNamespace: netlink.NsFd(l.out.FD)}
	must(t, hh.LinkAdd(v))
	addAddr(t, hh, v, "10.250.0.1/30")
	peer, err := oh.LinkByName("lab1")
	must(t, err)
	must(t, oh.LinkSetUp(peer))
	addAddr(t, oh, peer, "10.250.0.2/30")
	olo, err := oh.LinkByName("lo")
	must(t, err)
	addAddr(t, oh, olo, "203.0.113.10/32", "203.0.113.11/32")
	must(t, hh.RouteAdd(&netlink.Route{LinkIndex: v.Attrs().Index, Dst: ipnet(netip.MustParsePrefix("203.0.113.0/24")),
		Gw: net.ParseIP("10.250.0.2")}))
	must(t, oh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP("10.250.0.1")}))
	ca := netlab.NewLabCA(t, "api.test", "other.test")
	l.caPool, l.caPEM = ca.Pool, ca.PEM
	cert := ca.Cert
	l.serve(t, "203.0.113.10:443", "api.test", &cert, wantAuth)
	l.serve(t, "203.0.113.10:80", "api.test", nil, wantAuth)
	l.serve(t, "203.0.113.11:443", "other.test", &cert, wantAuth)
	return l
}

// serve runs one upstream server. It answers whether it got the expected
// Authorization, never the header itself (the sandbox must not learn the
// secret from an echo).
func (l *lab) serve(t testing.TB, addr, name string, cert *tls.Certificate, wantAuth string) {
	ln := l.out.Listen("tcp", addr)
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}})
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.got[name] = append(l.got[name], seen{Host: r.Host, Auth: r.Header.Get("Authorization"), TLS: r.TLS != nil})
		l.mu.Unlock()
		verdict := "unauthorized"
		if r.Header.Get("Authorization") == wantAuth {
			verdict = "authorized"
		}
		fmt.Fprintf(w, "%s tls=%v %s\n", name, r.TLS != nil, verdict)
	}), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// requests returns what server name was sent so far.
func (l *lab) requests(name string) []seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seen(nil), l.got[name]...)
}
