package audit

import (
	"sync"
	"time"
)

// KeyLimiter is a token bucket per key, for per-key rate limits on audited
// routes: every authenticated request adds records to the log, so a key
// allowed an unbounded rate can grow it without bound (a read-only key
// grew it ~5 MB/s: disk exhaustion, issue 14 item 12). The HTTP gate
// calls Allow with the caller's key id before an audited request and
// answers 429 with Retry-After when it says no. Safe for concurrent use;
// it holds at most MaxKeys buckets (idle full ones go first).
type KeyLimiter struct {
	rate    float64 // tokens per second
	burst   float64
	maxKeys int

	mu sync.Mutex
	b  map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
	noted  bool // this run of refusals was reported (Take's first)
}

// NewKeyLimiter allows each key perSecond requests on average and burst
// at once, tracking at most maxKeys keys (default 65536).
func NewKeyLimiter(perSecond float64, burst, maxKeys int) *KeyLimiter {
	if burst < 1 {
		burst = 1
	}
	if maxKeys <= 0 {
		maxKeys = 1 << 16
	}
	return &KeyLimiter{rate: perSecond, burst: float64(burst), maxKeys: maxKeys, b: map[string]*bucket{}}
}

// Allow takes a token for key at now, or says how long until one is
// there.
func (k *KeyLimiter) Allow(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	ok, retryAfter, _ = k.Take(key, now)
	return ok, retryAfter
}

// Take is Allow that also says whether a refusal is the first of a run
// (since the key's last allowed request): the gate records that one and
// answers the rest without a record, so refusals cannot grow the log
// faster than the allowed rate.
func (k *KeyLimiter) Take(key string, now time.Time) (ok bool, retryAfter time.Duration, first bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.b[key]
	if b == nil {
		if len(k.b) >= k.maxKeys {
			k.evict(now)
		}
		b = &bucket{tokens: k.burst, at: now}
		k.b[key] = b
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = min(k.burst, b.tokens+dt*k.rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		b.noted = false
		return true, 0, false
	}
	first = !b.noted
	b.noted = true
	if k.rate <= 0 {
		return false, time.Hour, first
	}
	return false, time.Duration((1 - b.tokens) / k.rate * float64(time.Second)), first
}

// Rate is the allowed average, in requests per second.
func (k *KeyLimiter) Rate() float64 { return k.rate }

// evict drops the buckets that have refilled (nothing is lost: a new one
// starts full), or, if none has, half of them.
func (k *KeyLimiter) evict(now time.Time) {
	for key, b := range k.b {
		if b.tokens+now.Sub(b.at).Seconds()*k.rate >= k.burst {
			delete(k.b, key)
		}
	}
	for key := range k.b {
		if len(k.b) < k.maxKeys/2 {
			break
		}
		delete(k.b, key)
	}
}
