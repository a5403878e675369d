//go:build linux

package mcp_test

import (
	"context"
	"sort"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

// BenchmarkExec compares one `true` exec through REST with the same exec
// through MCP (streamable HTTP, Go SDK client) on the same server and
// sandbox; the issue asks MCP to cost at most 1 ms more at the p50.
// Reported: p50-ms and p99-ms per path.
func BenchmarkExec(b *testing.B) {
	testenv.RequireRoot(b)
	h := newHarness(b, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	sb, err := h.mgr.Create(context.Background(), sandbox.Scope{Tenant: "a", Actor: k.ID, Rights: rights.All}, sandbox.Spec{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rest := client.New(h.hs.URL, k.Key)
	cs := h.connectHTTP(k.Key)

	b.Run("REST", func(b *testing.B) {
		measure(b, func() error {
			_, err := rest.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"true"}})
			return err
		})
	})
	b.Run("MCP", func(b *testing.B) {
		args := map[string]any{"sandbox": sb.ID, "argv": []string{"true"}}
		measure(b, func() error {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "exec", Arguments: args})
			if err == nil && res.IsError {
				b.Fatalf("exec: %v", res.Content)
			}
			return err
		})
	})
}

// BenchmarkExecInterleaved runs the two paths alternately, so that both
// see the same machine load, and reports the p50 of each and their
// difference (the MCP overhead the issue bounds at 1 ms).
func BenchmarkExecInterleaved(b *testing.B) {
	testenv.RequireRoot(b)
	h := newHarness(b, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	sb, err := h.mgr.Create(context.Background(), sandbox.Scope{Tenant: "a", Actor: k.ID, Rights: rights.All}, sandbox.Spec{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rest := client.New(h.hs.URL, k.Key)
	cs := h.connectHTTP(k.Key)
	args := map[string]any{"sandbox": sb.ID, "argv": []string{"true"}}
	ops := [2]func() error{
		func() error { _, err := rest.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"true"}}); return err },
		func() error {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "exec", Arguments: args})
			if err == nil && res.IsError {
				b.Fatalf("exec: %v", res.Content)
			}
			return err
		},
	}
	var d [2][]time.Duration
	for i := range 40 { // warm both paths
		if err := ops[i%2](); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		for j := range 2 {
			op := (i + j) % 2 // alternate which goes first
			start := time.Now()
			if err := ops[op](); err != nil {
				b.Fatal(err)
			}
			d[op] = append(d[op], time.Since(start))
		}
	}
	b.StopTimer()
	p50 := func(x []time.Duration) float64 {
		sort.Slice(x, func(i, j int) bool { return x[i] < x[j] })
		return float64(x[len(x)/2]) / 1e6
	}
	r, m := p50(d[0]), p50(d[1])
	b.ReportMetric(r, "rest-p50-ms")
	b.ReportMetric(m, "mcp-p50-ms")
	b.ReportMetric(m-r, "overhead-p50-ms")
}

func measure(b *testing.B, op func() error) {
	for range 20 { // warm connections and caches
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100])/1e6, "p99-ms")
}
