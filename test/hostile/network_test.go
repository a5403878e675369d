//go:build linux

package hostile

// Group: network egress. Every packet goes to loopback or to addresses
// inside network namespaces this test makes:
//
//	host ns "H" (the server's side: sandbox veths, nftables, egress proxy
//	and resolver, and the real API handler on :7070)
//	  nl0 10.251.0.1/30 ──── nl1 10.251.0.2/30   outside ns "O"
//	O's loopback holds the destinations:
//	  203.0.113.10  allowed.test   HTTP :80, HTTPS :443, UDP :9999
//	  203.0.113.11  other.test     HTTP :80, HTTPS :443
//	  203.0.113.53  the upstream resolver (records every question)
//	  169.254.169.254  the cloud metadata service (HTTP :80)
//
// 203.0.113.0/24 stands in for the internet: the stack gets it as an
// admin exception, as documentation ranges are otherwise refused. The
// positive control of each case is the same action from H or O, outside
// any sandbox.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
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

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
)

const (
	ipAllowed  = "203.0.113.10"
	ipOther    = "203.0.113.11"
	ipResolver = "203.0.113.53"
	ipMetadata = "169.254.169.254"
	ipHostLab  = "10.251.0.1"
	ipOutLab   = "10.251.0.2"
)

// netLab is the two namespaces, the outside world's servers and a real
// stack (manager, API, audit log) whose sandboxes are attached in H.
type netLab struct {
	*env
	h, o     *netNS
	st       *network.Stack
	resolver *recordingResolver
	udp      *udpSink
}

func newNetLab(t *testing.T) *netLab { t.Helper(); return newNetLabWith(t, nil) }

// newNetLabWith is newNetLab with the stack's options changed by set (the
// egress proxy's limits, its upstream resolvers); the proxy learns each
// sandbox's tenant from the stack's store, as serve's.
func newNetLabWith(t *testing.T, set func(*network.Options)) *netLab {
	t.Helper()
	testenv.RequireRoot(t)
	l := &netLab{h: newNetNS(t), o: newNetNS(t)}
	tenantOf := func(ctx context.Context, id string) (string, error) {
		if l.env == nil {
			return "", errors.New("no stack yet")
		}
		return network.StoreTenants(l.Store)(ctx, id)
	}
	hh, oh := l.h.Handle(), l.o.Handle()
	la := netlink.NewLinkAttrs()
	la.Name, la.Flags = "nl0", net.FlagUp
	veth := &netlink.Veth{LinkAttrs: la, PeerName: "nl1", PeerNamespace: netlink.NsFd(l.o.FD)}
	must(t, hh.LinkAdd(veth))
	addAddrs(t, hh, veth, ipHostLab+"/30")
	peer, err := oh.LinkByName("nl1")
	must(t, err)
	must(t, oh.LinkSetUp(peer))
	addAddrs(t, oh, peer, ipOutLab+"/30")
	lo, err := oh.LinkByName("lo")
	must(t, err)
	addAddrs(t, oh, lo, ipAllowed+"/32", ipOther+"/32", ipResolver+"/32", ipMetadata+"/32")
	for _, dst := range []string{"203.0.113.0/24", ipMetadata + "/32"} {
		_, n, _ := net.ParseCIDR(dst)
		must(t, hh.RouteAdd(&netlink.Route{LinkIndex: veth.Attrs().Index, Dst: n, Gw: net.ParseIP(ipOutLab)}))
	}
	must(t, oh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP(ipHostLab)}))
	l.serveOutside(t)

	db, err := store.Open(t.TempDir(), network.Migrations...)
	must(t, err)
	t.Cleanup(func() { db.Close() })
	no := network.Options{DB: db.SQL(), HostNS: l.h.Path(),
		Upstreams: []netip.AddrPort{netip.MustParseAddrPort(ipResolver + ":53")},
		AllowCIDR: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}}
	if set != nil {
		set(&no)
	}
	no.Egress.TenantOf = tenantOf
	l.st, err = network.New(context.Background(), no)
	if err != nil {
		t.Fatalf("network stack: %v", err)
	}
	t.Cleanup(func() { l.st.Close() })
	l.env = newEnv(t, testenv.Options{Network: l.st})
	l.st.Egress().SetSink(network.Events(l.Manager)) // decisions → the audit log, as serve wires it
	// The real API handler, reachable in H on every address (as a server
	// bound to 0.0.0.0 would be): what "reaching the control plane" means.
	// Every answer starts with apiMarker, so that reaching the API shows
	// whatever it answers (its own Host check refuses foreign names).
	api := l.h.Listen("tcp", ":7070")
	real := l.Server.Config.Handler
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, apiMarker+" ")
			real.ServeHTTP(w, r)
		})}
	go srv.Serve(api)
	t.Cleanup(func() { srv.Close() })
	return l
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func addAddrs(t *testing.T, h *netlink.Handle, link netlink.Link, cidrs ...string) {
	t.Helper()
	for _, c := range cidrs {
		a, err := netlink.ParseAddr(c)
		must(t, err)
		must(t, h.AddrAdd(link, a))
	}
}

// serveOutside runs the outside world's services in O.
func (l *netLab) serveOutside(t *testing.T) {
	cert := selfSigned(t, "allowed.test", "other.test")
	serve := func(addr, who string, withTLS bool) {
		ln := l.o.Listen("tcp", addr)
		if withTLS {
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s (host %s)\n", who, r.Host)
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	serve(ipAllowed+":80", "ALLOWED-SERVER", false)
	serve(ipAllowed+":443", "ALLOWED-SERVER-TLS", true)
	serve(ipOther+":80", "OTHER-SERVER", false)
	serve(ipOther+":443", "OTHER-SERVER-TLS", true)
	serve(ipMetadata+":80", "METADATA-SECRET", false)
	l.resolver = startResolver(t, l.o, map[string]string{
		"allowed.test.": ipAllowed, "other.test.": ipOther, "rebind.test.": "127.0.0.1",
		"rebind-host.test.": ipHostLab, "meta.test.": ipMetadata,
	})
	var pc net.PacketConn
	must(t, l.o.Do(func() (err error) { pc, err = net.ListenPacket("udp4", ipAllowed+":9999"); return err }))
	t.Cleanup(func() { pc.Close() })
	l.udp = &udpSink{pc: pc}
	go l.udp.run()
}

func selfSigned(t *testing.T, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	must(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// recordingResolver is the upstream resolver: a few names, and a record
// of every question it is asked.
type recordingResolver struct {
	mu   sync.Mutex
	seen []string
}

func startResolver(t *testing.T, ns *netNS, zone map[string]string) *recordingResolver {
	r := &recordingResolver{}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		if len(q.Question) == 1 {
			name := strings.ToLower(q.Question[0].Name)
			r.mu.Lock()
			r.seen = append(r.seen, name)
			r.mu.Unlock()
			if ip, ok := zone[name]; ok && q.Question[0].Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP(ip)})
			} else if !ok {
				m.Rcode = dns.RcodeNameError
			}
		}
		_ = w.WriteMsg(m)
	})
	var pc net.PacketConn
	must(t, ns.Do(func() (err error) { pc, err = net.ListenPacket("udp4", ipResolver+":53"); return err }))
	ln := ns.Listen("tcp4", ipResolver+":53")
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}} {
		go srv.ActivateAndServe()
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return r
}

func (r *recordingResolver) asked(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.seen {
		if strings.Contains(q, s) {
			return true
		}
	}
	return false
}

type udpSink struct {
	pc  net.PacketConn
	mu  sync.Mutex
	got []string
}

func (u *udpSink) run() {
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

func (u *udpSink) received(s string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, g := range u.got {
		if strings.Contains(g, s) {
			return true
		}
	}
	return false
}

// get fetches url from namespace ns (no proxy), with an optional Host.
func get(ns *netNS, url, host string) (string, error) {
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, DialContext: ns.Dial, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return "", err
	}
	if host != "" {
		req.Host = host
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// control asserts that url answers with want from namespace ns: the
// positive control, outside any sandbox.
func control(t *testing.T, ns *netNS, url, host, want string) {
	t.Helper()
	body, err := get(ns, url, host)
	if err != nil || !strings.Contains(body, want) {
		t.Fatalf("positive control: %s (Host %q) from a test namespace: %q %v", url, host, body, err)
	}
}

// sandboxNet creates a sandbox with a network policy and the probe.
func (l *netLab) sandboxNet(mode string, allow ...string) string {
	l.t.Helper()
	id := l.sandbox(client.Spec{Network: &client.Network{Mode: mode, Allow: allow}})
	l.installProbe(id)
	return id
}

// refused runs a probe op in the sandbox and asserts it did not get
// leak (what the destination would have answered).
func (l *netLab) refused(id, what, leak string, op string, args ...string) probeReport {
	l.t.Helper()
	r, res := l.probeIn(id, "", op, args...)
	if strings.Contains(r.Detail, leak) || strings.Contains(res.Stdout, leak) {
		l.t.Fatalf("%s: the sandbox got through: %+v", what, r)
	}
	l.t.Logf("%s: refused (%s %s)", what, r.Errno, clipS(r.Detail))
	return r
}

// allowedRequest runs a probe op that must succeed: the in-sandbox control
// that the sandbox's network works at all.
func (l *netLab) allowedRequest(id, what, want string, op string, args ...string) {
	l.t.Helper()
	r, _ := l.probeIn(id, "", op, args...)
	if !r.OK || !strings.Contains(r.Detail, want) {
		l.t.Fatalf("%s: want %q, got %+v", what, want, r)
	}
}

// denied asserts the audit log holds a refused egress decision matching s.
func (l *netLab) denied(id, kind, s string) {
	l.t.Helper()
	waitFor(5*time.Second, func() bool { return len(l.records(audit.Query{Sandbox: id, Action: kind})) > 0 })
	l.audited("the refused "+kind+" of "+s, audit.Query{Sandbox: id, Action: kind}, func(r audit.Record) bool {
		var d map[string]any
		_ = json.Unmarshal(r.Args, &d)
		return d["allowed"] == false && bytes.Contains(r.Args, []byte(s))
	})
}

// The cloud metadata service (169.254.169.254): credentials of the
// machine's cloud role. Refused in every mode, directly or via the proxy.
func TestNetMetadataService(t *testing.T) {
	l := newNetLab(t)
	control(t, l.h, "http://"+ipMetadata+"/", "", "METADATA-SECRET")
	for _, mode := range []string{"allowlist", "open"} {
		var allow []string
		if mode == "allowlist" {
			allow = []string{"allowed.test", "meta.test"}
		}
		id := l.sandboxNet(mode, allow...)
		l.refused(id, mode+": metadata by address", "METADATA-SECRET", "http", "http://"+ipMetadata+"/", "direct")
		l.refused(id, mode+": metadata via the proxy", "METADATA-SECRET", "http", "http://"+ipMetadata+"/", "env")
		l.refused(id, mode+": metadata by a name that resolves to it", "METADATA-SECRET", "http", "http://meta.test/", "env")
		l.stillServes(id)
		l.denied(id, "net.connect", ipMetadata)
	}
}

// DNS exfiltration: data in the names queried. Names outside the policy
// get NXDOMAIN and never leave — the upstream resolver never sees them.
func TestNetDNSExfiltration(t *testing.T) {
	l := newNetLab(t)
	// Control: a query sent from H reaches the upstream resolver.
	c := &dns.Client{Timeout: 3 * time.Second, Dialer: &net.Dialer{}}
	m := new(dns.Msg)
	m.SetQuestion("control-c2VjcmV0.exfil.test.", dns.TypeA)
	must(t, l.h.Do(func() error { _, _, err := c.Exchange(m, ipResolver+":53"); return err }))
	if !l.resolver.asked("control-c2vjcmv0") {
		t.Fatal("positive control: the upstream resolver did not see a query from the host namespace")
	}
	id := l.sandboxNet("allowlist", "allowed.test")
	l.allowedRequest(id, "an allowed name resolves", ipAllowed, "dns", "allowed.test")
	l.refused(id, "a secret in a query name", ipAllowed, "dns", "c2VjcmV0LXBheWxvYWQ.exfil.test")
	// Straight to the upstream resolver's address: redirected to the
	// sandbox's resolver all the same.
	l.refused(id, "a query sent to another resolver", "sent-but", "udp", ipResolver+":53", "raw")
	if l.resolver.asked("c2vjcmv0lxbhewxvywq") {
		t.Fatal("the exfiltrated name reached the upstream resolver")
	}
	l.stillServes(id)
	l.denied(id, "net.dns", "exfil.test")
}

// A program that ignores HTTP_PROXY and connects directly to a name the
// policy does not allow: the kernel sends it to the proxy anyway, which
// refuses it.
func TestNetIgnoringProxyVariables(t *testing.T) {
	l := newNetLab(t)
	control(t, l.h, "http://"+ipOther+"/", "other.test", "OTHER-SERVER")
	id := l.sandboxNet("allowlist", "allowed.test")
	l.allowedRequest(id, "allowed, directly", "ALLOWED-SERVER", "http", "http://allowed.test/", "direct")
	l.refused(id, "other.test, directly", "OTHER-SERVER", "http", "http://"+ipOther+"/", "direct", "other.test")
	l.refused(id, "other.test, via the proxy", "OTHER-SERVER", "http", "http://other.test/", "env")
	l.stillServes(id)
	l.denied(id, "net.connect", ipOther)
}

// An IP literal not in the policy's allow_cidr.
func TestNetIPLiteral(t *testing.T) {
	l := newNetLab(t)
	control(t, l.h, "http://"+ipAllowed+"/", "", "ALLOWED-SERVER")
	id := l.sandboxNet("allowlist", "allowed.test")
	l.refused(id, "an IP literal", "ALLOWED-SERVER", "http", "http://"+ipAllowed+"/", "direct")
	l.refused(id, "an IP literal via the proxy", "ALLOWED-SERVER", "http", "http://"+ipAllowed+"/", "env")
	l.stillServes(id)
	l.denied(id, "net.connect", ipAllowed)
}

// apiMarker starts every answer of the API as served in H.
const apiMarker = "PADDOCK-API-REACHED"

// DNS rebinding: an allowed name whose answer is loopback or the host's
// own address. The resolver drops such answers; the proxy refuses them.
func TestNetDNSRebinding(t *testing.T) {
	l := newNetLab(t)
	// Control: upstream does answer the rebinding names with those
	// addresses, and the host's address serves (the API stand-in).
	for name, want := range map[string]string{"rebind.test.": "127.0.0.1", "rebind-host.test.": ipHostLab} {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		var in *dns.Msg
		must(t, l.h.Do(func() (err error) {
			in, _, err = (&dns.Client{Timeout: 3 * time.Second}).Exchange(m, ipResolver+":53")
			return err
		}))
		if len(in.Answer) != 1 || !strings.Contains(in.Answer[0].String(), want) {
			t.Fatalf("positive control: upstream answers %s with %v", name, in.Answer)
		}
	}
	control(t, l.o, "http://"+ipHostLab+":7070/healthz", "", apiMarker)
	id := l.sandboxNet("allowlist", "rebind.test", "rebind-host.test")
	l.refused(id, "a name rebound to loopback", apiMarker, "http", "http://rebind.test:7070/healthz", "env")
	l.refused(id, "a name rebound to the host", apiMarker, "http", "http://rebind-host.test:7070/healthz", "env")
	l.refused(id, "a name rebound to the host, directly", apiMarker, "http", "http://rebind-host.test:7070/healthz", "direct")
	l.stillServes(id)
	l.denied(id, "net.connect", "rebind")
}

// SNI and Host that disagree with the destination: TLS to other.test's
// address naming allowed.test, plain HTTP to it with Host allowed.test,
// and an allowed HTTP connection whose request names other.test (the
// proxy parses every request). Inside TLS the proxy sees only the server
// name: a Host there reaches the allowed server itself (docs/network.md,
// known limits).
func TestNetSNIHostMismatch(t *testing.T) {
	l := newNetLab(t)
	// Control: from H the servers answer whatever name is asked.
	control(t, l.h, "http://"+ipOther+"/", "allowed.test", "OTHER-SERVER")
	control(t, l.h, "https://"+ipOther+"/", "allowed.test", "OTHER-SERVER-TLS")
	id := l.sandboxNet("allowlist", "allowed.test")
	l.allowedRequest(id, "an allowed name over TLS", "ALLOWED-SERVER-TLS", "tls", ipAllowed+":443", "allowed.test", "allowed.test")
	l.refused(id, "TLS to other.test's address with SNI allowed.test", "OTHER-SERVER", "tls", ipOther+":443", "allowed.test", "allowed.test")
	l.refused(id, "HTTP to other.test's address with Host allowed.test", "OTHER-SERVER", "http", "http://"+ipOther+"/", "direct", "allowed.test")
	l.refused(id, "an allowed connection, then Host other.test", "(host other.test)", "http", "http://allowed.test/", "direct", "other.test")
	l.stillServes(id)
	l.denied(id, "net.connect", ipOther)
}

// The control plane's API from inside a sandbox, on the gateway and on the
// host's other addresses; and the proxy's own ports.
func TestNetReachServerAPI(t *testing.T) {
	l := newNetLab(t)
	control(t, l.o, "http://"+ipHostLab+":7070/healthz", "", apiMarker)
	id := l.sandboxNet("open")
	slot, ok := l.st.Attachment(id)
	if !ok {
		t.Fatal("no attachment")
	}
	gw := slot.HostV4.String()
	must(t, l.h.Do(func() error {
		c, err := net.DialTimeout("tcp", gw+":7070", 3*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}))
	for _, u := range []string{"http://" + gw + ":7070/healthz", "http://" + ipHostLab + ":7070/healthz", "http://" + gw + ":15053/"} {
		l.refused(id, "the API at "+u, apiMarker, "http", u, "direct")
		l.refused(id, "the API at "+u+" via the proxy", apiMarker, "http", u, "env")
	}
	l.stillServes(id)
	l.denied(id, "net.connect", gw)
}

// Another sandbox's server, by its address.
func TestNetReachOtherSandbox(t *testing.T) {
	l := newNetLab(t)
	a := l.sandboxNet("open")
	b := l.sandboxNet("open")
	sb, _ := l.st.Attachment(b)
	if _, err := l.Client.StartProcess(ctxT(t, time.Minute), b, client.ProcessRequest{Cmd: []string{probePath, "listen", ":8080"}}); err != nil {
		t.Fatal(err)
	}
	target := "http://" + sb.SbV4.String() + ":8080/"
	// Control: from H (outside any sandbox) B's server answers.
	ok := waitFor(10*time.Second, func() bool {
		body, err := get(l.h, target, "")
		return err == nil && strings.Contains(body, "hello from probe")
	})
	if !ok {
		t.Fatalf("positive control: sandbox B's server at %s does not answer from the host namespace", target)
	}
	l.refused(a, "another sandbox, directly", "hello from probe", "http", target, "direct")
	l.refused(a, "another sandbox, via the proxy", "hello from probe", "http", target, "env")
	l.stillServes(a, b)
	l.denied(a, "net.connect", sb.SbV4.String())
}

// Raw and packet sockets (spoofing, sniffing, bypassing the proxy), and UDP
// other than DNS: refused or dropped.
func TestNetRawSocketsAndUDP(t *testing.T) {
	l := newNetLab(t)
	for _, op := range []string{"rawsock", "rawip"} {
		if n := native(t, op); !n.OK {
			t.Fatalf("positive control: %s natively: %+v", op, n)
		}
	}
	// Control: a datagram from H arrives.
	must(t, l.h.Do(func() error {
		c, err := net.Dial("udp", ipAllowed+":9999")
		if err == nil {
			_, err = c.Write([]byte("control-datagram"))
			c.Close()
		}
		return err
	}))
	if !waitFor(5*time.Second, func() bool { return l.udp.received("control-datagram") }) {
		t.Fatal("positive control: the datagram from the host namespace did not arrive")
	}
	id := l.sandboxNet("open")
	// AF_PACKET is outside the seccomp socket-family allowlist
	// (EAFNOSUPPORT); a raw ICMP socket needs CAP_NET_RAW (EPERM).
	for op, want := range map[string]string{"rawsock": "EAFNOSUPPORT", "rawip": "EPERM"} {
		if r, _ := l.probeIn(id, "", op); r.OK || r.Errno != want {
			t.Fatalf("sandboxed %s: want %s, got %+v", op, want, r)
		}
	}
	l.probeIn(id, "", "udp", ipAllowed+":9999", "sandbox-datagram")
	time.Sleep(500 * time.Millisecond)
	if l.udp.received("sandbox-datagram") {
		t.Fatal("a UDP datagram from the sandbox reached the outside")
	}
	l.stillServes(id)
	l.execAudited(id, "rawsock")
}
