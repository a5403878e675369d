//go:build linux

package guest

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// The guest's side of the codec (guestapi/codec.go) over HTTP: every
// route is POST, its body a head frame and then raw bytes; every answer is
// frames. Handlers are written once here — read the head, answer, stream,
// fail — and each service supplies only what its routes do.

// routes is a mux that remembers what it serves (the protocol table is
// checked against it).
type routes struct {
	mux   *http.ServeMux
	names []string
}

func newRoutes() *routes { return &routes{mux: http.NewServeMux()} }

func (m *routes) handle(route string, h http.HandlerFunc) {
	m.mux.HandleFunc("POST "+route, h)
	m.names = append(m.names, route)
}

// unary adapts fn to a route with a head of at most maxHead bytes and a
// one-frame answer.
func unary[Req, Res any](maxHead int, fn func(r *http.Request, req *Req) (Res, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := guestapi.ReadHead(r.Body, maxHead, &req); err != nil {
			writeError(w, err)
			return
		}
		res, err := fn(r, &req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeAnswer(w, res)
	}
}

// streamed adapts fn to a route whose answer is a stream. An error fn
// returns before the stream's head is the answer's status and error
// frame; after it, the stream's last frame.
func streamed[Req any](maxHead int, fn func(r *http.Request, req *Req, a *answer) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := guestapi.ReadHead(r.Body, maxHead, &req); err != nil {
			writeError(w, err)
			return
		}
		a := newAnswer(w)
		if err := fn(r, &req, a); err != nil {
			a.fail(err)
		}
	}
}

// answer is a streamed answer.
type answer struct {
	w       http.ResponseWriter
	fw      *guestapi.FrameWriter
	started bool
}

func newAnswer(w http.ResponseWriter) *answer {
	var flush func()
	if fl, ok := w.(http.Flusher); ok {
		flush = fl.Flush
	}
	return &answer{w: w, fw: guestapi.NewFrameWriter(w, 64<<10, flush)}
}

// head starts the stream: status 200 and the head frame. Call it once,
// before any other frame and before frames come from other goroutines.
func (a *answer) head(v any) error {
	a.started = true
	a.w.Header().Set("Content-Type", guestapi.ContentType)
	a.w.WriteHeader(http.StatusOK)
	return a.fw.SendJSON(guestapi.FrameHead, v)
}

// end ends the stream with its result.
func (a *answer) end(v any) error { return a.fw.SendJSON(guestapi.FrameEnd, v) }

// fail ends the answer with err.
func (a *answer) fail(err error) {
	if !a.started {
		writeError(a.w, err)
		return
	}
	_ = a.fw.SendJSON(guestapi.FrameError, guestapi.ErrorOf(err))
}

// writeError answers err: its status (for humans with curl; the host reads
// the frame) and its error frame.
func writeError(w http.ResponseWriter, err error) {
	status := errs.HTTPStatus(errs.CodeOf(err))
	if _, ok := guestapi.IsRange(err); ok {
		status = http.StatusRequestedRangeNotSatisfiable
	}
	b, _ := json.Marshal(guestapi.ErrorOf(err))
	writeFrame(w, status, guestapi.FrameError, b)
}

// writeAnswer answers a unary route's result.
func writeAnswer(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, errs.Wrap(errs.CodeInternal, err, "cannot encode the answer"))
		return
	}
	writeFrame(w, http.StatusOK, guestapi.FrameHead, b)
}

func writeFrame(w http.ResponseWriter, status int, typ byte, payload []byte) {
	b := guestapi.AppendFrame(make([]byte, 0, guestapi.FrameHeaderLen+len(payload)), typ, payload)
	h := w.Header()
	h.Set("Content-Type", guestapi.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// upgradable reports whether r asks to switch to protocol.
func upgradable(r *http.Request, protocol string) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", protocol)
}

// upgrade answers 101 and hands over the connection (the request's head
// has been read: what follows on it is the protocol's).
func upgrade(w http.ResponseWriter, protocol string) (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, errs.Wrap(errs.CodeInternal, err, "cannot upgrade the connection")
	}
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + protocol + "\r\n\r\n")
	if err := brw.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, brw, nil
}

func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// semaphore bounds concurrent work of one kind.
type semaphore chan struct{}

func (s semaphore) TryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s semaphore) Release() { <-s }
