package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

func (s *Server) execRoutes() {
	s.authed("POST /v1/sandboxes/{id}/exec", rights.Exec, s.exec)
}

// ExecResponse is the buffered answer of an exec.
type ExecResponse = wire.ExecResponse

// bufferOut collects output; the guest already caps each stream.
type bufferOut struct{ out, err bytes.Buffer }

func (b *bufferOut) Stdout(p []byte) error { b.out.Write(p); return nil }
func (b *bufferOut) Stderr(p []byte) error { b.err.Write(p); return nil }

// ndjsonOut streams output as {"stdout":...} / {"stderr":...} lines.
type ndjsonOut struct {
	mu  sync.Mutex
	enc *json.Encoder
	fl  http.Flusher
}

func (n *ndjsonOut) emit(v any) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.enc.Encode(v); err != nil {
		return err
	}
	if n.fl != nil {
		n.fl.Flush()
	}
	return nil
}

func (n *ndjsonOut) Stdout(p []byte) error {
	s := string(p)
	return n.emit(wire.ExecOutput{Stdout: &s})
}

func (n *ndjsonOut) Stderr(p []byte) error {
	s := string(p)
	return n.emit(wire.ExecOutput{Stderr: &s})
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	req, ok := decoded[sandbox.ExecRequest](w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if !strings.Contains(r.Header.Get("Accept"), "application/x-ndjson") {
		var out bufferOut
		res, err := s.m.Exec(r.Context(), sc, id, req, nil, &out, false)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, ExecResponse{ExecResult: res, Stdout: out.out.String(), Stderr: out.err.String()})
		return
	}
	// Streaming: errors found before the command starts are ordinary error
	// answers; after the first byte they arrive as an {"error":...} line.
	sw := &lazyStream{w: w}
	out := &ndjsonOut{enc: json.NewEncoder(sw)}
	out.fl = sw
	res, err := s.m.Exec(r.Context(), sc, id, req, nil, out, true)
	if err != nil {
		if !sw.started {
			writeError(w, r, err)
			return
		}
		var body ErrorBody
		body.Error.Code, body.Error.Message = string(errs.CodeOf(err)), errs.Public(err)
		_ = out.emit(body)
		return
	}
	_ = out.emit(res)
}

// lazyStream sends the NDJSON headers with the first byte of output.
type lazyStream struct {
	w       http.ResponseWriter
	started bool
}

func (l *lazyStream) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		l.w.Header().Set("Content-Type", "application/x-ndjson")
		l.w.Header().Set("X-Content-Type-Options", "nosniff")
		l.w.WriteHeader(http.StatusOK)
	}
	return l.w.Write(p)
}

func (l *lazyStream) Flush() {
	if f, ok := l.w.(http.Flusher); ok {
		f.Flush()
	}
}
