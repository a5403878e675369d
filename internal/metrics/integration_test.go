package metrics_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// value reads one series from a scrape (0 if absent).
func value(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Scraping GET /metrics (admin key) after a create and an exec shows the
// series move; without the key the scrape is refused.
func TestScrapeAfterCreateAndExec(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	scrape := func(key string) (int, string) {
		req, _ := http.NewRequest("GET", e.Server.URL+"/metrics", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := scrape(""); code != http.StatusUnauthorized {
		t.Fatalf("scrape without a key: %d", code)
	}
	_, before := scrape(e.AdminKey)
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	e.Exec(sb.ID, "true")
	e.Exec(sb.ID, "sh", "-c", "exit 3")
	_, after := scrape(e.AdminKey)
	for series, delta := range map[string]float64{
		`paddock_sandboxes{state="running"}`:                                                      1,
		`paddock_sandbox_create_duration_seconds_count{outcome="ok"}`:                             1,
		`paddock_exec_total{outcome="ok"}`:                                                        1,
		`paddock_exec_total{outcome="nonzero_exit"}`:                                              1,
		`paddock_exec_duration_seconds_count`:                                                     2,
		`paddock_http_requests_total{method="POST",route="/v1/sandboxes/{id}/exec",status="200"}`: 2,
	} {
		if d := value(t, after, series) - value(t, before, series); d != delta {
			t.Errorf("%s moved by %v, want %v", series, d, delta)
		}
	}
	if value(t, after, "paddock_audit_records_total") <= value(t, before, "paddock_audit_records_total") {
		t.Error("audit records not counted")
	}
	if value(t, after, "paddock_audit_append_duration_seconds_count") == 0 {
		t.Error("audit write latency not observed")
	}
}
