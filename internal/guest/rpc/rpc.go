// Package rpc is the guest's side of the guest protocol's codec
// (guestapi/codec.go) over HTTP: every route is POST, its body a head
// frame and then raw bytes; every answer is frames. The preamble every
// handler shares — read and bound the head, answer or stream, fail with a
// coded error frame, upgrade — is written once here, and each service
// (files, processes, browser, agent) supplies only what its routes do.
package rpc

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

// Mux is a mux that remembers what it serves (the protocol table is
// checked against it).
type Mux struct {
	mux    *http.ServeMux
	routes []string
}

// NewMux returns an empty mux.
func NewMux() *Mux { return &Mux{mux: http.NewServeMux()} }

// Handle serves route (POST only) with h.
func (m *Mux) Handle(route string, h http.HandlerFunc) {
	m.mux.HandleFunc("POST "+route, h)
	m.routes = append(m.routes, route)
}

// Routes lists what Handle registered, in order.
func (m *Mux) Routes() []string { return append([]string(nil), m.routes...) }

// ServeHTTP serves the registered routes.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.mux.ServeHTTP(w, r) }

// Unary adapts fn to a route with a head of at most maxHead bytes and a
// one-frame answer. fn may read the request's body (what follows the head).
func Unary[Req, Res any](maxHead int, fn func(r *http.Request, req *Req) (Res, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := guestapi.ReadHead(r.Body, maxHead, &req); err != nil {
			WriteError(w, err)
			return
		}
		res, err := fn(r, &req)
		if err != nil {
			WriteError(w, err)
			return
		}
		b, err := json.Marshal(res)
		if err != nil {
			WriteError(w, errs.Wrap(errs.CodeInternal, err, "cannot encode the answer"))
			return
		}
		writeFrame(w, http.StatusOK, guestapi.FrameHead, b)
	}
}

// Streamed adapts fn to a route whose answer is a stream. An error fn
// returns before the stream's head is the answer's status and error
// frame; after it, the stream's last frame.
func Streamed[Req any](maxHead int, fn func(r *http.Request, req *Req, a *Answer) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := guestapi.ReadHead(r.Body, maxHead, &req); err != nil {
			WriteError(w, err)
			return
		}
		a := NewAnswer(w)
		if err := fn(r, &req, a); err != nil {
			a.Fail(err)
		}
	}
}

// Answer is a streamed answer. F writes its frames (safe from several
// goroutines, once Head has been sent).
type Answer struct {
	w       http.ResponseWriter
	F       *guestapi.FrameWriter
	started bool
}

// NewAnswer starts nothing yet: the first frame is Head.
func NewAnswer(w http.ResponseWriter) *Answer {
	var flush func()
	if fl, ok := w.(http.Flusher); ok {
		flush = fl.Flush
	}
	return &Answer{w: w, F: guestapi.NewFrameWriter(w, 64<<10, flush)}
}

// ResponseWriter is the answer's writer (for EnableFullDuplex).
func (a *Answer) ResponseWriter() http.ResponseWriter { return a.w }

// Head starts the stream: status 200 and the head frame. Call it once,
// before any other frame and before frames come from other goroutines.
// An error means the host is gone.
func (a *Answer) Head(v any) error {
	a.started = true
	a.w.Header().Set("Content-Type", guestapi.ContentType)
	a.w.WriteHeader(http.StatusOK)
	return a.F.SendJSON(guestapi.FrameHead, v)
}

// End ends the stream with its result.
func (a *Answer) End(v any) error { return a.F.SendJSON(guestapi.FrameEnd, v) }

// Fail ends the answer with err.
func (a *Answer) Fail(err error) {
	if !a.started {
		WriteError(a.w, err)
		return
	}
	_ = a.F.SendJSON(guestapi.FrameError, guestapi.ErrorOf(err))
}

// WriteError answers err: its status (for humans with curl; the host reads
// the frame) and its error frame, which carries the code and the public
// message only.
func WriteError(w http.ResponseWriter, err error) {
	status := errs.HTTPStatus(errs.CodeOf(err))
	if _, ok := guestapi.IsRange(err); ok {
		status = http.StatusRequestedRangeNotSatisfiable
	}
	b, _ := json.Marshal(guestapi.ErrorOf(err))
	writeFrame(w, status, guestapi.FrameError, b)
}

func writeFrame(w http.ResponseWriter, status int, typ byte, payload []byte) {
	b := guestapi.AppendFrame(make([]byte, 0, guestapi.FrameHeaderLen+len(payload)), typ, payload)
	h := w.Header()
	h.Set("Content-Type", guestapi.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Upgradable reports whether r asks to switch to protocol.
func Upgradable(r *http.Request, protocol string) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", protocol)
}

// Upgrade answers 101 and hands over the connection (the request's head
// has been read: what follows on it is the protocol's).
func Upgrade(w http.ResponseWriter, protocol string) (net.Conn, *bufio.ReadWriter, error) {
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

// Slots bounds concurrent work of one kind.
type Slots chan struct{}

// NewSlots allows n at once.
func NewSlots(n int) Slots { return make(Slots, n) }

// TryAcquire takes a slot if one is free.
func (s Slots) TryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release gives a slot back.
func (s Slots) Release() { <-s }

// Clip shortens s for an error message, keeping it valid UTF-8.
func Clip(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
