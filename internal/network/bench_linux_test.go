//go:build linux

package network_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Benchmarks (numbers in docs/network.md):
//
//	go test -run XXX -bench . -benchtime 200x ./internal/network/
//
// Latencies are reported as p50-ms/p99-ms of the b.N iterations.

func reportLatency(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	if len(d) == 0 {
		return
	}
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	b.ReportMetric(ms(d[len(d)/2]), "p50-ms")
	b.ReportMetric(ms(d[len(d)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCreate compares sandbox creation with and without a network
// (veth pair, addresses, routes, the attachment's row).
func BenchmarkCreate(b *testing.B) {
	testenv.RequireRoot(b)
	l := newLab(b)
	st, _ := newStack(b, l, nil)
	ph := &phaseLog{}
	e := testenv.New(b, testenv.Options{Network: st, Audit: testenv.AuditOptions{Disable: true}, Log: slog.New(ph)})
	for _, tc := range []struct {
		name string
		net  *sandbox.Network
	}{
		{"none", nil},
		{"allowlist", &sandbox.Network{Mode: "allowlist", Allow: []string{"allowed.test"}}},
		{"none-again", nil}, // the machine's drift between the two
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			var d []time.Duration
			ph.reset()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				sb, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Network: tc.net})
				d = append(d, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = e.Manager.Delete(ctx, e.Scope, sb.ID)
				time.Sleep(50 * time.Millisecond) // let the asynchronous teardown (netns, veth) finish
				b.StartTimer()
			}
			reportLatency(b, d)
			if net := ph.network(); len(net) > 0 {
				sort.Slice(net, func(i, j int) bool { return net[i] < net[j] })
				b.ReportMetric(float64(net[len(net)/2].Microseconds())/1000, "network-p50-ms")
			}
		})
	}
}

// phaseLog collects the backend's "network=" create phase (debug log).
type phaseLog struct {
	mu  sync.Mutex
	net []time.Duration
}

func (p *phaseLog) Enabled(_ context.Context, l slog.Level) bool { return true }
func (p *phaseLog) WithAttrs([]slog.Attr) slog.Handler           { return p }
func (p *phaseLog) WithGroup(string) slog.Handler                { return p }
func (p *phaseLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "phases" {
			return true
		}
		for _, f := range strings.Fields(a.Value.String()) {
			if v, ok := strings.CutPrefix(f, "network="); ok {
				if d, err := time.ParseDuration(v); err == nil {
					p.mu.Lock()
					p.net = append(p.net, d)
					p.mu.Unlock()
				}
			}
		}
		return true
	})
	return nil
}

func (p *phaseLog) reset() {
	p.mu.Lock()
	p.net = nil
	p.mu.Unlock()
}

func (p *phaseLog) network() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.net...)
}

// BenchmarkAttach is the network's share of a create on its own.
func BenchmarkAttach(b *testing.B) {
	testenv.RequireRoot(b)
	l := newLab(b)
	st, _ := newStack(b, l, nil)
	var d []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ns := newNetNS(b)
		pid, release := parkIn(b, ns)
		b.StartTimer()
		t0 := time.Now()
		_, err := st.Attach(context.Background(), "sb-benchbenchbenchbenchbench", pid, allowlist)
		d = append(d, time.Since(t0))
		b.StopTimer()
		release()
		if err != nil {
			b.Fatal(err)
		}
		_ = st.Detach(context.Background(), "sb-benchbenchbenchbenchbench")
		b.StartTimer()
	}
	reportLatency(b, d)
}

// BenchmarkRequest compares one HTTP request through the proxy with the
// same request made directly from the host side.
func BenchmarkRequest(b *testing.B) {
	testenv.RequireRoot(b)
	l := newLab(b)
	st, _ := newStack(b, l, nil)
	sb, _ := attachFake(b, st, "sb-rrrrrrrrrrrrrrrrrrrrrrrrrr", allowlist)
	if _, err := sb.resolve("allowed.test", dns.TypeA); err != nil {
		b.Fatal(err)
	}
	direct := func(keep bool) *http.Client {
		return &http.Client{Transport: &http.Transport{DisableKeepAlives: !keep,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return l.host.dial(network, "203.0.113.10:80", 3*time.Second)
			}}}
	}
	sandboxed := func(keep, proxy bool) *http.Client {
		c := sb.client(b, nil, proxy)
		c.Transport.(*http.Transport).DisableKeepAlives = !keep
		return c
	}
	for _, tc := range []struct {
		name string
		c    *http.Client
	}{
		{"direct/keepalive", direct(true)},
		{"transparent/keepalive", sandboxed(true, false)},
		{"explicit/keepalive", sandboxed(true, true)},
		{"direct/newconn", direct(false)},
		{"transparent/newconn", sandboxed(false, false)},
		{"explicit/newconn", sandboxed(false, true)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var d []time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				resp, err := tc.c.Get("http://allowed.test/")
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d = append(d, time.Since(t0))
			}
			reportLatency(b, d)
		})
	}
}

// BenchmarkThroughput moves bytes through one proxied connection (the
// transparent path, spliced by the kernel) and, for comparison, directly.
func BenchmarkThroughput(b *testing.B) {
	testenv.RequireRoot(b)
	l := newLab(b)
	st, _ := newStack(b, l, nil)
	sb, _ := attachFake(b, st, "sb-tttttttttttttttttttttttttt", allowlist)
	if _, err := sb.resolve("allowed.test", dns.TypeA); err != nil {
		b.Fatal(err)
	}
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	for _, tc := range []struct {
		name string
		ns   *netNS
		port string
	}{
		{"upload/proxied", sb.ns, "9"},
		{"download/proxied", sb.ns, "19"},
		{"upload/direct", l.host, "9"},
		{"download/direct", l.host, "19"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := tc.ns.dial("tcp", "203.0.113.10:"+tc.port, 3*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(chunk)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if tc.port == "9" {
					_, err = c.Write(buf)
				} else {
					_, err = io.ReadFull(c, buf)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// parkIn parks a thread inside ns and returns its id (Attach finds a
// sandbox's namespace through /proc/PID/ns/net).
func parkIn(tb testing.TB, ns *netNS) (int, func()) {
	tid := make(chan int)
	release := make(chan struct{})
	go func() {
		_ = ns.Do(func() error {
			tid <- gettid()
			<-release
			return nil
		})
	}()
	return <-tid, func() { close(release) }
}
