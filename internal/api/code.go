package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// Code contexts (docs/code.md). POST .../code streams the cell's events
// as NDJSON by default — the interpreter's output is most useful as it
// comes; ?stream=false, or an Accept that asks for application/json and
// not NDJSON, gathers them into one CodeExecution.
func (s *Server) codeRoutes() {
	s.authed("POST /v1/sandboxes/{id}/code", rights.Exec, s.executeCode)
	s.authed("GET /v1/sandboxes/{id}/code/contexts", rights.Read, s.codeContexts)
	s.authed("POST /v1/sandboxes/{id}/code/contexts", rights.Exec, s.createCodeContext)
	s.authed("GET /v1/sandboxes/{id}/code/contexts/{ctx}", rights.Read, s.codeContext)
	s.authed("DELETE /v1/sandboxes/{id}/code/contexts/{ctx}", rights.Exec, s.deleteCodeContext)
	s.authed("POST /v1/sandboxes/{id}/code/contexts/{ctx}/restart", rights.Exec, s.restartCodeContext)
}

// maxCodeBody bounds the body of an execute: a 1 MiB cell (the kernel's
// cap), JSON-escaped, with its environment.
const maxCodeBody = 8 << 20

// maxBufferedResults bounds what a non-streaming answer holds of rich
// results; past it results are listed as omitted (the stream has no such
// bound: it holds nothing).
const maxBufferedResults = 64 << 20

// decodeCode reads an execute body: as decode, with the larger bound a
// cell needs.
func decodeCode(r *http.Request, v any) error {
	return decodeBody(r, v, maxCodeBody, true)
}

// wantsCodeStream decides between the NDJSON stream and one answer.
func wantsCodeStream(r *http.Request) (bool, error) {
	q := &query{v: r.URL.Query()}
	if q.has("stream") {
		v := q.bool("stream")
		return v, q.err
	}
	acc := r.Header.Get("Accept")
	if strings.Contains(acc, "application/json") && !strings.Contains(acc, "application/x-ndjson") {
		return false, nil
	}
	return true, nil
}

func (s *Server) executeCode(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	stream, err := wantsCodeStream(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var req wire.CodeExecuteRequest
	if err := decodeCode(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	id := r.PathValue("id")
	if !stream {
		var ex wire.CodeExecution
		held := 0
		err := s.m.ExecuteCode(r.Context(), sc, id, req, func(ev wire.CodeEvent) error {
			if ev.Type == codewire.EventResult && ev.Result != nil {
				n := 0
				for _, v := range ev.Result.Bundle {
					n += len(v)
				}
				n += len(ev.Result.Chart) + len(ev.Result.Data)
				if held+n > maxBufferedResults {
					// One answer holds at most maxBufferedResults of results.
					ev.Result = &codewire.Result{IsMain: ev.Result.IsMain, ExecutionCount: ev.Result.ExecutionCount,
						Bundle: map[string]json.RawMessage{}, Omitted: []codewire.Omission{{MIME: "*", Bytes: n,
							Reason: "the non-streaming answer's results are full; stream the cell (the default) to get every result"}}}
					n = 0
				}
				held += n
			}
			ex.Add(ev)
			return nil
		})
		reply(w, r, ex, err)
		return
	}
	// Streaming: a refusal before the start event is an ordinary error
	// answer; once started, the manager ends the stream with an end event.
	sw := &lazyStream{w: w}
	enc := json.NewEncoder(sw)
	enc.SetEscapeHTML(false) // an HTML table would otherwise grow up to six times
	err = s.m.ExecuteCode(r.Context(), sc, id, req, func(ev wire.CodeEvent) error {
		if err := enc.Encode(ev); err != nil {
			return err
		}
		sw.Flush()
		return nil
	})
	if err != nil && !sw.started {
		writeError(w, r, err)
	}
}

func (s *Server) codeContexts(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	list, err := s.m.CodeContexts(r.Context(), sc, r.PathValue("id"))
	reply(w, r, wire.CodeContextList{Contexts: list}, err)
}

func (s *Server) createCodeContext(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	jsonCall(w, r, sc, s.m.CreateCodeContext)
}

func (s *Server) codeContext(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	c, err := s.m.CodeContext(r.Context(), sc, r.PathValue("id"), r.PathValue("ctx"))
	reply(w, r, c, err)
}

func (s *Server) deleteCodeContext(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	err := s.m.DeleteCodeContext(r.Context(), sc, r.PathValue("id"), r.PathValue("ctx"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) restartCodeContext(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	c, err := s.m.RestartCodeContext(r.Context(), sc, r.PathValue("id"), r.PathValue("ctx"))
	reply(w, r, c, err)
}
