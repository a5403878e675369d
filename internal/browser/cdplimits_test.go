package browser

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// TestReadBounded: a message within its limit is read whole; one past it
// is refused before the buffer grows past limit+1; every allocation is
// charged to the budget and given back.
func TestReadBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		limit  int64
		budget int64
		ok     bool
	}{
		{"small", 10, 100, 1 << 20, true},
		{"exactly the limit", 1000, 1000, 1 << 20, true},
		{"one past the limit", 1001, 1000, 1 << 20, false},
		{"far past the limit", 10 << 20, 1 << 20, 64 << 20, false},
		{"big and allowed", 3 << 20, 4 << 20, 64 << 20, true},
		{"unlimited budget", 3 << 20, 4 << 20, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &cdpLimits{budget: newByteBudget(tc.budget)}
			src := bytes.Repeat([]byte("x"), tc.size)
			data, held, err := l.readBounded(context.Background(), bytes.NewReader(src), tc.limit)
			if tc.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && !bytes.Equal(data, src) {
				t.Fatalf("read %d bytes, want %d", len(data), len(src))
			}
			if !tc.ok && !errors.Is(err, errCDPLimit) {
				t.Fatalf("err = %v, want a DevTools limit", err)
			}
			// The buffers up to limit+1, doubling: under 3x (the old ones stay
			// counted until the message is decoded).
			if held > 3*(tc.limit+1) {
				t.Fatalf("held %d bytes for a limit of %d", held, tc.limit)
			}
			if got := l.budget.inUse(); tc.budget > 0 && got != held {
				t.Fatalf("budget in use %d, held %d", got, held)
			}
			l.budget.release(held)
			if got := l.budget.inUse(); got != 0 {
				t.Fatalf("budget in use after release: %d", got)
			}
		})
	}
}

// TestByteBudgetWaits: a read that needs more than what is free waits
// for a release (another sandbox's message decoded), and gives up with
// its context.
func TestByteBudgetWaits(t *testing.T) {
	b := newByteBudget(100)
	if err := b.acquire(context.Background(), 80); err != nil {
		t.Fatal(err)
	}
	if err := b.acquire(context.Background(), 101); !errors.Is(err, errCDPLimit) {
		t.Fatalf("a request over the whole budget: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.acquire(ctx, 30); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire past the budget did not wait: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- b.acquire(context.Background(), 30) }()
	select {
	case err := <-done:
		t.Fatalf("acquired before a release: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.release(80)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := b.inUse(); got != 30 {
		t.Fatalf("in use %d, want 30", got)
	}
}

// TestEventMeter: a burst of twice the rate passes, more is refused, and
// the bucket refills with time.
func TestEventMeter(t *testing.T) {
	var m eventMeter
	const rate = 1000
	if !m.allow(1500, rate) || !m.allow(400, rate) {
		t.Fatal("a burst within 2x the rate was refused")
	}
	if m.allow(500, rate) {
		t.Fatal("past the burst was allowed")
	}
	m.last = m.last.Add(-time.Second) // one second later
	if !m.allow(900, rate) {
		t.Fatal("the bucket did not refill")
	}
	var off eventMeter
	if !off.allow(1<<40, -1) {
		t.Fatal("a negative rate is no limit")
	}
}

// TestPendingCaptures: only a reply to a screenshot the connection asked
// for may be large, once.
func TestPendingCaptures(t *testing.T) {
	var p pendingCaptures
	p.add(7)
	p.add(7)
	if p.n.Load() != 1 {
		t.Fatalf("pending %d, want 1", p.n.Load())
	}
	if !p.done(7) || p.done(7) || p.done(8) {
		t.Fatal("a capture reply counted other than once")
	}
	if p.n.Load() != 0 {
		t.Fatalf("pending %d, want 0", p.n.Load())
	}
}

// FuzzReadBounded: whatever the browser sends and whatever the limit,
// the reader returns the message whole or a limit error, never holding
// more than three times limit+1.
func FuzzReadBounded(f *testing.F) {
	f.Add([]byte(`{"id":1,"result":{}}`), int64(16))
	f.Add(bytes.Repeat([]byte("a"), 70000), int64(65536))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, msg []byte, limit int64) {
		if limit < 0 || limit > 1<<20 {
			return
		}
		l := &cdpLimits{budget: newByteBudget(8 << 20)}
		data, held, err := l.readBounded(context.Background(), bytes.NewReader(msg), limit)
		defer l.budget.release(held)
		if held > 3*(limit+1) && held > 64<<10 {
			t.Fatalf("held %d for limit %d", held, limit)
		}
		if int64(len(msg)) <= limit {
			if err != nil || !bytes.Equal(data, msg) {
				t.Fatalf("a message within the limit: %v", err)
			}
		} else if !errors.Is(err, errCDPLimit) {
			t.Fatalf("a message over the limit: %v", err)
		}
	})
}
