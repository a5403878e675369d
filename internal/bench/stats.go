package bench

import (
	"math"
	"slices"
	"time"
)

// Summary is the distribution of one scenario's samples.
type Summary struct {
	N                             int
	Min, Mean, P50, P90, P99, Max time.Duration
	// OpsPerS is N divided by the busy time the caller measured (the wall
	// time of the timed phase; for concurrent scenarios the whole phase,
	// not the sum of samples). 0 when busy is 0.
	OpsPerS float64
}

// Percentile is the nearest-rank percentile of sorted samples: the
// smallest sample with at least p% of the samples at or below it. Nearest
// rank never invents a value that was not measured (no interpolation), so
// a p99 of 100 samples is the 99th smallest sample. Sorted must be in
// ascending order; an empty slice gives 0.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if math.IsNaN(p) || p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	// Rounded to 1e-9 first so that 0.9*100 is 90, not 90.00000000000001.
	rank := int(math.Ceil(math.Round(p/100*float64(n)*1e9) / 1e9))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// Summarize computes the summary of samples (in any order; not modified)
// with busy as the denominator of the throughput.
func Summarize(samples []time.Duration, busy time.Duration) Summary {
	s := Summary{N: len(samples)}
	if s.N == 0 {
		return s
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	var sum float64
	for _, d := range sorted {
		sum += float64(d)
	}
	s.Min, s.Max = sorted[0], sorted[s.N-1]
	s.Mean = time.Duration(sum / float64(s.N))
	s.P50 = Percentile(sorted, 50)
	s.P90 = Percentile(sorted, 90)
	s.P99 = Percentile(sorted, 99)
	if busy > 0 {
		s.OpsPerS = float64(s.N) / busy.Seconds()
	}
	return s
}

// Sum adds durations.
func Sum(samples []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range samples {
		t += d
	}
	return t
}

// ms converts to milliseconds, rounded to the microsecond.
func ms(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}
