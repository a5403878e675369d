//go:build linux

package network_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/miekg/dns"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fakeSandbox is a network namespace attached like a sandbox's, without
// the rest of a sandbox: fast, for the kernel-level tests and benchmarks.
type fakeSandbox struct {
	ns   *netNS
	id   string
	slot network.Slot
}

// attachFake attaches a fresh namespace as sandbox id. Attach finds a
// sandbox's namespace through its pid: a thread parked inside the new
// namespace provides one while Attach runs.
func attachFake(t testing.TB, st *network.Stack, id string, p runtime.NetPolicy) (*fakeSandbox, runtime.NetSetup) {
	t.Helper()
	ns := newNetNS(t)
	pid, release := parkIn(t, ns)
	setup, err := st.Attach(context.Background(), id, pid, p)
	release()
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	slot, _ := st.Attachment(id)
	t.Cleanup(func() { _ = st.Detach(context.Background(), id) })
	return &fakeSandbox{ns: ns, id: id, slot: slot}, setup
}

func gettid() int { return unix.Gettid() }

// resolve asks the sandbox's resolver (as its resolv.conf says).
func (f *fakeSandbox) resolve(name string, qtype uint16) (*dns.Msg, error) {
	var m *dns.Msg
	err := f.ns.Do(func() error {
		q := new(dns.Msg)
		q.SetQuestion(dns.Fqdn(name), qtype)
		c := &dns.Client{Timeout: 3 * time.Second}
		var err error
		m, _, err = c.Exchange(q, net.JoinHostPort(f.slot.HostV4.String(), "53"))
		return err
	})
	return m, err
}

func newStack(t testing.TB, l *lab, mod func(*network.Options)) (*network.Stack, *decisions) {
	t.Helper()
	db, err := store.Open(t.TempDir(), network.Migrations...)
	must(t, err)
	t.Cleanup(func() { db.Close() })
	o := l.stackOptions(db)
	if mod != nil {
		mod(&o)
	}
	st, err := network.New(context.Background(), o)
	if err != nil {
		t.Fatalf("network stack: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	d := &decisions{}
	st.Egress().SetSink(d)
	return st, d
}

// decisions collects what the proxy reported.
type decisions struct {
	mu  sync.Mutex
	all []egress.Decision
}

func (d *decisions) Decision(_ context.Context, x egress.Decision) {
	d.mu.Lock()
	d.all = append(d.all, x)
	d.mu.Unlock()
}

func (d *decisions) snapshot() []egress.Decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]egress.Decision(nil), d.all...)
}

// find waits (bounded) for a decision matching pred: allowed connections
// are reported when they close.
func (d *decisions) find(t testing.TB, pred func(egress.Decision) bool) egress.Decision {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		d.mu.Lock()
		for _, x := range d.all {
			if pred(x) {
				d.mu.Unlock()
				return x
			}
		}
		d.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t.Fatalf("no matching decision among %+v", d.all)
	return egress.Decision{}
}

var allowlist = runtime.NetPolicy{Mode: "allowlist", Allow: []string{"allowed.test", "static.test", "rebind.test", "rebind-static.test"}}

// TestKernelRules checks the host side's rules from a namespace attached
// like a sandbox's, where the test (root) can do what a sandbox cannot:
// take another sandbox's address.
func TestKernelRules(t *testing.T) {
	testenv.RequireRoot(t)
	l := newLab(t)
	st, dec := newStack(t, l, nil)
	a, setup := attachFake(t, st, "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", allowlist)
	b, _ := attachFake(t, st, "sb-bbbbbbbbbbbbbbbbbbbbbbbbbb", allowlist)
	if !strings.Contains(setup.ResolvConf, "nameserver "+a.slot.HostV4.String()) || setup.Env["HTTPS_PROXY"] == "" {
		t.Fatalf("setup = %+v", setup)
	}
	if m, err := a.resolve("allowed.test", dns.TypeA); err != nil || len(m.Answer) != 1 {
		t.Fatalf("resolve allowed.test: %v %v", m, err)
	}
	get := func(src netip.Addr) error {
		return a.ns.Do(func() error {
			d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: src.AsSlice()}}
			c, err := d.Dial("tcp", "203.0.113.10:80")
			if err != nil {
				return err
			}
			defer c.Close()
			io.WriteString(c, "GET / HTTP/1.0\r\nHost: allowed.test\r\n\r\n")
			body, err := io.ReadAll(c)
			if !strings.Contains(string(body), "hello from allowed.test") {
				return fmt.Errorf("no answer: %q %v", body, err)
			}
			return nil
		})
	}
	// Positive control: from its own address, a's request passes.
	if err := get(a.slot.SbV4); err != nil {
		t.Fatalf("positive control: %v", err)
	}
	// Speaking as b (root inside the namespace could add b's address):
	// the host drops it before the proxy could take it for b's traffic.
	ah := a.ns.Handle()
	eth, err := ah.LinkByName("eth0")
	must(t, err)
	addAddr(t, ah, eth, b.slot.SbV4.String()+"/32")
	if err := get(b.slot.SbV4); err == nil {
		t.Error("a connection with another sandbox's source address got through")
	}
	for _, d := range dec.snapshot() {
		if d.Sandbox == b.id {
			t.Errorf("the proxy attributed traffic to b: %+v", d)
		}
	}
	// Not TCP, not DNS: rejected fast at the host (ICMP port unreachable).
	err = a.ns.Do(func() error {
		c, err := net.Dial("udp4", net.JoinHostPort(a.slot.HostV4.String(), "9999"))
		if err != nil {
			return err
		}
		defer c.Close()
		c.Write([]byte("x"))
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		_, err = c.Read(make([]byte, 1))
		return err
	})
	if !errors.Is(err, unix.ECONNREFUSED) {
		t.Errorf("UDP to the host: %v, want connection refused", err)
	}
	// DNS over TCP works too, through the same rules.
	err = a.ns.Do(func() error {
		c := &dns.Client{Net: "tcp", Timeout: 3 * time.Second}
		q := new(dns.Msg)
		q.SetQuestion("allowed.test.", dns.TypeA)
		m, _, err := c.Exchange(q, "192.0.2.1:53") // any server: redirected
		if err == nil && len(m.Answer) != 1 {
			err = fmt.Errorf("answer %v", m)
		}
		return err
	})
	if err != nil {
		t.Errorf("DNS over TCP: %v", err)
	}
}

// client is an HTTP client inside the fake sandbox: names resolve through
// its resolver; with proxy, requests go through the explicit proxy.
func (f *fakeSandbox) client(t testing.TB, roots *x509.CertPool, proxy bool) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(addr)
		if _, err := netip.ParseAddr(host); err != nil {
			m, err := f.resolve(host, dns.TypeA)
			if err != nil || len(m.Answer) == 0 {
				return nil, fmt.Errorf("resolve %s: %v", host, err)
			}
			host = m.Answer[0].(*dns.A).A.String()
		}
		return f.ns.dial(network, net.JoinHostPort(host, port), 5*time.Second)
	}
	tr := &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConnsPerHost: 4}
	if proxy {
		u, _ := url.Parse("http://" + net.JoinHostPort(f.slot.HostV4.String(), "15001"))
		tr.Proxy = http.ProxyURL(u)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func get(c *http.Client, u string) (string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return string(b), fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), err
}

// injector is an Interceptor like secret injection's: it terminates TLS
// for one name with its own CA and adds a header upstream.
type injector struct {
	name     string
	cert     tls.Certificate
	upstream *x509.CertPool
	calls    atomic.Int64
}

func (i *injector) Intercept(ctx context.Context, c egress.ConnInfo) (*egress.Plan, error) {
	i.calls.Add(1)
	if c.Name != i.name {
		return nil, nil
	}
	return &egress.Plan{
		ServerTLS:   &tls.Config{Certificates: []tls.Certificate{i.cert}},
		UpstreamTLS: &tls.Config{RootCAs: i.upstream},
		Request: func(r *http.Request) error {
			r.Header.Set("X-Injected", "secret-from-the-control-plane")
			return nil
		},
	}, nil
}

func TestInterceptorExtensionPoint(t *testing.T) {
	testenv.RequireRoot(t)
	l := newLab(t)
	st, dec := newStack(t, l, nil)
	cert, sandboxRoots := selfSigned(t, "allowed.test")
	inj := &injector{name: "allowed.test", cert: cert, upstream: l.certPool}
	st.Egress().SetInterceptor(inj)
	sb, _ := attachFake(t, st, "sb-iiiiiiiiiiiiiiiiiiiiiiiiii", runtime.NetPolicy{Mode: "allowlist", Allow: []string{"allowed.test", "other.test"}})
	for _, proxy := range []bool{false, true} {
		c := sb.client(t, sandboxRoots, proxy)
		for _, u := range []string{"https://allowed.test/", "http://allowed.test/"} {
			body, err := get(c, u)
			if err != nil || !strings.Contains(body, "x-injected=secret-from-the-control-plane") || !strings.Contains(body, "host=allowed.test") {
				t.Errorf("proxy=%v %s: %q %v; want the injected header upstream", proxy, u, body, err)
			}
		}
		// Not intercepted: relayed untouched (the sandbox must trust the
		// real server, TLS is not terminated).
		body, err := get(sb.client(t, l.certPool, proxy), "https://other.test/")
		if err != nil || strings.Contains(body, "x-injected") || !strings.Contains(body, "hello over tls from other.test") {
			t.Errorf("proxy=%v other.test: %q %v", proxy, body, err)
		}
	}
	if inj.calls.Load() == 0 {
		t.Fatal("the interceptor was never asked")
	}
	// An intercepted connection still checks the Host of every request.
	c, err := sb.ns.dial("tcp", "203.0.113.10:80", 3*time.Second)
	must(t, err)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n")
	b, _ := io.ReadAll(c)
	c.Close()
	if strings.Contains(string(b), "other.test") || !strings.Contains(string(b), "x-injected") {
		t.Errorf("pipelined requests through an intercepted connection: %q", b)
	}
	dec.find(t, func(d egress.Decision) bool { return strings.Contains(d.Reason, "intercepted name") })
}

// TestCloseKeepsTableForAttached: a stopping server leaves its nftables
// table while sandboxes are attached (they outlive it, and without the
// table their interfaces would reach the host), and removes it when none
// is left.
func TestCloseKeepsTableForAttached(t *testing.T) {
	testenv.RequireRoot(t)
	l := newLab(t)
	hasTable := func() bool {
		c, err := nftables.New(nftables.WithNetNSFd(l.host.FD))
		must(t, err)
		tables, err := c.ListTablesOfFamily(nftables.TableFamilyINet)
		must(t, err)
		for _, tb := range tables {
			if tb.Name == "paddock" {
				return true
			}
		}
		return false
	}
	st, _ := newStack(t, l, nil)
	attachFake(t, st, "sb-cccccccccccccccccccccccccc", allowlist)
	if !hasTable() {
		t.Fatal("positive control: no table while the stack runs")
	}
	st.Close()
	if !hasTable() {
		t.Fatal("the table went with the server while a sandbox was attached")
	}
	idle, _ := newStack(t, l, nil)
	if !hasTable() {
		t.Fatal("positive control: no table while the second stack runs")
	}
	idle.Close()
	if hasTable() {
		t.Error("a stack with no sandboxes left its table behind")
	}
}
