//go:build linux

package hostile

// Group: audit tampering and growth (issue 14 item 12). A read-only key
// grows the audit log as fast as the server answers it; retention keeps
// the log within its bound while the chain stays verifiable.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
)

// auditBytes is the size of the segments in an audit directory.
func auditBytes(t *testing.T, dir string) int64 {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "audit-*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range segs {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// readOnlyFlood lists sandboxes with a read-only key of s, from 8
// workers, until stop says so or max requests were sent; it returns how
// many were answered.
func readOnlyFlood(t *testing.T, s *server, max int64, stop func() bool) int64 {
	t.Helper()
	k, err := s.c.CreateKey(ctxT(t, time.Minute), client.KeyRequest{Tenant: "default", Scopes: []client.Scope{auth.ScopeRead}})
	if err != nil {
		t.Fatalf("create a read-only key: %v", err)
	}
	ro := client.New("http://"+s.addr, k.Key).WithHTTPClient(s.hc)
	var sent, answered atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(90 * time.Second)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sent.Add(1) <= max && time.Now().Before(deadline) && !stop() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if _, err := ro.List(ctx, nil); err == nil {
					answered.Add(1)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	return answered.Load()
}

func TestAuditGrowthRetention(t *testing.T) {
	const seg, bound = 1 << 20, 3 << 20
	// Positive control: without retention the flood grows the log past
	// the bound (and would go on until the disk is full).
	ctl := startServer(t, serverOptions{extra: []string{"--audit-segment-size", "1M", "--rate-limit", "0"}})
	start := time.Now()
	n := readOnlyFlood(t, ctl, 400_000, func() bool { return auditBytes(t, ctl.auditDir()) > bound+2*seg })
	grown := auditBytes(t, ctl.auditDir())
	t.Logf("control: %d read-only requests grew the log to %d bytes in %v (%.1f MB/s)", n, grown, time.Since(start),
		float64(grown)/1e6/time.Since(start).Seconds())
	if grown <= bound+seg {
		t.Fatalf("positive control: the flood grew the log to only %d bytes", grown)
	}
	ctl.stop()

	// With retention the same flood leaves at most the bound (and the
	// active segment), and the log still verifies.
	s := startServer(t, serverOptions{extra: []string{"--audit-segment-size", "1M", "--audit-max-bytes", "3M", "--rate-limit", "0"}})
	id := s.create(client.Spec{})
	m := readOnlyFlood(t, s, n, func() bool { return false })
	kept := auditBytes(t, s.auditDir())
	t.Logf("with --audit-max-bytes 3M: %d requests, %d bytes kept", m, kept)
	if m < n*9/10 {
		t.Fatalf("the server answered only %d of %d requests", m, n)
	}
	if kept > bound+seg {
		t.Fatalf("retention kept %d bytes, bound %d (+ one segment)", kept, bound)
	}
	s.stillServes(id)
	s.stop()
	code, out := s.verify()
	if code != 0 || !strings.Contains(out, "removed by retention") {
		t.Fatalf("`paddock audit verify` after retention (exit %d):\n%s", code, out)
	}
	t.Logf("verify: %s", strings.TrimSpace(out))
	all := readAll(t, s.auditDir())
	if !bytes.Contains(all, []byte(`"action":"audit.prune"`)) {
		t.Fatal("no audit.prune record accounts for the expired segments")
	}
	// Tampering with what is kept is still found.
	tampered := filepath.Join(t.TempDir(), "audit")
	copyDir(t, s.auditDir(), tampered)
	segs, _ := filepath.Glob(filepath.Join(tampered, "audit-*.jsonl"))
	b, _ := os.ReadFile(segs[len(segs)-1])
	changed := bytes.Replace(b, []byte(`"action":"http"`), []byte(`"action":"HTTP"`), 1)
	if bytes.Equal(changed, b) {
		t.Fatal("the tampering changed nothing")
	}
	_ = os.WriteFile(segs[len(segs)-1], changed, 0o600)
	if _, err := audit.Verify(tampered, nil); err == nil {
		t.Fatal("a changed record in the kept log verified")
	}
	_ = os.Remove(segs[0])
	if _, err := audit.Verify(tampered, nil); err == nil {
		t.Fatal("a kept segment deleted beyond retention verified")
	}
}
