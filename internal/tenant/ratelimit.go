package tenant

import (
	"math"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// RateLimitError is a refusal by a rate quota. It carries the delay after
// which a retry can succeed (the API sends it as Retry-After) and unwraps
// to an errs.Error of code rate_limited.
type RateLimitError struct {
	Tenant string
	Wait   time.Duration
	err    *errs.Error
}

func newRateLimitError(tenant string, perMinute float64, wait time.Duration) *RateLimitError {
	wait = retrySeconds(wait)
	return &RateLimitError{Tenant: tenant, Wait: wait,
		err: errs.New(errs.CodeRateLimited, "tenant %s: create rate quota of %g per minute exceeded; retry in %s",
			tenant, perMinute, wait.String())}
}

func (e *RateLimitError) Error() string { return e.err.Error() }

// Unwrap exposes the errs.Error (code and public message).
func (e *RateLimitError) Unwrap() error { return e.err }

// RetryAfter is the delay before a retry may succeed, in whole seconds.
func (e *RateLimitError) RetryAfter() time.Duration { return e.Wait }

// retrySeconds rounds a delay up to whole seconds (Retry-After's unit),
// at least one.
func retrySeconds(d time.Duration) time.Duration {
	s := time.Duration(math.Ceil(d.Seconds())) * time.Second
	if s < time.Second {
		s = time.Second
	}
	return s
}

// bucket is a token bucket: it holds up to burst tokens and gains rate
// tokens per second.
type bucket struct {
	tokens float64
	last   time.Time
}

// take removes one token if there is one, else reports how long until
// there will be.
func (b *bucket) take(now time.Time, rate, burst float64) (bool, time.Duration) {
	if b.last.IsZero() {
		b.tokens, b.last = burst, now
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(burst, b.tokens+el*rate)
		b.last = now
	}
	if b.tokens > burst { // the quota shrank
		b.tokens = burst
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	need := (1 - b.tokens) / rate
	return false, time.Duration(need * float64(time.Second))
}
