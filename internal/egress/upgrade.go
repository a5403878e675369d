package egress

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// Protocol upgrades on relayed HTTP/1 connections. The relay may stop
// parsing a client's requests only once the upstream has answered an
// upgrade request with 101 Switching Protocols (HTTP request smuggling
// through Connection: Upgrade, issue 14 item 4). The upstream's bytes
// still flow to the client at once; a respWatch reads a copy of them to
// learn which answer is which.

// Watch states.
const (
	watchPending int32 = iota // the client's protocol is not known yet: bytes pass unread
	watchOn                   // HTTP: every answer is followed
	watchOff                  // not HTTP, switched, or given up: bytes pass unread
)

// watchedReq is one request forwarded upstream, in order.
type watchedReq struct {
	method  string
	upgrade bool
}

var errWatchStopped = errors.New("response watch stopped")

// respWatch follows the upstream's answers on one relayed connection. Its
// methods but copyDown are safe on a nil *respWatch (nothing is watched and
// no upgrade is ever granted).
type respWatch struct {
	state   atomic.Int32
	once    sync.Once // start
	stopped sync.Once
	pr      *io.PipeReader
	pw      *io.PipeWriter
	reqs    chan watchedReq // forwarded requests not yet answered
	verdict chan bool       // the answer to the upgrade request awaited
	done    chan struct{}   // the follower stopped
}

func newRespWatch() *respWatch {
	pr, pw := io.Pipe()
	return &respWatch{pr: pr, pw: pw, reqs: make(chan watchedReq, 256), verdict: make(chan bool, 1), done: make(chan struct{})}
}

// start follows answers from now on (the client speaks HTTP).
func (w *respWatch) start() {
	if w == nil {
		return
	}
	w.once.Do(func() {
		if w.state.CompareAndSwap(watchPending, watchOn) {
			go w.follow()
		} else {
			close(w.done)
		}
	})
}

// stop stops following; no upgrade is granted after it.
func (w *respWatch) stop() {
	if w == nil {
		return
	}
	w.stopped.Do(func() {
		w.state.Store(watchOff)
		_ = w.pr.CloseWithError(errWatchStopped)
		w.once.Do(func() { close(w.done) }) // never started
	})
}

// sent records a request about to be written upstream.
func (w *respWatch) sent(method string, upgrade bool) {
	if w == nil {
		return
	}
	select {
	case w.reqs <- watchedReq{method: method, upgrade: upgrade}:
	case <-w.done:
	}
}

// await waits for the answer to the upgrade request just sent and reports
// whether it was 101. A follower that stopped (the upstream closed, sent
// something that is not HTTP) grants nothing.
func (w *respWatch) await() bool {
	if w == nil {
		return false
	}
	select {
	case ok := <-w.verdict:
		return ok
	case <-w.done:
		select {
		case ok := <-w.verdict:
			return ok
		default:
			return false
		}
	}
}

// copyDown copies the upstream's bytes to the client, handing a copy to
// the follower while it follows; counted in n. Once nothing is followed
// the rest is copied directly (spliced by the kernel between two TCP
// connections).
func (w *respWatch) copyDown(dst io.Writer, src io.Reader, n *atomic.Int64) error {
	defer w.pw.Close()
	buf := make([]byte, 32<<10)
	for w.state.Load() != watchOff {
		m, rerr := src.Read(buf)
		if m > 0 {
			k, werr := dst.Write(buf[:m])
			n.Add(int64(k))
			if werr != nil {
				return werr
			}
			if w.state.Load() == watchOn {
				if _, err := w.pw.Write(buf[:m]); err != nil {
					w.stop() // the follower is gone: nothing more to follow
				}
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
	}
	k, err := io.Copy(dst, src)
	n.Add(k)
	return err
}

// give hands the verdict on the awaited upgrade request over (the relay
// awaits one at a time; an unread one is dropped).
func (w *respWatch) give(ok bool) {
	select {
	case w.verdict <- ok:
	default:
	}
}

// follow parses the answers, in order, each against the request it
// answers (a HEAD's answer has no body). It stops after a 101 to an
// upgrade request, or at the first thing it cannot parse (then no
// upgrade is ever granted on the connection: fail closed).
func (w *respWatch) follow() {
	defer close(w.done)
	defer w.stop()
	br := bufio.NewReaderSize(w.pr, peekBufSize)
	for {
		if _, err := br.Peek(1); err != nil {
			return
		}
		// The request was recorded before it went upstream, so it is
		// here by the time its answer is; an answer to no request (a 408
		// before closing) is read as one to a GET.
		r := watchedReq{method: http.MethodGet}
		select {
		case r = <-w.reqs:
		default:
		}
		for {
			if err := peekResponseHead(br); err != nil {
				return
			}
			resp, err := http.ReadResponse(br, &http.Request{Method: r.method})
			if err != nil {
				return
			}
			if resp.StatusCode == http.StatusSwitchingProtocols {
				if r.upgrade {
					w.give(true)
				}
				return // what follows is not HTTP
			}
			if resp.StatusCode < 200 {
				continue // interim (100, 103): the answer is still to come
			}
			_, err = io.Copy(io.Discard, resp.Body)
			if r.upgrade {
				w.give(false)
			}
			if err != nil {
				return
			}
			break
		}
	}
}
