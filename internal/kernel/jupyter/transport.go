package jupyter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/transport"
)

// transportName is the zmq4 transport Paddock's client dials: TCP whose
// read side enforces frame limits before zmq4 allocates anything.
const transportName = "paddock-tcp"

// Frame limits. zmq4 allocates a frame's whole declared size (up to 2^63
// bytes) before reading it, so a kernel — which runs whatever code the
// sandbox's user sends — could make the guest allocate without bound
// (memory exhaustion, CWE-789). The limiter below sees every frame header
// first and replaces an oversized frame by an empty one, skipping its body:
// the message then fails its signature check and is dropped, the
// connection survives, and DroppedBytes says how much was lost.
const (
	// MaxFrame is the largest frame passed on.
	MaxFrame = 32 << 20
	// MaxMessage bounds the frames of one message together.
	MaxMessage = 48 << 20
	// maxFramesPerMessage bounds how many frames one message may have.
	maxFramesPerMessage = 64
	zmtpGreeting        = 64
)

func init() {
	if err := zmq4.RegisterTransport(transportName, limitedTCP{}); err != nil {
		panic(err) // only a second registration of the same name: a programming error
	}
}

type limitedTCP struct{}

func (limitedTCP) Dial(ctx context.Context, d transport.Dialer, addr string) (net.Conn, error) {
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &limitedConn{Conn: c, lim: newFrameLimiter(MaxFrame, MaxMessage)}, nil
}

func (limitedTCP) Listen(ctx context.Context, addr string) (net.Listener, error) {
	return nil, errors.New("jupyter: the paddock-tcp transport only dials")
}

func (limitedTCP) Addr(ep string) (string, error) {
	_, _, err := net.SplitHostPort(ep)
	return ep, err
}

// dropped counts bytes dropped by every limiter (for tests and reports).
var dropped atomic.Int64

// DroppedBytes is the number of frame bytes dropped so far because a frame
// or message was over the limits.
func DroppedBytes() int64 { return dropped.Load() }

type limitedConn struct {
	net.Conn
	lim *frameLimiter
	in  []byte
}

func (c *limitedConn) Read(p []byte) (int, error) {
	for {
		if n := c.lim.take(p); n > 0 {
			return n, nil
		}
		if c.in == nil {
			c.in = make([]byte, 64<<10)
		}
		n, err := c.Conn.Read(c.in)
		if n > 0 {
			if ferr := c.lim.feed(c.in[:n]); ferr != nil {
				return 0, ferr
			}
			continue
		}
		if err != nil {
			return 0, err
		}
	}
}

// frameLimiter rewrites a ZMTP 3 byte stream (greeting, then frames:
// flags, a 1- or 8-byte size, the body), replacing every frame over the
// limits by an empty one.
type frameLimiter struct {
	maxFrame, maxMsg uint64

	out []byte // bytes ready for the reader

	greet   int    // greeting bytes still to pass
	hdr     []byte // partial frame header
	body    uint64 // body bytes still to pass
	skip    uint64 // body bytes still to drop
	msg     uint64 // bytes of the current message so far
	frames  int    // frames of the current message so far
	dropped int64
}

func newFrameLimiter(maxFrame, maxMsg uint64) *frameLimiter {
	return &frameLimiter{maxFrame: maxFrame, maxMsg: maxMsg, greet: zmtpGreeting}
}

// take moves up to len(p) ready bytes into p.
func (l *frameLimiter) take(p []byte) int {
	n := copy(p, l.out)
	l.out = l.out[n:]
	if len(l.out) == 0 {
		l.out = l.out[:0:0]
	}
	return n
}

const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// feed parses b and appends what passes to out.
func (l *frameLimiter) feed(b []byte) error {
	for len(b) > 0 {
		switch {
		case l.greet > 0:
			n := min(l.greet, len(b))
			l.out = append(l.out, b[:n]...)
			l.greet -= n
			b = b[n:]
		case l.body > 0:
			n := min(l.body, uint64(len(b)))
			l.out = append(l.out, b[:n]...)
			l.body -= n
			b = b[n:]
		case l.skip > 0:
			n := min(l.skip, uint64(len(b)))
			l.skip -= n
			l.dropped += int64(n)
			dropped.Add(int64(n))
			b = b[n:]
		default:
			l.hdr = append(l.hdr, b[0])
			b = b[1:]
			flags := l.hdr[0]
			need := 2
			if flags&flagLong != 0 {
				need = 9
			}
			if len(l.hdr) < need {
				continue
			}
			if err := l.header(flags); err != nil {
				return err
			}
			l.hdr = l.hdr[:0]
		}
	}
	return nil
}

// header handles a complete frame header in l.hdr.
func (l *frameLimiter) header(flags byte) error {
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return fmt.Errorf("jupyter: bad ZMTP frame flags %#x", flags)
	}
	var size uint64
	if flags&flagLong != 0 {
		size = binary.BigEndian.Uint64(l.hdr[1:9])
	} else {
		size = uint64(l.hdr[1])
	}
	l.frames++
	if l.frames > maxFramesPerMessage {
		return errors.New("jupyter: message has too many frames")
	}
	if size > l.maxFrame || l.msg+size > l.maxMsg {
		if flags&flagCommand != 0 {
			return errors.New("jupyter: oversized ZMTP command")
		}
		// An empty frame with the same MORE flag keeps the message's
		// structure; its signature no longer matches.
		l.out = append(l.out, flags&flagMore, 0)
		l.skip = size
	} else {
		l.out = append(l.out, l.hdr...)
		l.body = size
		l.msg += size
	}
	if flags&flagMore == 0 || flags&flagCommand != 0 {
		l.msg, l.frames = 0, 0
	}
	return nil
}
