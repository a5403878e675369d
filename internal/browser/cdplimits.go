package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/page"
)

// What a sandbox's browser can make the server hold. The browser is the
// sandbox's, so its root can replace Chromium with anything that answers
// DevTools (memory exhaustion by a hostile peer, issue 14 item 8: 90 MiB
// messages raised the server's RSS by ~400 MB per sandbox). Every byte
// the server reads from it passes wsTransport.Read, which enforces:
//   - a per-message cap, checked while reading (the message is never
//     buffered past it): small, except for the reply to a screenshot the
//     server itself asked for;
//   - an event-flood cap per connection (events the server did not ask
//     for queue inside chromedp until handled);
//   - a server-wide budget of bytes being read and decoded, shared by all
//     sandboxes, so that several hostile browsers together stay bounded.
// A browser that breaks a cap loses its connection (the next action
// reconnects and says why); the server and other sandboxes go on.

// Defaults of the Options that set these bounds.
const (
	DefaultMaxCDPMessage = 8 << 20
	// DefaultMaxCDPCapture fits a full-page screenshot (capped at
	// maxFullPageHeight), base64 and all.
	DefaultMaxCDPCapture = 96 << 20
	DefaultCDPBudget     = 256 << 20
	// DefaultMaxCDPEventRate: events per connection, bytes per second
	// (a burst of twice that is allowed). A screencast at the default
	// window size sends well under 10 MiB/s.
	DefaultMaxCDPEventRate = 32 << 20
	// budgetWait bounds how long a read waits for the server-wide budget.
	budgetWait = 30 * time.Second
)

// errCDPLimit marks a DevTools connection closed for breaking a bound.
var errCDPLimit = errors.New("DevTools limit")

// captureMethods may be answered with up to MaxCDPCapture bytes.
var captureMethods = map[cdproto.MethodType]bool{page.CommandCaptureScreenshot: true}

// byteBudget is a counting semaphore of bytes.
type byteBudget struct {
	mu    sync.Mutex
	total int64
	free  int64
	wake  chan struct{} // closed when bytes are released
}

func newByteBudget(total int64) *byteBudget {
	if total <= 0 {
		return nil // unlimited
	}
	return &byteBudget{total: total, free: total}
}

// acquire takes n bytes, waiting up to budgetWait for them.
func (b *byteBudget) acquire(ctx context.Context, n int64) error {
	if b == nil {
		return nil
	}
	if n > b.total {
		return fmt.Errorf("%w: a message of %d bytes exceeds the server's DevTools budget", errCDPLimit, n)
	}
	t := time.NewTimer(budgetWait)
	defer t.Stop()
	for {
		b.mu.Lock()
		if b.free >= n {
			b.free -= n
			b.mu.Unlock()
			return nil
		}
		if b.wake == nil {
			b.wake = make(chan struct{})
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-t.C:
			return fmt.Errorf("%w: the server's DevTools budget stayed exhausted for %s", errCDPLimit, budgetWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *byteBudget) release(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
	b.mu.Unlock()
}

// inUse is the bytes held now.
func (b *byteBudget) inUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total - b.free
}

// cdpLimits are the bounds of one DevTools connection.
type cdpLimits struct {
	message, capture int64
	eventRate        int64 // bytes per second; burst 2x
	budget           *byteBudget
}

// readBounded reads one message from r into a buffer that never grows
// past limit+1 bytes, taking each allocation from the budget first. It
// returns the message and the bytes to release once it is decoded.
func (l *cdpLimits) readBounded(ctx context.Context, r io.Reader, limit int64) ([]byte, int64, error) {
	held := int64(0)
	grow := func(buf []byte, want int64) ([]byte, error) {
		if err := l.budget.acquire(ctx, want); err != nil {
			return buf, err
		}
		held += want // the old buffer stays counted until the message is decoded: it is garbage, not yet freed
		nb := make([]byte, len(buf), want)
		copy(nb, buf)
		return nb, nil
	}
	buf, err := grow(nil, min(64<<10, limit+1))
	for err == nil {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, held, fmt.Errorf("%w: the browser sent a DevTools message over %d bytes", errCDPLimit, limit)
			}
			if buf, err = grow(buf, min(2*int64(cap(buf)), limit+1)); err != nil {
				break
			}
		}
		var n int
		n, err = r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
	}
	if errors.Is(err, io.EOF) {
		return buf, held, nil
	}
	return nil, held, err
}

// eventMeter is a token bucket of event bytes for one connection.
type eventMeter struct {
	tokens float64
	last   time.Time
}

// allow charges n bytes of events at rate bytes/s (burst 2*rate).
func (m *eventMeter) allow(n, rate int64) bool {
	if rate <= 0 {
		return true
	}
	now := time.Now()
	if m.last.IsZero() {
		m.tokens, m.last = float64(2*rate), now
	}
	m.tokens = min(float64(2*rate), m.tokens+now.Sub(m.last).Seconds()*float64(rate))
	m.last = now
	if float64(n) > m.tokens {
		return false
	}
	m.tokens -= float64(n)
	return true
}

// pendingCaptures tracks the commands in flight whose replies may be
// large, by id.
type pendingCaptures struct {
	mu  sync.Mutex
	ids map[int64]bool
	n   atomic.Int32
}

func (p *pendingCaptures) add(id int64) {
	p.mu.Lock()
	if p.ids == nil {
		p.ids = map[int64]bool{}
	}
	if !p.ids[id] {
		p.ids[id] = true
		p.n.Add(1)
	}
	p.mu.Unlock()
}

func (p *pendingCaptures) done(id int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ids[id] {
		return false
	}
	delete(p.ids, id)
	p.n.Add(-1)
	return true
}
