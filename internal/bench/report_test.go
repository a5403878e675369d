package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func sampleReport() *Report {
	ok := Result{Name: sOneShot, Description: describe(sOneShot)}.withSummary(Summarize(msd(4, 5, 6), 15*time.Millisecond))
	ok.extra("create_p50_ms", 3.2)
	peer := Result{Name: sBwrap}.withSummary(Summarize(msd(10), 10*time.Millisecond))
	return &Report{
		Machine: Machine{CPUModel: "Test CPU", Cores: 2, MemoryMiB: 1024, Kernel: "6.18", OS: "Debian", GoVersion: "go1.26",
			PaddockVersion: "test", CgroupVersion: "v1", LayerStore: "tmpfs"},
		Target:  Target{Mode: "embedded", Pool: "none"},
		Started: time.Unix(0, 0).UTC(),
		Scenarios: []Result{
			ok,
			peer,
			Result{Name: sRunsc}.without(StatusMissing, "not installed"),
			Result{Name: sMCP}.without(StatusUnavailable, "MCP is not served by this server"),
			Result{Name: sNet}.without(StatusFailed, "boom"),
		},
	}
}

// TestJSONShape holds the DESIGN contract: {"machine":{...},"scenarios":
// [{"name","p50_ms","p99_ms","ops_per_s","runs"...}]} — every key present
// for every scenario, numbers null when a scenario has none.
func TestJSONShape(t *testing.T) {
	rep := sampleReport()
	(&runner{results: map[string]Result{sOneShot: rep.Scenarios[0]}}).ratios(rep)
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	machine, ok := doc["machine"].(map[string]any)
	if !ok {
		t.Fatalf("machine is %T", doc["machine"])
	}
	for _, k := range []string{"cpu_model", "cores", "memory_mib", "kernel", "go_version", "paddock_version", "cgroup_version", "layer_store"} {
		if _, ok := machine[k]; !ok {
			t.Errorf("machine lacks %q", k)
		}
	}
	list, ok := doc["scenarios"].([]any)
	if !ok || len(list) != len(rep.Scenarios) {
		t.Fatalf("scenarios = %v", doc["scenarios"])
	}
	required := []string{"name", "status", "runs", "p50_ms", "p90_ms", "p99_ms", "max_ms", "ops_per_s"}
	tests := []struct {
		name       string
		status     string
		numbers    bool
		wantReason bool
		wantRatio  bool
	}{
		{sOneShot, "ok", true, false, false},
		{sBwrap, "ok", true, false, true},
		{sRunsc, "missing", false, true, false},
		{sMCP, "unavailable", false, true, false},
		{sNet, "failed", false, true, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := list[i].(map[string]any)
			for _, k := range required {
				if _, ok := s[k]; !ok {
					t.Errorf("lacks %q: %v", k, s)
				}
			}
			if s["name"] != tt.name || s["status"] != tt.status {
				t.Errorf("name/status = %v/%v", s["name"], s["status"])
			}
			for _, k := range []string{"p50_ms", "p90_ms", "p99_ms", "max_ms", "ops_per_s"} {
				_, isNum := s[k].(float64)
				if isNum != tt.numbers || (!tt.numbers && s[k] != nil) {
					t.Errorf("%s = %v, want numbers=%v (null otherwise)", k, s[k], tt.numbers)
				}
			}
			if r, _ := s["reason"].(string); (r != "") != tt.wantReason {
				t.Errorf("reason = %q", r)
			}
			if _, has := s["ratio_to_paddock"]; has != tt.wantRatio {
				t.Errorf("ratio_to_paddock present = %v, want %v", has, tt.wantRatio)
			}
		})
	}
	one := list[0].(map[string]any)
	if one["p50_ms"] != 5.0 || one["runs"] != 3.0 || one["ops_per_s"] != 200.0 {
		t.Errorf("one-shot numbers = %v", one)
	}
	if r := list[1].(map[string]any)["ratio_to_paddock"]; r != 2.0 {
		t.Errorf("bwrap ratio = %v, want 10/5 = 2", r)
	}
}

func TestWriteTable(t *testing.T) {
	rep := sampleReport()
	(&runner{results: map[string]Result{sOneShot: rep.Scenarios[0]}}).ratios(rep)
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Test CPU", "scenario", "p50 ms", "p90 ms", "p99 ms", "max ms", "ops/s",
		sOneShot, "create_p50_ms = 3.2", "missing: not installed",
		"unavailable: MCP is not served by this server", "failed: boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			rows[f[0]] = f[1:]
		}
	}
	if r := rows[sRunsc]; len(r) != 1 || r[0] != "missing" {
		t.Errorf("runsc row = %v", r)
	}
	if r := rows[sOneShot]; len(r) != 6 || r[0] != "3" || r[1] != "5" {
		t.Errorf("one-shot row = %v (runs, p50, p90, p99, max, ops/s)", r)
	}
	if r := rows[sBwrap]; len(r) != 7 || r[6] != "2.00x" {
		t.Errorf("bwrap row = %v (…, ratio)", r)
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name    string
		sel     []string
		want    []string
		wantErr bool
	}{
		{"nothing is everything", nil, Names(), false},
		{"exact", []string{sExec}, []string{sExec, sExecConc, sExecAcross}, false},
		{"a group", []string{"peer"}, []string{sBwrap, sBwrapDev, sRunc, sRunsc}, false},
		{"slashes and spaces trimmed", []string{" peer/bwrap/ "}, []string{sBwrap, sBwrapDev}, false},
		{"run order, no duplicates", []string{sDensity, "floor", sDensity}, []string{sFloor, sDensity, sDensityExec, sDensityHC}, false},
		{"no prefix match inside a word", []string{"paddock/exe"}, nil, true},
		{"unknown", []string{"nope"}, nil, true},
		{"empty entry", []string{""}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Select(tt.sel)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Select(%q) = %v, want %v", tt.sel, got, tt.want)
			}
		})
	}
}

func TestDescriptions(t *testing.T) {
	for _, n := range Names() {
		if Describe(n) == "" {
			t.Errorf("%s has no description", n)
		}
	}
}
