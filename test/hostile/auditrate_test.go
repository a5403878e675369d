//go:build linux

package hostile

// Audit growth, the request side (issue 14, item 9): every request is
// recorded, so a read-only key answered as fast as the server can grew
// the log ~5 MB/s. The gate holds each key to a rate (429 with
// Retry-After), recording only the first refusal of each run.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
)

// floodResult is what a flood of GET /v1/sandboxes got.
type floodResult struct {
	ok, limited int64
	retryAfter  string // of one 429
	grown       int64  // audit bytes added
	elapsed     time.Duration
}

// keyFlood lists sandboxes with key from 8 workers for d.
func keyFlood(t *testing.T, s *server, key string, d time.Duration) floodResult {
	t.Helper()
	before := auditBytes(t, s.auditDir())
	var ok, limited atomic.Int64
	var retry atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < d {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+s.addr+"/v1/sandboxes", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := s.hc.Do(req)
				if err == nil {
					_, _ = bufio.NewReader(resp.Body).WriteTo(&bytes.Buffer{})
					resp.Body.Close()
					switch resp.StatusCode {
					case 200:
						ok.Add(1)
					case 429:
						limited.Add(1)
						retry.Store(resp.Header.Get("Retry-After"))
					}
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	r := floodResult{ok: ok.Load(), limited: limited.Load(), elapsed: time.Since(start)}
	r.retryAfter, _ = retry.Load().(string)
	time.Sleep(200 * time.Millisecond) // the log's sync interval
	r.grown = auditBytes(t, s.auditDir()) - before
	return r
}

func readOnlyKey(t *testing.T, s *server) string {
	t.Helper()
	k, err := s.c.CreateKey(ctxT(t, time.Minute), client.KeyRequest{Tenant: "default", Scopes: []client.Scope{auth.ScopeRead}})
	if err != nil {
		t.Fatalf("create a read-only key: %v", err)
	}
	return k.Key
}

// Positive control: with --rate-limit 0 a read-only key's flood is
// answered in full and grows the log at its pace. With a rate of 20/s
// (burst 40) the same flood is answered at most burst + rate × time, the
// rest get 429 with Retry-After, the log grows a fraction of the
// control's, and only the first refusal of each run is recorded. Another
// key is served during the flood; the server still answers.
func TestAuditRatePerKey(t *testing.T) {
	const d = 4 * time.Second
	ctl := startServer(t, serverOptions{extra: []string{"--rate-limit", "0"}})
	c := keyFlood(t, ctl, readOnlyKey(t, ctl), d)
	t.Logf("control: %d answered, %d limited, log +%d bytes in %v", c.ok, c.limited, c.grown, c.elapsed)
	if c.limited != 0 || c.ok < 400 {
		t.Fatalf("positive control: without a rate the flood got %d answers and %d 429s", c.ok, c.limited)
	}
	ctl.stop()

	const rate, burst = 20, 40
	s := startServer(t, serverOptions{extra: []string{"--rate-limit", strconv.Itoa(rate), "--rate-burst", strconv.Itoa(burst)}})
	id := s.create(client.Spec{})
	key := readOnlyKey(t, s)
	var other atomic.Int64
	done := make(chan struct{})
	go func() { // another key, during the flood
		defer close(done)
		for i := 0; i < 10; i++ {
			if _, err := s.c.List(ctxT(t, time.Minute), nil); err == nil {
				other.Add(1)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	r := keyFlood(t, s, key, d)
	<-done
	t.Logf("limited: %d answered, %d limited (Retry-After %q), log +%d bytes in %v", r.ok, r.limited, r.retryAfter, r.grown, r.elapsed)
	if max := int64(burst + rate*(r.elapsed.Seconds()+1)); r.ok > max {
		t.Errorf("the key got %d answers, more than its rate allows (%d)", r.ok, max)
	}
	if r.ok < burst || r.limited < 10 || r.retryAfter == "" {
		t.Errorf("answered %d, limited %d, Retry-After %q: want the burst served and the rest refused with Retry-After", r.ok, r.limited, r.retryAfter)
	}
	if sec, err := strconv.Atoi(r.retryAfter); err != nil || sec < 1 {
		t.Errorf("Retry-After %q is not a number of seconds", r.retryAfter)
	}
	if r.grown*3 > c.grown {
		t.Errorf("the log grew %d bytes under the limit, the control %d: want a fraction", r.grown, c.grown)
	}
	if other.Load() != 10 {
		t.Errorf("another key was served %d of 10 times during the flood", other.Load())
	}
	s.stillServes(id)
	// The records: the refusals are there, but one per run (a run ends
	// with an allowed request), not one per refused request.
	recs := s.httpRecords(t)
	var refused int64
	for _, rec := range recs {
		if rec.Phase == audit.PhaseResult && rec.Status == 429 {
			refused++
		}
	}
	if refused == 0 || refused > r.ok+1 || refused*10 > r.limited {
		t.Errorf("%d refusals recorded for %d refused and %d allowed requests", refused, r.limited, r.ok)
	}
	if code, out := s.verify(); code != 0 {
		t.Errorf("paddock audit verify: %s", out)
	}
}

// httpRecords reads every http record of s's log through the API.
func (s *server) httpRecords(t *testing.T) []audit.Record {
	t.Helper()
	var buf bytes.Buffer
	if err := s.c.AuditExport(ctxT(t, time.Minute), client.AuditQuery{Action: audit.ActionHTTP}, &buf); err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	dec := json.NewDecoder(&buf)
	for {
		var r audit.Record
		if err := dec.Decode(&r); err != nil {
			break
		}
		out = append(out, r)
	}
	return out
}
