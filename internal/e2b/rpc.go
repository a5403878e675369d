package e2b

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock/internal/auth"
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
	scope auth.Scope
	// unary answers a unary call: it decodes its request with decode and
	// returns the response message.
	unary func(c *rpcCall, decode func(any) error) (any, error)
	// stream serves a server-streaming call: the request message is
	// decoded with decode; messages are sent on st; its error ends the
	// stream.
	stream func(c *rpcCall, decode func(any) error, st *stream) error
}

// rpc serves the procedures of one service.
func (s *Server) rpc(service string, methods map[string]rpcMethod) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("method")
		m, ok := methods[name]
		if !ok {
			writeUnaryError(w, rpcErr(ccUnimplemented, "%s/%s is not served by Paddock's E2B-compatible API", service, clipText(name)))
			return
		}
		route := "POST /" + service + "/" + name
		if m.stream != nil {
			s.serveStream(w, r, route, m)
			return
		}
		s.serveUnary(w, r, route, m)
	}
}

func (s *Server) serveUnary(w http.ResponseWriter, r *http.Request, route string, m rpcMethod) {
	q, err := s.envdAuth(r)
	if err != nil {
		writeUnaryError(w, err)
		return
	}
	w, done := s.audited(w, r, q.p, route, writeUnaryError)
	if w == nil {
		return
	}
	defer done()
	if err := q.reach(m.scope); err != nil {
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

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, route string, m rpcMethod) {
	st := newStream(w)
	q, err := s.envdAuth(r)
	if err != nil {
		st.end(err)
		return
	}
	fail := func(w http.ResponseWriter, err error) { st.end(err) }
	aw, done := s.audited(w, r, q.p, route, fail)
	if aw == nil {
		return
	}
	defer done()
	st.w = aw // the record sees the status
	if err := q.reach(m.scope); err != nil {
		st.end(err)
		return
	}
	err = m.stream(&rpcCall{s: s, q: q, r: r, cx: r.Context()}, func(v any) error { return readStreamRequest(r, v) }, st)
	if err != nil && r.Context().Err() != nil {
		return // the client went away: nobody to tell
	}
	st.end(err)
}

// ctx is the call's context.
func (c *rpcCall) ctx() context.Context { return c.cx }
