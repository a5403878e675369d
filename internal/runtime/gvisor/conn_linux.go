//go:build linux

package gvisor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// guestLink is the host's end of a sandbox's service channel: it accepts
// the connections the agent dials (guestapi.GVisorBoot), keeps those that
// present the token, and relays each connection made to a local proxy
// socket onto one of them, so that guestapi.Client — which dials a Unix
// socket — works unchanged.
type guestLink struct {
	token string
	log   *slog.Logger
	in    *net.UnixListener // in the control directory; the agent dials it
	proxy *net.UnixListener // guestapi.Client dials it
	pool  chan net.Conn     // verified idle connections from the agent
	ready chan struct{}     // closed at the first verified connection
	once  sync.Once
	done  chan struct{}
	shake chan struct{} // bounds handshakes in progress
	wg    sync.WaitGroup
	close sync.Once
}

const (
	helloTimeout  = 2 * time.Second
	maxHandshakes = 8
	maxSpares     = 16
	// takeTimeout bounds how long a relayed connection waits for the
	// agent to offer one (it keeps spares; a wait means it is not there).
	takeTimeout = 15 * time.Second
)

func newToken() (string, error) {
	var b [guestapi.TokenLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// listenUnix listens at path, replacing a stale socket file.
func listenUnix(path string) (*net.UnixListener, error) {
	_ = os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}

// newGuestLink listens at inPath (for the agent) and proxyPath (for the
// client).
func newGuestLink(inPath, proxyPath, token string, log *slog.Logger) (*guestLink, error) {
	in, err := listenUnix(inPath)
	if err != nil {
		return nil, err
	}
	// The gofer (a host process running as root) connects on the agent's
	// behalf; nobody else on the host needs to.
	if err := os.Chmod(inPath, 0o600); err != nil {
		in.Close()
		return nil, err
	}
	proxy, err := listenUnix(proxyPath)
	if err != nil {
		in.Close()
		return nil, err
	}
	l := &guestLink{token: token, log: log, in: in, proxy: proxy, pool: make(chan net.Conn, maxSpares),
		ready: make(chan struct{}), done: make(chan struct{}), shake: make(chan struct{}, maxHandshakes)}
	l.wg.Add(2)
	go l.acceptAgent()
	go l.acceptClient()
	return l, nil
}

// acceptAgent takes the agent's connections. Anything in the sandbox that
// can reach the socket could dial it (the agent hides it, but the host
// does not rely on that): a connection must present the token within
// helloTimeout, only a few handshakes run at once, and the pool of idle
// connections is bounded.
func (l *guestLink) acceptAgent() {
	defer l.wg.Done()
	for {
		c, err := l.in.AcceptUnix()
		if err != nil {
			return
		}
		select {
		case l.shake <- struct{}{}:
		default:
			c.Close()
			continue
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer func() { <-l.shake }()
			_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
			if err := guestapi.CheckHello(c, l.token); err != nil {
				// A connection that ends before its hello is an agent that
				// died dialing; a wrong hello is someone else.
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					l.log.Warn("gvisor: refused a connection without the agent's token")
				}
				c.Close()
				return
			}
			_ = c.SetReadDeadline(time.Time{})
			select {
			case l.pool <- c:
				l.once.Do(func() { close(l.ready) })
			case <-l.done:
				c.Close()
			default:
				c.Close() // more spares than anyone needs
			}
		}()
	}
}

// take returns an idle connection of the agent, waiting for one. A
// pooled connection that has ended meanwhile (gVisor closes them all when
// it saves a checkpoint; the agent dials new ones) is dropped.
func (l *guestLink) take() (net.Conn, error) {
	t := time.NewTimer(takeTimeout)
	defer t.Stop()
	for {
		select {
		case c := <-l.pool:
			if alive(c.(*net.UnixConn)) {
				return c, nil
			}
			c.Close()
		case <-l.done:
			return nil, net.ErrClosed
		case <-t.C:
			return nil, errors.New("the sandbox's agent offered no connection")
		}
	}
}

// drain drops the idle connections (after a checkpoint: gVisor closed
// them).
func (l *guestLink) drain() {
	for {
		select {
		case c := <-l.pool:
			c.Close()
		default:
			return
		}
	}
}

// alive reports whether an idle connection of the agent is still open:
// the agent sends nothing before the host's request, so a readable one
// has ended.
func alive(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		ok = err == unix.EAGAIN
		return true
	})
	return ok
}

func (l *guestLink) acceptClient() {
	defer l.wg.Done()
	for {
		c, err := l.proxy.AcceptUnix()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			g, err := l.take()
			if err != nil {
				c.Close()
				return
			}
			relay(c, g.(*net.UnixConn))
		}()
	}
}

// relay copies both ways until both directions are done, passing each
// half-close on.
func relay(a, b *net.UnixConn) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(b, a)
		_ = b.CloseWrite()
	}()
	_, _ = io.Copy(a, b)
	_ = a.CloseWrite()
	wg.Wait()
	a.Close()
	b.Close()
}

// Close stops listening and drops idle connections. Relays in progress end
// with their connections (the agent's side goes when the sandbox does).
func (l *guestLink) Close() {
	l.close.Do(func() {
		close(l.done)
		l.in.Close()
		l.proxy.Close()
		l.drain()
	})
}
