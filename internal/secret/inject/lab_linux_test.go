//go:build linux

package inject_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
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

type netNS struct{ fd int }

func newNetNS(t testing.TB) *netNS {
	t.Helper()
	var fd int
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		goruntime.LockOSThread()
		orig, e := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if e != nil {
			err = e
			return
		}
		defer unix.Close(orig)
		if e := unix.Unshare(unix.CLONE_NEWNET); e != nil {
			err = e
			return
		}
		fd, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			goruntime.UnlockOSThread()
		}
	}()
	<-done
	if err != nil {
		t.Fatalf("new network namespace: %v", err)
	}
	n := &netNS{fd: fd}
	t.Cleanup(func() { unix.Close(n.fd) })
	lo, err := n.handle(t).LinkByName("lo")
	if err == nil {
		err = n.handle(t).LinkSetUp(lo)
	}
	must(t, err)
	return n
}

func (n *netNS) path() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), n.fd) }

func (n *netNS) handle(t testing.TB) *netlink.Handle {
	t.Helper()
	h, err := netlink.NewHandleAt(netns.NsHandle(n.fd), unix.NETLINK_ROUTE)
	must(t, err)
	t.Cleanup(h.Close)
	return h
}

func (n *netNS) listen(t testing.TB, addr string) net.Listener {
	t.Helper()
	var ln net.Listener
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(orig)
		if err := unix.Setns(n.fd, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		ln, err = net.Listen("tcp", addr)
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			goruntime.UnlockOSThread()
		}
		errc <- err
	}()
	must(t, <-errc)
	t.Cleanup(func() { ln.Close() })
	return ln
}

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
	t.Helper()
	for _, c := range cidrs {
		must(t, h.AddrAdd(l, &netlink.Addr{IPNet: ipnet(netip.MustParsePrefix(c))}))
	}
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
	hh, oh := l.host.handle(t), l.out.handle(t)
	la := netlink.NewLinkAttrs()
	la.Name = "lab0"
	la.Flags = net.FlagUp
	v := &netlink.Veth{LinkAttrs: la, PeerName: "lab1", PeerNamespace: netlink.NsFd(l.out.fd)}
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
	cert := l.makeCA(t, "api.test", "other.test")
	l.serve(t, "203.0.113.10:443", "api.test", &cert, wantAuth)
	l.serve(t, "203.0.113.10:80", "api.test", nil, wantAuth)
	l.serve(t, "203.0.113.11:443", "other.test", &cert, wantAuth)
	return l
}

func (l *lab) makeCA(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lab CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	must(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	must(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, caCert, &key.PublicKey, caKey)
	must(t, err)
	l.caPool = x509.NewCertPool()
	l.caPool.AddCert(caCert)
	l.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}
}

// serve runs one upstream server. It answers whether it got the expected
// Authorization, never the header itself (the sandbox must not learn the
// secret from an echo).
func (l *lab) serve(t testing.TB, addr, name string, cert *tls.Certificate, wantAuth string) {
	ln := l.out.listen(t, addr)
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
