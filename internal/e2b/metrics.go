package e2b

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// E2B's metrics endpoints, over the consumption history the manager keeps
// per sandbox (sandbox.Manager.Samples: a sample every few seconds, a
// bounded number kept).

// maxMetricsIDs bounds the sandbox_ids of one GET /sandboxes/metrics.
const maxMetricsIDs = 100

// sandboxMetric is E2B's SandboxMetric.
type sandboxMetric struct {
	Timestamp     string  `json:"timestamp"`
	TimestampUnix int64   `json:"timestampUnix"`
	CPUCount      int     `json:"cpuCount"`
	CPUUsedPct    float64 `json:"cpuUsedPct"`
	MemUsed       int64   `json:"memUsed"`
	MemTotal      int64   `json:"memTotal"`
	MemCache      int64   `json:"memCache"`
	DiskUsed      int64   `json:"diskUsed"`
	DiskTotal     int64   `json:"diskTotal"`
}

func metricOf(sb sandbox.Sandbox, s sandbox.Sample) sandboxMetric {
	return sandboxMetric{Timestamp: s.At.UTC().Format(time.RFC3339Nano), TimestampUnix: s.At.Unix(),
		CPUCount: sandbox.CPUCount(sb.Spec), CPUUsedPct: float64(int64(s.CPUPct*100+0.5)) / 100,
		MemUsed: s.MemoryBytes, MemTotal: sb.Spec.MemoryMB << 20, DiskUsed: s.DiskBytes, DiskTotal: sb.Spec.DiskMB << 20}
}

// unixParam reads an optional Unix time in seconds.
func unixParam(q map[string][]string, name string) (time.Time, error) {
	vs := q[name]
	switch {
	case len(vs) == 0:
		return time.Time{}, nil
	case len(vs) > 1:
		return time.Time{}, errs.Invalid("query parameter %s is given %d times", name, len(vs))
	}
	n, err := strconv.ParseInt(vs[0], 10, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return time.Time{}, errs.Invalid("%s must be a Unix time in seconds", name)
	}
	return time.Unix(n, 0), nil
}

// sandboxMetrics is GET /sandboxes/{id}/metrics?start=&end= (Unix
// seconds): the samples in that range, oldest first.
func (s *Server) sandboxMetrics(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	q := r.URL.Query()
	for k := range q {
		if k != "start" && k != "end" {
			writeAPIError(w, errs.Invalid("query parameter %s is not supported", clipText(k)))
			return
		}
	}
	from, err := unixParam(q, "start")
	var to time.Time
	if err == nil {
		to, err = unixParam(q, "end")
	}
	if err == nil && !to.IsZero() {
		to = to.Add(time.Second - 1) // end names a whole second
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	sb, err := s.visible(r, sc, r.PathValue("sandboxID"), rights.Read)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	samples, err := s.m.Samples(r.Context(), sc, sb.ID, from, to)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	out := make([]sandboxMetric, 0, len(samples))
	for _, smp := range samples {
		out = append(out, metricOf(sb, smp))
	}
	writeJSON(w, http.StatusOK, out)
}

// sandboxesMetrics is GET /sandboxes/metrics?sandbox_ids=a,b: the latest
// sample of each named sandbox the caller may see and that runs (one it
// may not see or that does not run is left out, as E2B leaves it out).
func (s *Server) sandboxesMetrics(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	q := r.URL.Query()
	var ids []string
	for k, vs := range q {
		if k != "sandbox_ids" {
			writeAPIError(w, errs.Invalid("query parameter %s is not supported", clipText(k)))
			return
		}
		for _, v := range vs {
			for _, id := range strings.Split(v, ",") {
				if id = strings.TrimSpace(id); id != "" {
					ids = append(ids, id)
				}
			}
		}
	}
	if len(ids) == 0 {
		writeAPIError(w, errs.Invalid("sandbox_ids (a comma-separated list of sandbox IDs) is required"))
		return
	}
	if len(ids) > maxMetricsIDs {
		writeAPIError(w, errs.Invalid("at most %d sandbox_ids per request", maxMetricsIDs))
		return
	}
	out := map[string]sandboxMetric{}
	for _, id := range ids {
		sb, err := s.running(r, sc, id, rights.Read)
		if err != nil {
			if errs.CodeOf(err) == errs.CodeNotFound || errs.CodeOf(err) == errs.CodeSandboxNotActive {
				continue
			}
			writeAPIError(w, err)
			return
		}
		samples, err := s.m.Samples(r.Context(), sc, id, time.Time{}, time.Time{})
		if err != nil || len(samples) == 0 {
			continue
		}
		out[id] = metricOf(sb, samples[len(samples)-1])
	}
	writeJSON(w, http.StatusOK, struct {
		Sandboxes map[string]sandboxMetric `json:"sandboxes"`
	}{out})
}
