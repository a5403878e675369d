package audit

import (
	"fmt"
	"testing"
	"time"
)

func TestKeyLimiter(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name  string
		rate  float64
		burst int
		steps []struct {
			key string
			at  time.Duration
			ok  bool
		}
	}{
		{name: "burst then refill", rate: 10, burst: 3, steps: []struct {
			key string
			at  time.Duration
			ok  bool
		}{
			{"a", 0, true}, {"a", 0, true}, {"a", 0, true}, {"a", 0, false},
			{"a", 50 * time.Millisecond, false}, {"a", 100 * time.Millisecond, true}, {"a", 100 * time.Millisecond, false},
		}},
		{name: "keys apart", rate: 1, burst: 1, steps: []struct {
			key string
			at  time.Duration
			ok  bool
		}{
			{"a", 0, true}, {"a", 0, false}, {"b", 0, true}, {"b", 0, false}, {"a", time.Second, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := NewKeyLimiter(tc.rate, tc.burst, 0)
			for i, s := range tc.steps {
				ok, retry := k.Allow(s.key, t0.Add(s.at))
				if ok != s.ok {
					t.Fatalf("step %d (%s at %v): ok=%v, want %v", i, s.key, s.at, ok, s.ok)
				}
				if !ok && retry <= 0 {
					t.Fatalf("step %d: a refusal without a retry time", i)
				}
			}
		})
	}
}

func TestKeyLimiterBounded(t *testing.T) {
	k := NewKeyLimiter(1, 1, 100)
	for i := 0; i < 10_000; i++ {
		k.Allow(fmt.Sprint("key", i), time.Unix(0, 0))
	}
	if n := len(k.b); n > 100 {
		t.Fatalf("%d buckets kept, bound 100", n)
	}
}

// Take reports the first refusal of each run once, and a run ends with an
// allowed request.
func TestKeyLimiterFirstRefusal(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	k := NewKeyLimiter(1, 1, 0)
	type step struct {
		at        time.Duration
		ok, first bool
	}
	for i, s := range []step{{0, true, false}, {0, false, true}, {100 * time.Millisecond, false, false},
		{time.Second, true, false}, {time.Second, false, true}, {time.Second, false, false}} {
		ok, retry, first := k.Take("a", t0.Add(s.at))
		if ok != s.ok || first != s.first || (!ok && retry <= 0) {
			t.Fatalf("step %d: ok=%v first=%v retry=%v, want ok=%v first=%v", i, ok, first, retry, s.ok, s.first)
		}
	}
}
