//go:build linux

package e2b_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

// The echo lab: network namespaces this test makes, so that what the
// sandboxes reach never leaves the machine.
//
//	host ns (the stack's sandbox network: veths, nftables, proxy, resolver)
//	  lab0 10.251.0.1/30 ── lab1 10.251.0.2/30
//	outside ns: 198.51.100.20 on its lo, echo.test: HTTPS :443
//
// 198.51.100.0/24 stands for the internet (an admin exception, as serve's
// --egress-allow-cidr gives it); echo.test's certificate is from the lab's
// own CA, which the egress proxy trusts upstream (--egress-upstream-ca)
// and the sandbox does not. The echo server records every request's
// headers and answers only a verdict on Authorization, never its value:
// the sandbox must not learn a secret from the answer.

const echoHost = "echo.test"

var echoAddr = netip.MustParseAddr("198.51.100.20")

// echoSeen is what the echo server was sent.
type echoSeen struct {
	Auth, Trace string
	TLS         bool
}

type echoLab struct {
	host, out *netlab.NS
	pool      *x509.CertPool
	wantAuth  string
	mu        sync.Mutex
	got       []echoSeen
}

// newEchoLab builds the lab; wantAuth is the Authorization the echo
// server calls a match.
func newEchoLab(t *testing.T, wantAuth string) *echoLab {
	t.Helper()
	testenv.RequireRoot(t)
	l := &echoLab{host: netlab.New(t), out: netlab.New(t), wantAuth: wantAuth}
	hh, oh := l.host.Handle(), l.out.Handle()
	la := netlink.NewLinkAttrs()
	la.Name, la.Flags = "lab0", net.FlagUp
	v := &netlink.Veth{LinkAttrs: la, PeerName: "lab1", PeerNamespace: netlink.NsFd(l.out.FD)}
	if err := hh.LinkAdd(v); err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, hh, v, "10.251.0.1/30")
	peer, err := oh.LinkByName("lab1")
	if err == nil {
		err = oh.LinkSetUp(peer)
	}
	if err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, oh, peer, "10.251.0.2/30")
	olo, err := oh.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, oh, olo, echoAddr.String()+"/32")
	if err := hh.RouteAdd(&netlink.Route{LinkIndex: v.Attrs().Index, Dst: &net.IPNet{IP: net.ParseIP("198.51.100.0"), Mask: net.CIDRMask(24, 32)},
		Gw: net.ParseIP("10.251.0.2")}); err != nil {
		t.Fatal(err)
	}
	if err := oh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP("10.251.0.1")}); err != nil {
		t.Fatal(err)
	}
	ca := netlab.NewLabCA(t, echoHost)
	l.pool = ca.Pool
	ln := tls.NewListener(l.out.Listen("tcp", echoAddr.String()+":443"), &tls.Config{Certificates: []tls.Certificate{ca.Cert}})
	srv := &http.Server{Handler: http.HandlerFunc(l.serve), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return l
}

func (l *echoLab) serve(w http.ResponseWriter, r *http.Request) {
	s := echoSeen{Auth: r.Header.Get("Authorization"), Trace: r.Header.Get("X-Paddock-Trace"), TLS: r.TLS != nil}
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
	verdict := "other"
	switch s.Auth {
	case "":
		verdict = "absent"
	case l.wantAuth:
		verdict = "match"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"trace": s.Trace, "auth": verdict})
}

// requests returns what the echo server was sent so far.
func (l *echoLab) requests() []echoSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]echoSeen(nil), l.got...)
}

// stack is a stack whose sandbox network lives in the lab, echo.test
// resolving to the echo server, as serve's --dns-host would.
func (l *echoLab) stack(t *testing.T) *stack {
	t.Helper()
	return l.stackWith(t, server.TemplatesConfig{})
}

// sdkStack is the lab's stack with a registry for Template.build, and the
// environment the SDK script's template block reads (tplapi_linux_test.go).
func (l *echoLab) sdkStack(t *testing.T) (*stack, []string) {
	t.Helper()
	ref, tc := tplBase(t)
	return l.stackWith(t, tc), []string{"E2B_TEMPLATE_BASE=" + ref, "E2B_TEMPLATE_CONTEXT=" + tplContext(t)}
}

func (l *echoLab) stackWith(t *testing.T, tc server.TemplatesConfig) *stack {
	t.Helper()
	e := testenv.New(t, testenv.Options{NetworkConfig: &server.NetworkConfig{HostNS: l.host.Path(), Upstreams: []netip.AddrPort{},
		Static: map[string][]netip.Addr{echoHost: {echoAddr}}, AllowCIDR: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}},
		UpstreamRoots: l.pool, PortsDomain: urlsDomain, Templates: tc})
	return &stack{Env: e, URL: e.Server.URL}
}
