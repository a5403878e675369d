//go:build linux

package mcp_test

import (
	"context"
	"testing"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/wire"
)

// file_read of the last lines of a file larger than the line-count window
// (wire.LineCountBytes, 64 MiB): the sandbox reads the file and only the
// lines cross (no file.read of the whole file), the total is counted, and
// the REST client's ReadLines — the same Backend method — answers the
// same.
func TestReadLastLinesOfAHugeFile(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	cs := h.connectHTTP(k.Key)
	const n = 10_000_000 // seq's output: 78,888,897 bytes
	var run execResult
	mustOK(t, "exec seq", call(t, cs, "exec", map[string]any{"command": "seq 1 10000000 > /workspace/big.txt && wc -c < /workspace/big.txt"}, &run))
	id := run.Sandbox
	var r struct {
		Content    string `json:"content"`
		StartLine  int    `json:"start_line"`
		EndLine    int    `json:"end_line"`
		TotalLines int    `json:"total_lines"`
		More       bool   `json:"more"`
		Size       int64  `json:"size"`
	}
	mustOK(t, "file_read", call(t, cs, "file_read", map[string]any{"path": "big.txt", "start_line": n - 2, "end_line": n + 5}, &r))
	if r.Content != "9999998\n9999999\n10000000\n" || r.StartLine != n-2 || r.EndLine != n || r.TotalLines != n || r.More {
		t.Fatalf("file_read = %+v", r)
	}
	if r.Size <= wire.LineCountBytes {
		t.Fatalf("the file is %d bytes, not over %d", r.Size, wire.LineCountBytes)
	}
	if ev := h.rec.find("file.read", "intent", id); len(ev) != 0 {
		t.Fatalf("file_read read the file to the host: %+v", ev)
	}
	ev := h.rec.find("file.lines", "result", id)
	if len(ev) != 1 || ev[0].Data["bytes"] != len(r.Content) {
		t.Fatalf("file.lines events = %+v", ev)
	}

	// The client (paddock mcp against a server) has the same method.
	cl := client.New(h.hs.URL, k.Key)
	got, err := cl.ReadLines(context.Background(), id, client.LinesRequest{Path: "/workspace/big.txt", Start: n - 2, End: n + 5})
	if err != nil || got.Content != r.Content || got.End != n || got.Total != n || got.More || got.Size != r.Size {
		t.Fatalf("client ReadLines = %+v, %v", got, err)
	}
	if _, err := cl.ReadLines(context.Background(), id, client.LinesRequest{Path: "big.txt", Start: 5, End: 2}); err == nil {
		t.Fatal("end before start accepted")
	}
}
