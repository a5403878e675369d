package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
)

// intercepted relays a connection an Interceptor asked to see: TLS (if the
// client speaks it) is terminated with the plan's certificate and
// re-originated to the destination, and every request passes through
// plan.Request. The Host of every request must be the allowed name.
func (s *Server) intercepted(ctx context.Context, c *conn, up net.Conn, name string, h head, plan *Plan,
	check func(string, streamKind) error) error {
	var cli io.ReadWriter = bufferedConn{Conn: c.client, r: c.br}
	var upc io.ReadWriter = up
	cbr := c.br
	switch h.kind {
	case kindTLS:
		if plan.ServerTLS == nil {
			return errors.New("the interceptor gave no certificate for a TLS client")
		}
		scfg := plan.ServerTLS.Clone()
		scfg.NextProtos = []string{"http/1.1"} // requests are parsed as HTTP/1
		tc := tls.Server(bufferedConn{Conn: c.client, r: c.br}, scfg)
		c.t.add(tc)
		hctx, cancel := context.WithTimeout(ctx, s.o.HeaderTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			return fmt.Errorf("TLS handshake with the sandbox: %w", err)
		}
		ucfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if plan.UpstreamTLS != nil {
			ucfg = plan.UpstreamTLS.Clone()
		}
		if ucfg.ServerName == "" {
			ucfg.ServerName = name
		}
		ucfg.NextProtos = []string{"http/1.1"}
		tu := tls.Client(up, ucfg)
		c.t.add(tu)
		hctx, cancel = context.WithTimeout(ctx, s.o.DialTimeout)
		err = tu.HandshakeContext(hctx)
		cancel()
		if err != nil {
			return fmt.Errorf("TLS handshake with %s: %w", name, err)
		}
		cli, upc, cbr = tc, tu, bufio.NewReaderSize(tc, peekBufSize)
	case kindHTTP:
	default:
		return errors.New("an intercepted connection must speak HTTP/1.1 or TLS")
	}
	w := newRespWatch()
	w.start() // the client speaks HTTP (in TLS or not)
	defer w.stop()
	downDone := make(chan error, 1)
	go func() {
		err := w.copyDown(cli, upc, &c.down)
		if cw, ok := cli.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		downDone <- err
	}()
	cw := &countWriter{w: upc, n: &c.up}
	hostCheck := func(host string) error {
		if host != name {
			return fmt.Errorf("HTTP Host %q does not match the intercepted name %s", host, name)
		}
		return check(host, kindHTTP)
	}
	upgraded, err := requests(cbr, cw, hostCheck, plan.Request, w)
	if err == nil && upgraded {
		if n := cbr.Buffered(); n > 0 {
			b, _ := cbr.Peek(n)
			_, err = cw.Write(b)
			_, _ = cbr.Discard(n)
		}
		if err == nil {
			_, err = io.Copy(cw, cli)
		}
	}
	derr := c.endUp(err, upc, downDone)
	if err != nil {
		return err
	}
	if derr != nil && !errors.Is(derr, net.ErrClosed) {
		return derr
	}
	return nil
}

// bufferedConn is a connection whose first bytes were peeked into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// CloseWrite half-closes the underlying TCP connection.
func (b bufferedConn) CloseWrite() error {
	if tc, ok := b.Conn.(*net.TCPConn); ok {
		return tc.CloseWrite()
	}
	return nil
}
