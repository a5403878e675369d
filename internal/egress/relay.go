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
	w := newRespWatch()
	downDone := make(chan error, 1)
	go func() {
		err := w.copyDown(c.client, up, &c.down)
		_ = c.client.CloseWrite()
		downDone <- err
	}()
	upErr := func() error {
		defer w.stop() // whatever the client speaks now, it is not watched
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
			w.start()
			upgraded, err := requests(c.br, cw, func(host string) error { return check(host, kindHTTP) }, nil, w)
			if err != nil || !upgraded {
				return err
			}
		} else {
			w.stop()
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
// their own, followed by w), checking each one's Host. It returns when the
// client is done (EOF), on a refusal, or once the upstream has switched
// protocols (101) in answer to an upgrade request: only then is the rest
// of the stream not HTTP. w nil never switches.
//
// HTTP request smuggling (issue 14 item 4): a request that merely asks for
// an upgrade proves nothing. Were the relay to turn opaque on the asking
// (as it once did, at the first byte that could not start a request), a
// client would ask, let the server answer 200, and send a request for a
// virtual host the policy forbids on the same connection (a lower-case
// method, a leading CRLF) unchecked. So every request stays parsed and
// checked until the upstream's own answer is 101.
func requests(br *bufio.Reader, up io.Writer, check func(host string) error, rewrite func(*http.Request) error, w *respWatch) (upgraded bool, err error) {
	bw := bufio.NewWriterSize(up, 16<<10)
	for {
		if _, err := br.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, err
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
		upgrade := isUpgrade(req.Header)
		if upgrade && headerHasToken(req.Header, "Upgrade", "h2c") {
			// h2c after a 101 would carry streams for any :authority
			// unchecked: the server is asked for HTTP/1.1 instead.
			req.Header.Del("Upgrade")
			req.Header.Del("HTTP2-Settings")
			upgrade = false
		}
		w.sent(req.Method, upgrade)
		if err := req.Write(bw); err != nil {
			return false, err
		}
		if err := bw.Flush(); err != nil {
			return false, err
		}
		if upgrade && w.await() {
			return true, nil
		}
	}
}

// isUpgrade reports whether a request asks to switch protocols: an
// Upgrade header, and "upgrade" among the Connection tokens.
func isUpgrade(h http.Header) bool {
	return h.Get("Upgrade") != "" && headerHasToken(h, "Connection", "upgrade")
}

// headerHasToken reports whether a comma-separated header holds tok
// (names and tokens are case-insensitive).
func headerHasToken(h http.Header, name, tok string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), tok) {
				return true
			}
		}
	}
	return false
}
