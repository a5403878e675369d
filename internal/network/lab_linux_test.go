//go:build linux

package network_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"

	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

// The lab: network namespaces this test process makes, so that nothing a
// test does can reach the machine's own network, let alone leave it.
//
//	host ns (the server's side: sandbox veths, nftables, proxy, resolver)
//	  lab0 10.250.0.1/30 fd99::1/64 ── lab1 10.250.0.2/30 fd99::2/64
//	outside ns ("the internet" and "the cloud"), addresses on its lo:
//	  203.0.113.10  allowed.test: HTTP :80, HTTPS :443, echo :7, UDP :9999
//	  203.0.113.11  other.test: HTTP :80, HTTPS :443
//	  203.0.113.53  the upstream resolver (records every query it sees)
//	  169.254.169.254, fd00:ec2::254  the metadata service (HTTP :80)
//	  198.51.100.20 a documentation address nobody allowed (HTTP :80)
//
// 203.0.113.0/24 stands in for the public internet: the stack gets it as
// an admin exception (--egress-allow-cidr), as it is otherwise refused.

var (
	addrAllowed = netip.MustParseAddr("203.0.113.10")
	addrOther   = netip.MustParseAddr("203.0.113.11")
	addrDNS     = netip.MustParseAddr("203.0.113.53")
	addrMeta    = netip.MustParseAddr("169.254.169.254")
	addrMeta6   = netip.MustParseAddr("fd00:ec2::254")
	addrDocs    = netip.MustParseAddr("198.51.100.20")
	addrHostLab = netip.MustParseAddr("10.250.0.1")
	publicCIDR  = netip.MustParsePrefix("203.0.113.0/24")
)

// netNS is a namespace this test made (netlab), with the lab's helpers.
type netNS struct{ *netlab.NS }

func newNetNS(t testing.TB) *netNS { return &netNS{netlab.New(t)} }

func (n *netNS) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return n.Dial(ctx, network, addr)
}

// httpGet fetches url from inside n (no proxy), returning the body.
func (n *netNS) httpGet(url string) (string, error) {
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return n.dial(network, addr, 3*time.Second)
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

type lab struct {
	t         testing.TB
	host, out *netNS
	resolver  *fakeResolver
	udp       *udpRecorder
	certPool  *x509.CertPool
}

func newLab(t testing.TB) *lab {
	t.Helper()
	l := &lab{t: t, host: newNetNS(t), out: newNetNS(t)}
	hh, oh := l.host.Handle(), l.out.Handle()
	la := netlink.NewLinkAttrs()
	la.Name = "lab0"
	la.Flags = net.FlagUp
	v := &netlink.Veth{LinkAttrs: la, PeerName: "lab1", PeerNamespace: netlink.NsFd(l.out.FD)}
	must(t, hh.LinkAdd(v))
	addAddr(t, hh, v, "10.250.0.1/30", "fd99::1/64")
	peer, err := oh.LinkByName("lab1")
	must(t, err)
	must(t, oh.LinkSetUp(peer))
	addAddr(t, oh, peer, "10.250.0.2/30", "fd99::2/64")
	olo, err := oh.LinkByName("lo")
	must(t, err)
	addAddr(t, oh, olo, "203.0.113.10/32", "203.0.113.11/32", "203.0.113.53/32", "169.254.169.254/32",
		"198.51.100.20/32", "fd00:ec2::254/128")
	for _, dst := range []string{"203.0.113.0/24", "169.254.169.254/32", "198.51.100.0/24", "fd00:ec2::254/128"} {
		p := netip.MustParsePrefix(dst)
		gw := "10.250.0.2"
		if p.Addr().Is6() {
			gw = "fd99::2"
		}
		must(t, hh.RouteAdd(&netlink.Route{LinkIndex: v.Attrs().Index, Dst: ipnet(p), Gw: net.ParseIP(gw)}))
	}
	must(t, oh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP("10.250.0.1")}))
	must(t, oh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP("fd99::1")}))
	l.startServers()
	return l
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
	netlab.AddAddr(t, h, l, cidrs...)
}

// startServers runs the outside world's services.
func (l *lab) startServers() {
	t := l.t
	cert, pool := selfSigned(t, "allowed.test", "other.test", "public.test")
	l.certPool = pool
	serve := func(addr, who string, tlsOn bool) {
		ln := l.out.Listen("tcp", addr)
		if tlsOn {
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/big" {
				w.Header().Set("Content-Length", "67108864")
				buf := make([]byte, 1<<20)
				for i := 0; i < 64; i++ {
					if _, err := w.Write(buf); err != nil {
						return
					}
				}
				return
			}
			fmt.Fprintf(w, "%s host=%s\n", who, r.Host)
			if v := r.Header.Get("X-Injected"); v != "" {
				fmt.Fprintf(w, "x-injected=%s\n", v)
			}
		}), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	serve("203.0.113.10:80", "hello from allowed.test", false)
	serve("203.0.113.10:443", "hello over tls from allowed.test", true)
	serve("203.0.113.11:80", "hello from other.test", false)
	serve("203.0.113.11:443", "hello over tls from other.test", true)
	serve("169.254.169.254:80", "METADATA-SECRET", false)
	serve("[fd00:ec2::254]:80", "METADATA-SECRET-V6", false)
	serve("198.51.100.20:80", "hello from a documentation address", false)
	echo := l.out.Listen("tcp", "203.0.113.10:7")
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	// discard (:9) reads everything; source (:19) writes until closed:
	// for throughput.
	sink := l.out.Listen("tcp", "203.0.113.10:9")
	go func() {
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.CopyBuffer(io.Discard, struct{ io.Reader }{c}, make([]byte, 1<<20)) }()
		}
	}()
	src := l.out.Listen("tcp", "203.0.113.10:19")
	go func() {
		buf := make([]byte, 1<<20)
		for {
			c, err := src.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	l.udp = &udpRecorder{pc: l.out.ListenPacket("udp4", "203.0.113.10:9999")}
	go l.udp.run()
	l.resolver = startFakeResolver(t, l.out)
}

func selfSigned(t testing.TB, names ...string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	must(t, err)
	leaf, err := x509.ParseCertificate(der)
	must(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// udpRecorder remembers every datagram it receives.
type udpRecorder struct {
	pc   net.PacketConn
	mu   sync.Mutex
	got  []string
	wait chan struct{}
}

func (u *udpRecorder) run() {
	buf := make([]byte, 2048)
	for {
		n, _, err := u.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		u.mu.Lock()
		u.got = append(u.got, string(buf[:n]))
		u.mu.Unlock()
	}
}

// until waits (bounded) for a datagram containing marker and returns
// everything received so far.
func (u *udpRecorder) until(t testing.TB, marker string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		u.mu.Lock()
		got := append([]string(nil), u.got...)
		u.mu.Unlock()
		for _, g := range got {
			if strings.Contains(g, marker) {
				return got
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the positive control datagram %q never arrived", marker)
	return nil
}

// fakeResolver is "the upstream resolver": it answers a few names and
// records every question it is asked.
type fakeResolver struct {
	mu   sync.Mutex
	seen []string
}

var fakeZone = map[string]string{
	"allowed.test.":     "203.0.113.10",
	"www.allowed.test.": "203.0.113.10",
	"other.test.":       "203.0.113.11",
	"public.test.":      "203.0.113.10",
	"rebind.test.":      "127.0.0.1",
	"meta.test.":        "169.254.169.254",
	"docs.test.":        "198.51.100.20",
}

func startFakeResolver(t testing.TB, ns *netNS) *fakeResolver {
	f := &fakeResolver{}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if len(r.Question) == 1 {
			q := r.Question[0]
			f.mu.Lock()
			f.seen = append(f.seen, strings.ToLower(q.Name))
			f.mu.Unlock()
			if ip, ok := fakeZone[strings.ToLower(q.Name)]; ok {
				if q.Qtype == dns.TypeA {
					m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
						A: net.ParseIP(ip)})
				}
			} else {
				m.Rcode = dns.RcodeNameError
			}
		}
		_ = w.WriteMsg(m)
	})
	pc := ns.ListenPacket("udp4", "203.0.113.53:53")
	ln := ns.Listen("tcp4", "203.0.113.53:53")
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}} {
		go srv.ActivateAndServe()
		t.Cleanup(func() { srv.Shutdown() })
	}
	return f
}

// asked reports the questions the resolver was asked that contain s.
func (f *fakeResolver) asked(s string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, q := range f.seen {
		if strings.Contains(q, s) {
			out = append(out, q)
		}
	}
	return out
}

// stackOptions are the lab's network stack options (its own table name,
// host namespace, resolver, static names, the public stand-in).
func (l *lab) stackOptions(db *store.DB) network.Options {
	return network.Options{
		DB:        db.SQL(),
		HostNS:    l.host.Path(),
		Upstreams: []netip.AddrPort{netip.AddrPortFrom(addrDNS, 53)},
		Static: map[string][]netip.Addr{
			"static.test":        {addrAllowed},
			"rebind-static.test": {netip.MustParseAddr("127.0.0.1")},
		},
		AllowCIDR: []netip.Prefix{publicCIDR, netip.MustParsePrefix("10.250.0.0/30")},
	}
}
