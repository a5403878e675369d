package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Relaying an allowed connection without interception: the client's
// first message and every HTTP request it sends are checked before they
// go upstream.

// pipe relays without interception. Bytes from the server flow at once
// (protocols where the server speaks first work); the client's first
// message is checked before any of it is forwarded, and an HTTP client's
// every request is.
func (s *Server) pipe(ctx context.Context, c *conn, up net.Conn, h *head, check func(string, streamKind) error) error {
	downDone := make(chan error, 1)
	go func() {
		n, err := io.Copy(c.client, up)
		c.down.Add(n)
		_ = c.client.CloseWrite()
		downDone <- err
	}()
	upErr := func() error {
		if h == nil {
			hh, err := classify(c.br)
			if err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return refusal{err}
			}
			if err := check(hh.name, hh.kind); err != nil {
				return refusal{err}
			}
			h = &hh
		}
		cw := &countWriter{w: up, n: &c.up}
		if h.kind == kindHTTP {
			upgraded, err := requests(c.br, cw, func(host string) error { return check(host, kindHTTP) }, nil)
			if err != nil || !upgraded {
				return err
			}
		}
		return copyRest(cw, c.br, c.client, up)
	}()
	derr := c.endUp(upErr, up, downDone)
	if upErr != nil {
		return upErr
	}
	if derr != nil && !errors.Is(derr, net.ErrClosed) {
		return derr
	}
	return nil
}

// refusalGrace is how long the answers to requests forwarded before a
// refused one may take to come back.
const refusalGrace = 5 * time.Second

// endUp ends the client-to-server direction after it stopped with err
// and waits for the other direction (downDone). A refusal after requests
// already went upstream lets their answers come back for a moment;
// anything else that went wrong closes everything at once.
func (c *conn) endUp(err error, up any, downDone <-chan error) error {
	cw, _ := up.(interface{ CloseWrite() error })
	var r refusal
	switch {
	case err == nil:
		if cw != nil {
			_ = cw.CloseWrite()
		}
	case errors.As(err, &r) && c.up.Load() > 0 && cw != nil:
		_ = cw.CloseWrite()
		select {
		case derr := <-downDone:
			c.t.kill()
			return derr
		case <-time.After(refusalGrace):
		}
		c.t.kill()
	default:
		c.t.kill()
	}
	return <-downDone
}

// copyRest forwards what br holds and then the rest of the client's
// stream (spliced by the kernel when both ends are TCP).
func copyRest(cw *countWriter, br *bufio.Reader, client *net.TCPConn, up net.Conn) error {
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := cw.Write(b); err != nil {
			return err
		}
		_, _ = br.Discard(n)
	}
	var err error
	var n int64
	if tu, ok := up.(*net.TCPConn); ok {
		n, err = tu.ReadFrom(client)
	} else {
		n, err = io.Copy(up, client)
	}
	cw.n.Add(n)
	return err
}

type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// requests forwards HTTP/1 requests from br to up (responses flow back on
// their own), checking each one's Host. It returns when the client is done
// (EOF), on a refusal, or after forwarding a protocol upgrade (the rest of
// the stream is then not HTTP).
func requests(br *bufio.Reader, up io.Writer, check func(host string) error, rewrite func(*http.Request) error) (upgraded bool, err error) {
	bw := bufio.NewWriterSize(up, 16<<10)
	upgrading := false
	for {
		first, err := br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, err
		}
		// After an upgrade request, bytes that cannot start a request are
		// the new protocol (a WebSocket frame); a refused upgrade leaves
		// the client speaking HTTP, which stays checked.
		if upgrading && (first[0] < 'A' || first[0] > 'Z') {
			return true, nil
		}
		// The head is bounded before it is parsed (http.ReadRequest alone
		// would buffer a header line of any length).
		if _, err := peekHead(br); err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, refusal{fmt.Errorf("malformed HTTP request: %w", err)}
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			return false, refusal{fmt.Errorf("malformed HTTP request: %w", err)}
		}
		if req.Method == "PRI" {
			return false, refusal{errH2C}
		}
		host, err := hostName(req.Host)
		if err != nil || req.Host == "" {
			return false, refusal{errors.New("request without a valid Host")}
		}
		if err := check(host); err != nil {
			return false, refusal{err}
		}
		if rewrite != nil {
			if err := rewrite(req); err != nil {
				return false, refusal{fmt.Errorf("request refused: %w", err)}
			}
		}
		if _, ok := req.Header["User-Agent"]; !ok {
			req.Header["User-Agent"] = []string{""} // Write would add Go's own
		}
		if err := req.Write(bw); err != nil {
			return false, err
		}
		if err := bw.Flush(); err != nil {
			return false, err
		}
		upgrading = isUpgrade(req.Header)
	}
}

func isUpgrade(h http.Header) bool {
	for _, v := range h.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}
