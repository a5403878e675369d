//go:build linux

package hostile

// Group: neighbours (issue 14). One tenant takes a shared pool of the
// egress proxy (connection slots, DNS queries in flight) with several
// sandboxes; another tenant's sandbox must still be served, measured while
// the attack runs. Each case runs twice: on a lab whose proxy has only a
// shared bound (the positive control: the flood does starve the victim)
// and on one with the per-tenant bounds.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/network"
)

// flooders creates n sandboxes (allowlist allow) of a new tenant, each with the
// probe, and returns the tenant's client and the sandbox ids.
func (l *netLab) flooders(tenant string, n int, allow ...string) (*client.Client, []string) {
	l.t.Helper()
	k := l.tenantKey(tenant, client.Quotas{})
	c := l.as(k.Key)
	var ids []string
	for i := 0; i < n; i++ {
		sb, err := c.Create(ctxT(l.t, time.Minute), client.Spec{Network: &client.Network{Mode: "allowlist", Allow: allow}})
		if err != nil {
			l.t.Fatalf("create a sandbox of %s: %v", tenant, err)
		}
		_, bin := probeBinary(l.t)
		if _, err := c.WriteFile(ctxT(l.t, time.Minute), sb.ID, client.WriteRequest{Path: probePath, Mode: "0755"},
			bytes.NewReader(bin), int64(len(bin))); err != nil {
			l.t.Fatalf("upload the probe: %v", err)
		}
		ids = append(ids, sb.ID)
	}
	return c, ids
}

// during runs the probe op in every sandbox of ids at once (through c)
// and, while they run, calls victim; it returns their reports.
func during(t *testing.T, c *client.Client, ids []string, op []string, victim func()) []probeReport {
	t.Helper()
	reports := make([]probeReport, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := c.Exec(ctx, id, client.ExecRequest{Cmd: append([]string{probePath}, op...)})
			if err == nil {
				reports[i] = lastReport(res.Stdout)
			}
		}()
	}
	victim()
	wg.Wait()
	return reports
}

// lastReport is parseProbe for a goroutine (no t.Fatal): zero if unreadable.
func lastReport(out string) probeReport {
	var r probeReport
	lines := strings.Split(strings.TrimSpace(out), "\n")
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &r)
	return r
}

// victimTries runs the op in the victim's sandbox every interval for d
// and returns how many of the tries succeeded (detail containing want).
func (l *netLab) victimTries(id string, d time.Duration, want string, op ...string) (ok, tries int, worst time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		start := time.Now()
		r, _ := l.probeIn(id, "", op[0], op[1:]...)
		if took := time.Since(start); took > worst {
			worst = took
		}
		tries++
		if r.OK && strings.Contains(r.Detail, want) {
			ok++
		}
	}
	return ok, tries, worst
}

// Connection slots (issue 14 item 9): tenant A's three sandboxes keep
// idle connections to a refused address (they never send a byte, so the
// proxy waits for them to name a host) open, reconnecting as they are
// closed. Tenant B's sandbox fetches from allowed.test meanwhile.
func TestNetProxySlotsPerTenant(t *testing.T) {
	const global, perSandbox = 48, 16
	for _, tc := range []struct {
		name      string
		eo        egress.Options
		victimOK  bool
		fastClose bool // the idle connections are closed within seconds
	}{
		{name: "control: one shared bound", victimOK: false,
			eo: egress.Options{MaxConns: global, MaxConnsPerTenant: global, MaxConnsPerSandbox: perSandbox,
				FirstByteTimeout: 30 * time.Second, HeaderTimeout: 30 * time.Second}},
		{name: "per-tenant bounds", victimOK: true, fastClose: true,
			eo: egress.Options{MaxConns: global, MaxConnsPerTenant: global / 2, MaxConnsPerSandbox: perSandbox,
				FirstByteTimeout: 2 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newNetLabWith(t, func(o *network.Options) { o.Egress = tc.eo })
			control(t, l.h, "http://"+ipAllowed+"/", "allowed.test", "ALLOWED-SERVER")
			victim := l.sandboxNet("allowlist", "allowed.test")
			l.allowedRequest(victim, "before the flood", "ALLOWED-SERVER", "http", "http://allowed.test/", "direct")
			c, ids := l.flooders("flooder", 3, "allowed.test")
			var ok, tries int
			var worst time.Duration
			reports := during(t, c, ids, []string{"hold", ipOther + ":80", fmt.Sprint(perSandbox + 4), "12"}, func() {
				time.Sleep(3 * time.Second) // the flood is established
				ok, tries, worst = l.victimTries(victim, 6*time.Second, "ALLOWED-SERVER", "http", "http://allowed.test/", "direct")
			})
			conns, _ := l.st.Egress().Use()
			t.Logf("flood: %+v; proxy now holds %d connections; tenant B: %d of %d fetches served, slowest %v", reports, conns.Total, ok, tries, worst)
			if tc.victimOK && ok != tries {
				t.Fatalf("tenant B was starved: %d of %d fetches served during tenant A's flood", ok, tries)
			}
			if !tc.victimOK && ok == tries {
				t.Fatalf("positive control: with one shared bound, tenant A's flood did not starve tenant B (%d of %d served)", ok, tries)
			}
			// Idle connections before a destination is chosen: the old
			// proxy held them for its header timeout, the new one closes
			// them after FirstByteTimeout.
			r, _ := l.probeIn(victim, "", "hold", ipOther+":80", "4", "6")
			var closed, median int
			fmt.Sscanf(r.Detail, "closed=%d median_ms=%d", &closed, &median)
			t.Logf("4 idle connections for 6 s: %+v", r)
			if tc.fastClose && (closed < 4 || median < 1500 || median > 4000) {
				t.Fatalf("idle connections were not closed after the first-byte timeout (2 s): %+v", r)
			}
			if !tc.fastClose && closed != 0 {
				t.Fatalf("positive control: the old proxy closed idle connections within 6 s: %+v", r)
			}
			l.stillServes(victim)
			l.allowedRequest(victim, "after the flood", "ALLOWED-SERVER", "http", "http://allowed.test/", "direct")
			if tc.victimOK {
				l.audited("the refused connections of tenant A", audit.Query{Action: "net.connect"}, func(r audit.Record) bool {
					return bytes.Contains(r.Args, []byte("per-tenant limit"))
				})
			}
		})
	}
}

const ipSlowResolver = "203.0.113.54"

// startSlowResolver serves DNS in O at ipSlowResolver: names starting
// with "slow" are answered after 3 s, others at once (allowed.test's
// address).
func startSlowResolver(t *testing.T, l *netLab) {
	t.Helper()
	lo, err := l.o.Handle().LinkByName("lo")
	must(t, err)
	addAddrs(t, l.o.Handle(), lo, ipSlowResolver+"/32")
	h := dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		if len(q.Question) == 1 {
			if strings.HasPrefix(q.Question[0].Name, "slow") {
				time.Sleep(3 * time.Second)
			}
			if q.Question[0].Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA,
					Class: dns.ClassINET, Ttl: 1}, A: net.ParseIP(ipAllowed)})
			}
		}
		_ = w.WriteMsg(m)
	})
	var pc net.PacketConn
	must(t, l.o.Do(func() (err error) { pc, err = net.ListenPacket("udp4", ipSlowResolver+":53"); return err }))
	srv := &dns.Server{PacketConn: pc, Handler: h}
	go srv.ActivateAndServe()
	t.Cleanup(func() { _ = srv.Shutdown() })
}

// DNS in flight (issue 14 item 11): tenant A's three sandboxes keep
// lookups of ever new slow names in flight; tenant B's sandbox resolves
// names meanwhile.
func TestNetDNSInFlightPerTenant(t *testing.T) {
	for _, tc := range []struct {
		name     string
		eo       egress.Options
		victimOK bool
	}{
		{name: "control: one shared bound", victimOK: false,
			eo: egress.Options{MaxDNSInFlight: 24, MaxDNSInFlightPerTenant: 24, MaxDNSInFlightPerSandbox: 24}},
		{name: "per-tenant bounds", victimOK: true,
			eo: egress.Options{MaxDNSInFlight: 24, MaxDNSInFlightPerTenant: 8, MaxDNSInFlightPerSandbox: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newNetLabWith(t, func(o *network.Options) {
				o.Egress = tc.eo
				o.Upstreams = []netip.AddrPort{netip.MustParseAddrPort(ipSlowResolver + ":53")}
			})
			startSlowResolver(t, l)
			// Control: from H, the slow names are slow and the others not.
			c := &dns.Client{Timeout: 5 * time.Second}
			m := new(dns.Msg)
			m.SetQuestion("fast-control.test.", dns.TypeA)
			var in *dns.Msg
			must(t, l.h.Do(func() (err error) { in, _, err = c.Exchange(m, ipSlowResolver+":53"); return err }))
			if len(in.Answer) != 1 {
				t.Fatalf("positive control: the resolver does not answer: %v", in)
			}
			victim := l.sandboxNet("allowlist", "*.victim.test")
			l.allowedRequest(victim, "before the flood", ipAllowed, "dns", "fast-before.victim.test")
			fc, ids := l.flooders("dnsflooder", 3, "*.flood.test")
			var ok, tries int
			var worst time.Duration
			reports := during(t, fc, ids, []string{"dnsflood", "slow", "flood.test", "16", "12"}, func() {
				time.Sleep(2 * time.Second)
				n := 0
				for end := time.Now().Add(6 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
					n++
					start := time.Now()
					r, _ := l.probeIn(victim, "", "dns", fmt.Sprintf("fast-%d.victim.test", n))
					if took := time.Since(start); took > worst {
						worst = took
					}
					tries++
					if r.OK && strings.Contains(r.Detail, ipAllowed) {
						ok++
					}
				}
			})
			_, inflight := l.st.Egress().Use()
			t.Logf("flood: %+v; queries in flight now %d; tenant B: %d of %d lookups answered, slowest %v", reports, inflight.Total, ok, tries, worst)
			if tc.victimOK && ok != tries {
				t.Fatalf("tenant B's resolution was starved: %d of %d answered during tenant A's flood", ok, tries)
			}
			if !tc.victimOK && ok == tries {
				t.Fatalf("positive control: with one shared bound, tenant A's flood did not starve tenant B (%d of %d answered)", ok, tries)
			}
			l.stillServes(victim)
			l.allowedRequest(victim, "after the flood", ipAllowed, "dns", "fast-after.victim.test")
			if tc.victimOK {
				l.audited("the refused queries of tenant A", audit.Query{Action: "net.dns"}, func(r audit.Record) bool {
					return bytes.Contains(r.Args, []byte("DNS queries in flight"))
				})
			}
		})
	}
}
