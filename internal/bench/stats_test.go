package bench

import (
	"strings"
	"testing"
	"time"
)

func msd(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample is every percentile", msd(7), 99, 7 * time.Millisecond},
		{"p0 is the minimum", msd(1, 2, 3), 0, 1 * time.Millisecond},
		{"negative is the minimum", msd(1, 2, 3), -5, 1 * time.Millisecond},
		{"p100 is the maximum", msd(1, 2, 3), 100, 3 * time.Millisecond},
		{"above 100 is the maximum", msd(1, 2, 3), 250, 3 * time.Millisecond},
		{"median of odd count", msd(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		// Nearest rank: ceil(0.5*4) = 2nd sample, never an average.
		{"median of even count is a measured sample", msd(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p90 of 10", msd(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		// 0.9*100 must be rank 90 exactly, not 91 from float error.
		{"p90 of 100", hundred, 90, 90 * time.Millisecond},
		{"p99 of 100", hundred, 99, 99 * time.Millisecond},
		{"p50 of 100", hundred, 50, 50 * time.Millisecond},
		{"p99 of 3 is the max", msd(1, 2, 3), 99, 3 * time.Millisecond},
		{"tiny p is the first", hundred, 0.001, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %g) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		samples []time.Duration
		busy    time.Duration
		want    Summary
	}{
		{"empty", nil, time.Second, Summary{}},
		{"unsorted input", msd(5, 1, 4, 2, 3), 10 * time.Millisecond, Summary{N: 5,
			Min: 1 * time.Millisecond, Mean: 3 * time.Millisecond, P50: 3 * time.Millisecond,
			P90: 5 * time.Millisecond, P99: 5 * time.Millisecond, Max: 5 * time.Millisecond, OpsPerS: 500}},
		{"no busy time, no throughput", msd(2, 2), 0, Summary{N: 2, Min: 2 * time.Millisecond,
			Mean: 2 * time.Millisecond, P50: 2 * time.Millisecond, P90: 2 * time.Millisecond,
			P99: 2 * time.Millisecond, Max: 2 * time.Millisecond}},
		// Concurrent: 4 ops of 10 ms each in 10 ms of wall time.
		{"concurrent throughput uses wall time", msd(10, 10, 10, 10), 10 * time.Millisecond, Summary{N: 4,
			Min: 10 * time.Millisecond, Mean: 10 * time.Millisecond, P50: 10 * time.Millisecond,
			P90: 10 * time.Millisecond, P99: 10 * time.Millisecond, Max: 10 * time.Millisecond, OpsPerS: 400}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tt.samples...)
			got := Summarize(tt.samples, tt.busy)
			if got != tt.want {
				t.Errorf("Summarize = %+v, want %+v", got, tt.want)
			}
			for i := range in {
				if in[i] != tt.samples[i] {
					t.Fatal("Summarize reordered its input")
				}
			}
		})
	}
}

func TestMsRounding(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want float64
	}{
		{1234567 * time.Nanosecond, 1.235},
		{0, 0},
		{999 * time.Nanosecond, 0.001},
		{2 * time.Second, 2000},
	}
	for _, tt := range tests {
		if got := ms(tt.d); got != tt.want {
			t.Errorf("ms(%v) = %v, want %v", tt.d, got, tt.want)
		}
	}
}

func TestProgress(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b)
	p.start("a scenario with a rather long name that would wrap a terminal line", 4)
	for i := 0; i < 4; i++ {
		p.step(1)
	}
	p.clear()
	out := b.String()
	if !strings.Contains(out, "[==============================] 4/4 ") {
		t.Errorf("no full bar in %q", out)
	}
	if !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("bar not cleared: %q", out)
	}
	for _, line := range strings.Split(out, "\r") {
		if len(line) > 100 {
			t.Errorf("bar line of %d bytes: %q", len(line), line)
		}
	}
	// No writer (stderr not a terminal): nothing at all, and no panic.
	q := newProgress(nil)
	q.start("x", 1)
	q.step(1)
	q.clear()
}
