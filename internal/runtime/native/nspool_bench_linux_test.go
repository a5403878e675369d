//go:build linux

package native_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

// benchNSPool interleaves create→exec→delete (a tight loop: each delete's
// kernel teardown overlaps the next create) with the prepared network
// namespaces in use and without them, in rounds of 10, and reports each
// side's p50 and their ratio: load from elsewhere falls on both alike.
func benchNSPool(b *testing.B, spec client.Spec, o testenv.Options) {
	e := testenv.New(b, o)
	ctx := context.Background()
	req := client.ExecRequest{Cmd: []string{"/bin/true"}}
	one := func() time.Duration {
		t0 := time.Now()
		sb, err := e.Client.Create(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		if res, err := e.Client.Exec(ctx, sb.ID, req); err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
		if err := e.Client.Delete(ctx, sb.ID); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var with, without []time.Duration
	for b.Loop() {
		e.Backend.SetNSPools(true)
		time.Sleep(20 * time.Millisecond) // untimed: let the pools refill after the other side's round
		for range 10 {
			with = append(with, one())
		}
		e.Backend.SetNSPools(false)
		for range 10 {
			without = append(without, one())
		}
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	w, wo := p50(with), p50(without)
	b.ReportMetric(w, "pooled-p50-ms")
	b.ReportMetric(wo, "unpooled-p50-ms")
	b.ReportMetric(w/wo, "pooled/unpooled")
}

// BenchmarkNSPoolNone: network none (loopback-only namespaces).
func BenchmarkNSPoolNone(b *testing.B) { benchNSPool(b, client.Spec{}, testenv.Options{}) }

// BenchmarkNSPoolAllowlist: an allowlist network (namespaces holding a
// sandbox interface), the host side in a namespace of the test's own.
func BenchmarkNSPoolAllowlist(b *testing.B) {
	ns := netlab.New(b)
	benchNSPool(b, client.Spec{Network: &client.Network{Mode: "allowlist", Allow: []string{"example.com"}}},
		testenv.Options{NetworkConfig: &server.NetworkConfig{HostNS: ns.Path(), PoolV6: "none", Upstreams: []netip.AddrPort{}}})
}
