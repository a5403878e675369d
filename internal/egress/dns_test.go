package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

// fakeWriter captures the answer of serveDNS.
type fakeWriter struct {
	remote net.Addr
	got    *dns.Msg
}

func (w *fakeWriter) LocalAddr() net.Addr       { return &net.UDPAddr{IP: net.IPv4(10, 201, 0, 1), Port: 53} }
func (w *fakeWriter) RemoteAddr() net.Addr      { return w.remote }
func (w *fakeWriter) WriteMsg(m *dns.Msg) error { w.got = m; return nil }
func (w *fakeWriter) Write([]byte) (int, error) { return 0, errors.New("unused") }
func (w *fakeWriter) Close() error              { return nil }
func (w *fakeWriter) TsigStatus() error         { return nil }
func (w *fakeWriter) TsigTimersOnly(bool)       {}
func (w *fakeWriter) Hijack()                   {}

// upstream is a fake upstream resolver reached through Options.Dial: it
// records every name it is asked about.
type upstream struct {
	mu     sync.Mutex
	asked  []string
	answer map[string]string
}

func (u *upstream) dial(ctx context.Context, network, address string) (net.Conn, error) {
	c, s := net.Pipe()
	go func() {
		defer s.Close()
		dc := &dns.Conn{Conn: s}
		if network == "udp" {
			// net.Pipe is a stream: dns.Conn frames it only for TCP.
			dc = &dns.Conn{Conn: udpish{s}}
		}
		q, err := dc.ReadMsg()
		if err != nil {
			return
		}
		u.mu.Lock()
		u.asked = append(u.asked, q.Question[0].Name)
		u.mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(q)
		if ip, ok := u.answer[q.Question[0].Name]; ok && q.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA,
				Class: dns.ClassINET, Ttl: 30}, A: net.ParseIP(ip)})
		} else if !ok {
			m.Rcode = dns.RcodeNameError
		}
		_ = dc.WriteMsg(m)
	}()
	if network == "udp" {
		return udpish{c}, nil
	}
	return c, nil
}

// udpish makes a pipe look like a packet connection to miekg/dns.
type udpish struct{ net.Conn }

func (udpish) RemoteAddr() net.Addr { return &net.UDPAddr{IP: net.IPv4(192, 0, 2, 53), Port: 53} }
func (udpish) LocalAddr() net.Addr  { return &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 5353} }

func newTestServer(t *testing.T, u *upstream, mode string, allow ...string) *Server {
	t.Helper()
	s, err := New(Options{Guard: policy.NewGuard(nil, []netip.Prefix{netip.MustParsePrefix("10.201.0.0/16")}),
		Dial: u.dial, Upstreams: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.53:53")},
		Static: map[string][]netip.Addr{"git.internal": {netip.MustParseAddr("8.8.4.4")}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Compile(mode, allow, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Set("sb-1", "", []netip.Addr{netip.MustParseAddr("10.201.0.2")}, p)
	return s
}

func query(s *Server, from string, name string, qt uint16) *dns.Msg {
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qt)
	w := &fakeWriter{remote: &net.UDPAddr{IP: net.ParseIP(from), Port: 40000}}
	s.serveDNS(w, q)
	return w.got
}

func TestResolverAnswersOnlyAllowedNames(t *testing.T) {
	u := &upstream{answer: map[string]string{"ok.example.": "93.184.216.34", "rebind.example.": "127.0.0.1",
		"meta.example.": "169.254.169.254"}}
	s := newTestServer(t, u, "allowlist", "ok.example", "rebind.example", "meta.example", "git.internal", "*.wild.example")
	for _, tc := range []struct {
		name  string
		qt    uint16
		rcode int
		ans   string // "" none
	}{
		{"ok.example", dns.TypeA, dns.RcodeSuccess, "93.184.216.34"},
		{"OK.Example", dns.TypeA, dns.RcodeSuccess, "93.184.216.34"},
		{"git.internal", dns.TypeA, dns.RcodeSuccess, "8.8.4.4"},
		{"rebind.example", dns.TypeA, dns.RcodeSuccess, ""}, // answer dropped
		{"meta.example", dns.TypeA, dns.RcodeSuccess, ""},
		{"ok.example", dns.TypeHTTPS, dns.RcodeSuccess, ""},
		{"secret-1234.evil.example", dns.TypeA, dns.RcodeNameError, ""},
		{"secret-5678.evil.example", dns.TypeTXT, dns.RcodeNameError, ""},
		{"a.wild.example", dns.TypeA, dns.RcodeNameError, ""}, // allowed, and upstream says NXDOMAIN
		{"ok.example", dns.TypeANY, dns.RcodeRefused, ""},
	} {
		m := query(s, "10.201.0.2", tc.name, tc.qt)
		if m == nil || m.Rcode != tc.rcode {
			t.Errorf("%s/%s: %v, want rcode %s", tc.name, dns.TypeToString[tc.qt], m, dns.RcodeToString[tc.rcode])
			continue
		}
		got := ""
		for _, rr := range m.Answer {
			if a, ok := rr.(*dns.A); ok {
				got = a.A.String()
			}
		}
		if got != tc.ans {
			t.Errorf("%s: answer %q, want %q", tc.name, got, tc.ans)
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, n := range u.asked {
		if n == "secret-1234.evil.example." || n == "secret-5678.evil.example." {
			t.Errorf("a disallowed name was sent upstream: %s", n)
		}
	}
	if len(u.asked) == 0 {
		t.Error("positive control: allowed names never reached the upstream")
	}
	// The sandbox's answers are remembered for the transparent proxy;
	// refused ones are not.
	if !s.byID["sb-1"].answers.has("ok.example", netip.MustParseAddr("93.184.216.34"), time.Now()) {
		t.Error("the answer was not remembered")
	}
	if len(s.byID["sb-1"].answers.names(netip.MustParseAddr("127.0.0.1"), time.Now())) != 0 {
		t.Error("a refused answer was remembered")
	}
}

func TestResolverRefusesStrangers(t *testing.T) {
	u := &upstream{answer: map[string]string{"ok.example.": "93.184.216.34"}}
	s := newTestServer(t, u, "open")
	if m := query(s, "10.201.0.6", "ok.example", dns.TypeA); m == nil || m.Rcode != dns.RcodeRefused {
		t.Errorf("query from an unknown source: %v", m)
	}
	if m := query(s, "10.201.0.2", "anything.example", dns.TypeA); m == nil || m.Rcode != dns.RcodeNameError {
		t.Errorf("open mode forwards any name: %v", m)
	}
	if len(u.asked) != 1 {
		t.Errorf("upstream asked %q", u.asked)
	}
	s.Remove("sb-1")
	if m := query(s, "10.201.0.2", "ok.example", dns.TypeA); m == nil || m.Rcode != dns.RcodeRefused {
		t.Errorf("query from a removed sandbox: %v", m)
	}
}

func TestAnswerCacheBounded(t *testing.T) {
	c := answerCache{max: 100}
	now := time.Now()
	for i := 0; i < 1000; i++ {
		c.add("n"+string(rune('a'+i%26))+".example", netip.AddrFrom4([4]byte{1, 2, byte(i >> 8), byte(i)}), time.Minute, now)
	}
	if c.n > 100 {
		t.Fatalf("cache holds %d entries, bound 100", c.n)
	}
	c.add("x.example", netip.MustParseAddr("9.9.9.9"), 0, now)
	if !c.has("x.example", netip.MustParseAddr("9.9.9.9"), now.Add(answerMinTTL-time.Second)) ||
		c.has("x.example", netip.MustParseAddr("9.9.9.9"), now.Add(answerMinTTL+time.Second)) {
		t.Error("entries must live answerMinTTL")
	}
}

func TestLimiter(t *testing.T) {
	l := limiter{rate: 1, burst: 3}
	now := time.Now()
	var ok int
	for i := 0; i < 10; i++ {
		if y, _ := l.take(now); y {
			ok++
		}
	}
	if ok != 3 {
		t.Fatalf("burst allowed %d, want 3", ok)
	}
	y, suppressed := l.take(now.Add(2 * time.Second))
	if !y || suppressed != 7 {
		t.Fatalf("after refill: %v %d, want true 7", y, suppressed)
	}
}

// A server closed right after Serve stops its resolvers: a Shutdown that
// reached miekg/dns before its server had started was refused, and Close
// then waited forever for a resolver that served on.
func TestServeThenCloseAtOnce(t *testing.T) {
	for range 50 {
		s := newTestServer(t, &upstream{}, "allowlist", "example.com")
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Serve(nil, []net.PacketConn{pc}, []net.Listener{ln}); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not return: a resolver kept serving")
		}
	}
}
