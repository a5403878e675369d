package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

// slowUpstream answers names starting with "slow" only once gate is
// closed (or its exchange times out), others at once.
func slowUpstream(gate <-chan struct{}) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, s := net.Pipe()
		go func() {
			defer s.Close()
			dc := &dns.Conn{Conn: s}
			if network == "udp" {
				dc = &dns.Conn{Conn: udpish{s}}
			}
			q, err := dc.ReadMsg()
			if err != nil {
				return
			}
			if strings.HasPrefix(q.Question[0].Name, "slow") {
				select {
				case <-gate:
				case <-time.After(10 * time.Second):
				}
			}
			m := new(dns.Msg)
			m.SetReply(q)
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA,
				Class: dns.ClassINET, Ttl: 30}, A: net.ParseIP("93.184.216.34")})
			_ = dc.WriteMsg(m)
		}()
		if network == "udp" {
			return udpish{c}, nil
		}
		return c, nil
	}
}

// One tenant's sandboxes ask for slow names until they hold all they may;
// the other tenant's query must still be answered. The control is the old
// server: one shared bound, which the first tenant fills.
func TestDNSInFlightPerTenant(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perTenant int
		victimOK  bool
	}{
		{name: "control: one shared bound", perTenant: 32, victimOK: false},
		{name: "per-tenant bound", perTenant: 8, victimOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			s, err := New(Options{Guard: policy.NewGuard(nil, []netip.Prefix{netip.MustParsePrefix("10.201.0.0/16")}),
				Dial: slowUpstream(gate), Upstreams: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.53:53")},
				MaxDNSInFlight: 32, MaxDNSInFlightPerTenant: tc.perTenant, MaxDNSInFlightPerSandbox: 32})
			if err != nil {
				t.Fatal(err)
			}
			open, _ := policy.Compile(policy.ModeOpen, nil, nil)
			for i := 0; i < 4; i++ {
				s.Set(fmt.Sprintf("a%d", i), "a", []netip.Addr{netip.AddrFrom4([4]byte{10, 201, 0, byte(4*i + 2)})}, open)
			}
			s.Set("b0", "b", []netip.Addr{netip.MustParseAddr("10.201.0.66")}, open)
			var wg sync.WaitGroup
			for i := 0; i < 4*16; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					query(s, fmt.Sprintf("10.201.0.%d", 4*(i%4)+2), fmt.Sprintf("slow%d.example", i), dns.TypeA)
				}()
			}
			defer func() { close(gate); wg.Wait() }()
			held := 0
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, d := s.Use(); d.ByTenant["tenant:a"] >= tc.perTenant {
					held = d.ByTenant["tenant:a"]
					break
				}
			}
			if held < tc.perTenant {
				t.Fatalf("the attacking tenant never held its %d queries", tc.perTenant)
			}
			start := time.Now()
			m := query(s, "10.201.0.66", "fast.example", dns.TypeA)
			took := time.Since(start)
			ok := m != nil && m.Rcode == dns.RcodeSuccess && len(m.Answer) == 1
			t.Logf("tenant a holds %d queries; tenant b's query: ok=%v in %v", held, ok, took)
			if ok != tc.victimOK {
				t.Fatalf("tenant b's query answered: %v, want %v (%v)", ok, tc.victimOK, m)
			}
		})
	}
}
