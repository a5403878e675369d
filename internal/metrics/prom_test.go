package metrics

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// scrape returns the value of every series in m's exposition.
func scrape(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	rr := httptest.NewRecorder()
	m.Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	if rr.Code != 200 {
		t.Fatalf("scrape: %d", rr.Code)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(rr.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

func TestEventsMoveSeries(t *testing.T) {
	m := New(Options{})
	var _ sandbox.Observer = m
	var _ EgressRecorder = m
	ctx := context.Background()
	m.Event(ctx, sandbox.Event{Kind: "sandbox.create", Phase: "result", Sandbox: "a", Duration: 5 * time.Millisecond})
	m.Event(ctx, sandbox.Event{Kind: "sandbox.create", Phase: "result", Sandbox: "b", Duration: 5 * time.Millisecond})
	m.Event(ctx, sandbox.Event{Kind: "exec", Phase: "result", Sandbox: "a", Duration: time.Millisecond, Data: map[string]any{"exit_code": 0}})
	m.Event(ctx, sandbox.Event{Kind: "exec", Phase: "result", Sandbox: "a", Data: map[string]any{"exit_code": 137, "oom_killed": true}})
	m.Event(ctx, sandbox.Event{Kind: "sandbox.fail", Phase: "event", Sandbox: "b"})
	m.Event(ctx, sandbox.Event{Kind: "sandbox.delete", Phase: "result", Sandbox: "b"})
	m.EgressDecision(false, "allowlist")
	m.AuditAppend(50*time.Microsecond, nil)
	m.AuditBatch(3, time.Microsecond, 100*time.Microsecond, nil)
	s := scrape(t, m)
	want := map[string]float64{
		`paddock_sandboxes{state="running"}`:                               1,
		`paddock_sandboxes{state="failed"}`:                                0,
		`paddock_exec_total{outcome="ok"}`:                                 1,
		`paddock_exec_total{outcome="oom_killed"}`:                         1,
		`paddock_sandbox_create_duration_seconds_count{outcome="ok"}`:      2,
		`paddock_sandbox_events_total{event="fail",outcome="ok"}`:          1,
		`paddock_egress_decisions_total{decision="deny",mode="allowlist"}`: 1,
		`paddock_audit_records_total`:                                      3,
		`paddock_audit_append_duration_seconds_count`:                      1,
		`paddock_exec_duration_seconds_count`:                              2,
	}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("%s = %v, want %v", k, s[k], v)
		}
	}
}

func TestMiddlewareByRoute(t *testing.T) {
	m := New(Options{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		NoteRoute(r.Context(), "GET /v1/sandboxes/{id}")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		w.Write([]byte(`{"error":{"code":"not_found","message":"sandbox not found"}}`))
	})
	h := m.Middleware(mux)
	for _, p := range []string{"/v1/sandboxes/aaa", "/v1/sandboxes/bbb", "/nope/xyz"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	s := scrape(t, m)
	if v := s[`paddock_http_requests_total{method="GET",route="/v1/sandboxes/{id}",status="404"}`]; v != 2 {
		t.Errorf("by route: %v", v)
	}
	if v := s[`paddock_http_requests_total{method="GET",route="(unmatched)",status="404"}`]; v != 1 {
		t.Errorf("unmatched: %v", v)
	}
	if v := s[`paddock_errors_total{code="not_found"}`]; v != 2 {
		t.Errorf("errors by code: %v", v)
	}
	for k := range s {
		if strings.Contains(k, "aaa") || strings.Contains(k, "xyz") {
			t.Errorf("a raw path became a label: %s", k)
		}
	}
}

func TestStatesCallback(t *testing.T) {
	m := New(Options{States: func() map[string]int { return map[string]int{"running": 3, "failed": 1} }})
	s := scrape(t, m)
	if s[`paddock_sandboxes{state="running"}`] != 3 || s[`paddock_sandboxes{state="failed"}`] != 1 {
		t.Fatalf("states: %v", s)
	}
}

// The audit log reports its volume's space to the metrics; below the
// alarm the gauge says so (before a full disk fails actions closed).
func TestAuditDiskAlarm(t *testing.T) {
	for _, tc := range []struct {
		name string
		min  int64
		low  float64
	}{
		{"space", 1 << 10, 0},
		{"low", 1 << 62, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{})
			var _ audit.DiskStats = m
			l, err := audit.Open(audit.Options{Dir: t.TempDir(), Stats: m, MinFreeBytes: tc.min})
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			s := scrape(t, m)
			if s[`paddock_audit_disk_free_bytes`] <= 0 || s[`paddock_audit_disk_total_bytes`] < s[`paddock_audit_disk_free_bytes`] {
				t.Fatalf("disk gauges: free %v total %v", s[`paddock_audit_disk_free_bytes`], s[`paddock_audit_disk_total_bytes`])
			}
			if s[`paddock_audit_disk_low`] != tc.low || s[`paddock_audit_disk_low_total`] != tc.low {
				t.Fatalf("alarm: low %v (times %v), want %v", s[`paddock_audit_disk_low`], s[`paddock_audit_disk_low_total`], tc.low)
			}
		})
	}
}
