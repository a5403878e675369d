package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// The proxy. Every TCP connection a sandbox opens arrives here: redirected
// by the host's nftables (transparent: its original destination is read
// from conntrack) or addressed to the proxy itself (explicit: HTTP_PROXY,
// CONNECT and absolute-URI requests). The sandbox is whoever owns the
// source address.

func (s *Server) acceptLoop(ln net.Listener) {
	backoff := 5 * time.Millisecond
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("egress: accept", "err", err)
			time.Sleep(backoff)
			if backoff < time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = 5 * time.Millisecond
		tc, ok := c.(*net.TCPConn)
		if !ok {
			_ = c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(tc)
		}()
	}
}

// reset closes c with a TCP RST: the client fails at once instead of
// waiting on a half-open connection.
func reset(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}

func tcpAddrPort(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	}
	return netip.AddrPort{}
}

func (s *Server) handle(c *net.TCPConn) {
	src := tcpAddrPort(c.RemoteAddr())
	sb := s.source(src.Addr())
	if sb == nil {
		// Not a sandbox: the nftables rules keep everyone else away from
		// this port; this is the second lock.
		s.log.Debug("egress: connection from an unknown source refused", "src", src.String())
		reset(c)
		return
	}
	// Slots are counted per sandbox, per tenant and in all, and taken
	// before anything waits on the client: connections that send nothing
	// (to refused addresses, say) hold one of their own tenant's slots
	// only, and only until FirstByteTimeout (resource starvation, issue 14
	// item 9).
	release, err := s.conns.acquire(sb.tenantKey(s.o.TenantOf), sb.id)
	if err != nil {
		reset(c) // released at once; reported after
		s.report(context.Background(), sb, Decision{Sandbox: sb.id, Kind: "connect", Mode: sb.policy().Mode, Reason: err.Error()})
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := &tracked{}
	t.add(c)
	t.add(closerFunc(func() error { release(); cancel(); return nil }))
	if !sb.track(t) {
		reset(c)
		return
	}
	defer sb.untrack(t)
	defer t.kill()
	dst, err := originalDst(c)
	if err != nil {
		s.log.Warn("egress: no original destination", "sandbox", sb.id, "err", err)
		reset(c)
		return
	}
	if dst == tcpAddrPort(c.LocalAddr()) || s.o.Explicit != nil && s.o.Explicit(dst) {
		s.explicit(ctx, sb, t, c)
		return
	}
	s.transparent(ctx, sb, t, c, dst)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// conn is one proxied connection being decided and relayed.
type conn struct {
	s      *Server
	sb     *sandbox
	t      *tracked
	client *net.TCPConn
	br     *bufio.Reader
	d      Decision
	start  time.Time
	up     atomic.Int64
	down   atomic.Int64
	// established: an explicit client was told its tunnel is open, so a
	// refusal can no longer be an HTTP answer.
	established bool
}

func (s *Server) newConn(sb *sandbox, t *tracked, c *net.TCPConn, via string) *conn {
	return &conn{s: s, sb: sb, t: t, client: c, br: bufio.NewReaderSize(c, peekBufSize), start: time.Now(),
		d: Decision{Sandbox: sb.id, Kind: "connect", Mode: sb.policy().Mode, Via: via}}
}

func (c *conn) setDst(name string, dst netip.AddrPort) {
	c.d.Name, c.d.Addr, c.d.Port = name, dst.Addr().String(), int(dst.Port())
}

// refuse reports a refusal; the caller then answers the client.
func (c *conn) refuse(ctx context.Context, format string, args ...any) {
	c.d.Allowed = false
	c.d.Reason = fmt.Sprintf(format, args...)
	c.d.Duration = time.Since(c.start)
	c.s.report(ctx, c.sb, c.d)
}

// refusal is a relayed connection stopped because of what the client
// sent (a mismatching name, a malformed or disallowed request).
type refusal struct{ error }

// finish reports an allowed connection when it ends. One refused before a
// byte of it went upstream is reported as refused.
func (c *conn) finish(ctx context.Context, err error) {
	c.d.Allowed = true
	c.d.BytesUp, c.d.BytesDown = c.up.Load(), c.down.Load()
	c.d.Duration = time.Since(c.start)
	var r refusal
	switch {
	case errors.As(err, &r) && c.d.BytesUp == 0:
		c.d.Allowed = false
		c.d.Reason = r.Error()
	case errors.As(err, &r):
		c.d.Reason += "; then refused: " + r.Error()
	case err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF):
		c.d.Reason += "; ended: " + err.Error()
	}
	c.s.report(ctx, c.sb, c.d)
}
