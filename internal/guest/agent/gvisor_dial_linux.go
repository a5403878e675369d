//go:build linux

package agent

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// dialListener is the agent's net.Listener inside gVisor: it dials the
// host's socket, presents the token, and hands each connection to the HTTP
// server, keeping spares idle connections open so that the host never
// waits for a dial. When the host is away (a server restart, a restore in
// progress) it keeps retrying.
type dialListener struct {
	addr  string
	hello []byte
	conns chan net.Conn
	need  chan struct{} // one token per spare to dial
	done  chan struct{}
	once  sync.Once
}

const (
	gvisorSpares   = 2
	gvisorRetryMin = 20 * time.Millisecond
	gvisorRetryMax = 500 * time.Millisecond
)

func newDialListener(addr, token string) *dialListener {
	l := &dialListener{addr: addr, hello: guestapi.Hello(token), conns: make(chan net.Conn),
		need: make(chan struct{}, 64), done: make(chan struct{})}
	for range gvisorSpares {
		l.need <- struct{}{}
	}
	go l.run()
	return l
}

func (l *dialListener) run() {
	delay := gvisorRetryMin
	for {
		select {
		case <-l.need:
		case <-l.done:
			return
		}
		for {
			c, err := l.dial()
			if err == nil {
				delay = gvisorRetryMin
				select {
				case l.conns <- c:
				case <-l.done:
					c.Close()
					return
				}
				break
			}
			select {
			case <-time.After(delay):
			case <-l.done:
				return
			}
			delay = min(delay*2, gvisorRetryMax)
		}
	}
}

func (l *dialListener) dial() (net.Conn, error) {
	c, err := net.DialTimeout("unix", l.addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(l.hello); err != nil {
		c.Close()
		return nil, err
	}
	return &spareConn{UnixConn: c.(*net.UnixConn), l: l}, nil
}

// replace asks for one more spare.
func (l *dialListener) replace() {
	select {
	case l.need <- struct{}{}:
	default:
	}
}

func (l *dialListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *dialListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *dialListener) Addr() net.Addr { return &net.UnixAddr{Name: l.addr, Net: "unix"} }

// spareConn is one of the agent's connections to the host. It asks for a
// replacement when the host first uses it (its first read returns) — data
// or not: a connection that ends unused (the host went away) is replaced
// too. While a read waits it checks every probeEvery that the host's end
// still exists: when gVisor saves a checkpoint of a sandbox that keeps
// running, it closes host-backed connections without waking their
// readers; only a probe (a peeking read: EOF once closed) notices, and a
// dead connection left open would make the next checkpoint fail.
type spareConn struct {
	*net.UnixConn
	l    *dialListener
	used atomic.Bool

	mu       sync.Mutex // orders the server's deadlines with the probe's
	deadline time.Time  // the read deadline the server asked for
}

const probeEvery = time.Second

func (c *spareConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	return c.UnixConn.SetReadDeadline(t)
}

func (c *spareConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	return c.UnixConn.SetDeadline(t)
}

func (c *spareConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		want := c.deadline
		tick := time.Now().Add(probeEvery)
		if !want.IsZero() && want.Before(tick) {
			tick = want
		}
		_ = c.UnixConn.SetReadDeadline(tick)
		c.mu.Unlock()
		n, err := c.UnixConn.Read(p)
		var ne net.Error
		timeout := errors.As(err, &ne) && ne.Timeout()
		c.mu.Lock()
		want = c.deadline
		c.mu.Unlock()
		if n > 0 || !timeout || (!want.IsZero() && !time.Now().Before(want)) {
			c.firstUse()
			return n, err
		}
		if !peerOpen(c.UnixConn) {
			c.firstUse()
			return 0, io.EOF
		}
	}
}

func (c *spareConn) firstUse() {
	if !c.used.Swap(true) {
		c.l.replace()
	}
}

// peerOpen reports whether the host's end of a connection is open: a peek
// that finds data (it arrived just after the read timed out) or nothing
// yet means open; end of stream or an error means gone.
func peerOpen(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	// Control, not Read: the probe runs just after the read deadline
	// passed, and Read would then fail at once without calling the probe
	// (reporting every waiting connection closed, and so cancelling the
	// request it carries). MSG_DONTWAIT keeps the peek from blocking.
	open := false
	_ = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		open = err == unix.EAGAIN || (err == nil && n > 0)
	})
	return open
}
