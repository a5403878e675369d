package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Status says whether a scenario produced numbers.
type Status string

// Statuses. Every scenario of a run reports exactly one, so that nothing
// is skipped silently.
const (
	StatusOK Status = "ok"
	// StatusUnavailable: the server under test lacks the capability.
	StatusUnavailable Status = "unavailable"
	// StatusMissing: a peer tool is not installed on this machine.
	StatusMissing Status = "missing"
	// StatusFailed: the scenario ran and broke; Reason says how.
	StatusFailed Status = "failed"
)

// Report is the outcome of one run: `paddock bench --json` prints it.
type Report struct {
	Machine   Machine   `json:"machine"`
	Target    Target    `json:"target"`
	Settings  Settings  `json:"settings"`
	Started   time.Time `json:"started"`
	Seconds   float64   `json:"seconds"`
	Scenarios []Result  `json:"scenarios"`
}

// Target is the Paddock under test.
type Target struct {
	Mode string `json:"mode"` // "embedded" or "server"
	URL  string `json:"url,omitempty"`
	// ServerVersion is what the server's /healthz says.
	ServerVersion string `json:"server_version,omitempty"`
	// Pool describes the warm pool seen by the cold scenarios.
	Pool  string   `json:"pool"`
	Notes []string `json:"notes,omitempty"`
}

// Settings are the knobs of the run.
type Settings struct {
	Runs        int      `json:"runs"`
	Concurrency int      `json:"concurrency"`
	Density     int      `json:"density"`
	Selected    []string `json:"selected,omitempty"`
}

// Result is one scenario's outcome. The latency fields are null (not 0)
// when the scenario has no numbers, so a consumer cannot mistake
// "unavailable" for "instant".
type Result struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Status      Status   `json:"status"`
	Reason      string   `json:"reason,omitempty"`
	Runs        int      `json:"runs"`
	Errors      int      `json:"errors,omitempty"`
	Concurrency int      `json:"concurrency,omitempty"`
	P50ms       *float64 `json:"p50_ms"`
	P90ms       *float64 `json:"p90_ms"`
	P99ms       *float64 `json:"p99_ms"`
	MaxMs       *float64 `json:"max_ms"`
	MinMs       *float64 `json:"min_ms,omitempty"`
	MeanMs      *float64 `json:"mean_ms,omitempty"`
	OpsPerS     *float64 `json:"ops_per_s"`
	// RatioToPaddock is this peer's p50 divided by the p50 of Paddock's
	// one-shot (cold create→exec `true`→delete): above 1, Paddock is
	// faster.
	RatioToPaddock *float64 `json:"ratio_to_paddock,omitempty"`
	// Extra holds scenario-specific measurements (memory per sandbox,
	// phase latencies, MiB/s...), named with their unit.
	Extra map[string]float64 `json:"extra,omitempty"`
	Notes []string           `json:"notes,omitempty"`
}

// withSummary fills r's numbers from s.
func (r Result) withSummary(s Summary) Result {
	r.Status = StatusOK
	r.Runs = s.N
	f := func(v float64) *float64 { return &v }
	r.P50ms, r.P90ms, r.P99ms, r.MaxMs = f(ms(s.P50)), f(ms(s.P90)), f(ms(s.P99)), f(ms(s.Max))
	r.MinMs, r.MeanMs = f(ms(s.Min)), f(ms(s.Mean))
	r.OpsPerS = f(round3(s.OpsPerS))
	return r
}

// without marks r as having no numbers, for reason.
func (r Result) without(st Status, reason string) Result {
	r.Status, r.Reason = st, reason
	r.P50ms, r.P90ms, r.P99ms, r.MaxMs, r.MinMs, r.MeanMs, r.OpsPerS = nil, nil, nil, nil, nil, nil, nil
	return r
}

func (r *Result) extra(key string, v float64) {
	if r.Extra == nil {
		r.Extra = map[string]float64{}
	}
	r.Extra[key] = round3(v)
}

func (r *Result) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// WriteJSON prints the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteTable prints the machine, then one row per scenario, then the
// notes and the reasons of scenarios without numbers.
func (rep *Report) WriteTable(w io.Writer) error {
	m := rep.Machine
	fmt.Fprintf(w, "machine: %s, %d cores, %d MiB, kernel %s, %s, cgroup %s, layers %s\n",
		m.CPUModel, m.Cores, m.MemoryMiB, m.Kernel, m.GoVersion, m.CgroupVersion, m.LayerStore)
	fmt.Fprintf(w, "paddock %s, target %s", m.PaddockVersion, rep.Target.Mode)
	if rep.Target.URL != "" {
		fmt.Fprintf(w, " %s", rep.Target.URL)
	}
	fmt.Fprintf(w, ", pool: %s; load average %.2f at start, %.2f at end\n", rep.Target.Pool, m.LoadStart[0], m.LoadEnd[0])
	for _, n := range rep.Target.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\truns\tp50 ms\tp90 ms\tp99 ms\tmax ms\tops/s\tvs paddock\t")
	for _, r := range rep.Scenarios {
		if r.Status != StatusOK {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\n", r.Name, r.Status)
			continue
		}
		ratio := ""
		if r.RatioToPaddock != nil {
			ratio = fmt.Sprintf("%.2fx", *r.RatioToPaddock)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Name, r.Runs, num(r.P50ms), num(r.P90ms), num(r.P99ms),
			num(r.MaxMs), num(r.OpsPerS), ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range rep.Scenarios {
		var lines []string
		if r.Status != StatusOK {
			lines = append(lines, fmt.Sprintf("%s: %s", r.Status, r.Reason))
		}
		if r.Errors > 0 {
			lines = append(lines, fmt.Sprintf("%d failed iterations (not in the numbers)", r.Errors))
		}
		for _, k := range sortedKeys(r.Extra) {
			lines = append(lines, fmt.Sprintf("%s = %s", k, trimFloat(r.Extra[k])))
		}
		lines = append(lines, r.Notes...)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", r.Name)
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if b.Len() > 0 {
		fmt.Fprintf(w, "\n%s", b.String())
	}
	_, err := fmt.Fprintln(w, "\nvs paddock: the peer's p50 divided by Paddock's cold create→exec→delete p50 (above 1: Paddock is faster).")
	return err
}

func num(v *float64) string {
	if v == nil {
		return "-"
	}
	return trimFloat(*v)
}

func trimFloat(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
