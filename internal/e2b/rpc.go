package e2b

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Connect-RPC dispatch for envd's services.

// rpcCall is one call being served.
type rpcCall struct {
	s  *Server
	q  *envdReq
	r  *http.Request
	cx context.Context
}

// rpcMethod is one procedure of a service.
type rpcMethod struct {
	need rights.Right
	// unary answers a unary call: it decodes its request with decode and
	// returns the response message.
	unary func(c *rpcCall, decode func(any) error) (any, error)
	// stream serves a server-streaming call: the request message is
	// decoded with decode; messages are sent on st; its error ends the
	// stream.
	stream func(c *rpcCall, decode func(any) error, st *stream) error
}

// unaryOf is the unary of a procedure that takes an In: its request is
// decoded into one (a malformed message fails the call) and handed to fn.
func unaryOf[In any](fn func(c *rpcCall, in *In) (any, error)) func(*rpcCall, func(any) error) (any, error) {
	return func(c *rpcCall, decode func(any) error) (any, error) {
		var in In
		if err := decode(&in); err != nil {
			return nil, err
		}
		return fn(c, &in)
	}
}

// streamOf is unaryOf for a server-streaming procedure.
func streamOf[In any](fn func(c *rpcCall, in *In, st *stream) error) func(*rpcCall, func(any) error, *stream) error {
	return func(c *rpcCall, decode func(any) error, st *stream) error {
		var in In
		if err := decode(&in); err != nil {
			return err
		}
		return fn(c, &in, st)
	}
}

// rpc serves the procedures of one service, each behind the gate.
func (s *Server) rpc(service string, methods map[string]rpcMethod) http.HandlerFunc {
	unaryGate := s.envdGate(writeUnaryError, false)
	streamGate := s.envdGate(func(w http.ResponseWriter, err error) { newStream(w).end(err) }, false)
	handlers := map[string]http.Handler{}
	for name, m := range methods {
		route := "POST /" + service + "/" + name
		s.routes = append(s.routes, Route{Pattern: route, Need: m.need, Envd: true, Stream: m.stream != nil})
		if m.stream != nil {
			handlers[name] = streamGate.Wrap(route, m.need, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.serveStream(w, r, m)
			}))
		} else {
			handlers[name] = unaryGate.Wrap(route, m.need, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.serveUnary(w, r, m)
			}))
		}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("method")
		h, ok := handlers[name]
		if !ok {
			writeUnaryError(w, rpcErr(ccUnimplemented, "%s/%s is not served by Paddock's E2B-compatible API", service, clipText(name)))
			return
		}
		h.ServeHTTP(w, r)
	}
}

func (s *Server) serveUnary(w http.ResponseWriter, r *http.Request, m rpcMethod) {
	q, err := envdRequest(r)
	if err != nil {
		writeUnaryError(w, err)
		return
	}
	resp, err := m.unary(&rpcCall{s: s, q: q, r: r, cx: r.Context()}, func(v any) error { return readUnary(r, v) })
	if err != nil {
		writeUnaryError(w, err)
		return
	}
	writeUnary(w, resp)
}

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, m rpcMethod) {
	st := newStream(w)
	q, err := envdRequest(r)
	if err != nil {
		st.end(err)
		return
	}
	err = m.stream(&rpcCall{s: s, q: q, r: r, cx: r.Context()}, func(v any) error { return readStreamRequest(r, v) }, st)
	if err != nil && r.Context().Err() != nil {
		return // the client went away: nobody to tell
	}
	if err != nil && st.started && s.gone(r, q) {
		st.cut()
	}
	st.end(err)
}

// gone says whether the call's sandbox was killed (or reached its end of
// life) while the call ran.
func (s *Server) gone(r *http.Request, q *envdReq) bool {
	sb, err := s.m.Resolve(context.WithoutCancel(r.Context()), q.sc, q.id, 0)
	return errs.CodeOf(err) == errs.CodeNotFound || err == nil && sb.State != sandbox.StateRunning
}

// ctx is the call's context.
func (c *rpcCall) ctx() context.Context { return c.cx }
