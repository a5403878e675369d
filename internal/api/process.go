package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// processRoutes serves background processes and the interactive
// WebSockets (terminal, interactive exec). {pid} is a pid, a process id
// ("p7") or "tag:NAME".
func (s *Server) processRoutes() {
	s.authed("POST /v1/sandboxes/{id}/processes", rights.Exec, s.startProcess)
	s.authed("GET /v1/sandboxes/{id}/processes", rights.Read, s.listProcesses)
	s.authed("GET /v1/sandboxes/{id}/processes/{pid}", rights.Read, s.getProcess)
	s.authed("DELETE /v1/sandboxes/{id}/processes/{pid}", rights.Exec, s.killProcess)
	s.authed("GET /v1/sandboxes/{id}/processes/{pid}/output", rights.Read, s.processOutput)
	s.authed("POST /v1/sandboxes/{id}/processes/{pid}/stdin", rights.Exec, s.processStdin)
	s.authed("POST /v1/sandboxes/{id}/processes/{pid}/close-stdin", rights.Exec, s.processCloseStdin)
	s.authed("POST /v1/sandboxes/{id}/processes/{pid}/signal", rights.Exec, s.signalProcess)
	s.authed("POST /v1/sandboxes/{id}/processes/{pid}/resize", rights.Exec, s.resizeProcess)
	s.authed("POST /v1/sandboxes/{id}/processes/{pid}/wait", rights.Read, s.waitProcess)
	s.authedWS("GET /v1/sandboxes/{id}/pty", rights.Exec, s.terminal)
	s.authedWS("GET /v1/sandboxes/{id}/exec/ws", rights.Exec, s.execWS)
}

func (s *Server) startProcess(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	req, ok := decoded[sandbox.ProcessRequest](w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	info, err := s.m.StartProcess(r.Context(), sc, id, req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/sandboxes/"+id+"/processes/"+info.ID)
	writeJSON(w, http.StatusCreated, info)
}

func (s *Server) listProcesses(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	list, err := s.m.Processes(r.Context(), sc, r.PathValue("id"))
	replyList(w, r, list, err, func(l []sandbox.ProcessInfo) wire.ProcessList { return wire.ProcessList{Processes: l} })
}

func (s *Server) getProcess(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	info, err := s.m.Process(r.Context(), sc, r.PathValue("id"), r.PathValue("pid"))
	reply(w, r, info, err)
}

func (s *Server) killProcess(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	info, err := s.m.KillProcess(r.Context(), sc, r.PathValue("id"), r.PathValue("pid"))
	reply(w, r, info, err)
}

// processStdin streams the raw request body to the process's input.
func (s *Server) processStdin(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	n, err := s.m.WriteStdin(r.Context(), sc, r.PathValue("id"), r.PathValue("pid"), r.Body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.StdinResult{Bytes: n})
}

func (s *Server) processCloseStdin(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	if err := s.m.CloseStdin(r.Context(), sc, r.PathValue("id"), r.PathValue("pid")); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.OK{OK: true})
}

// SignalRequest is the body of POST .../processes/{pid}/signal.
type SignalRequest = wire.SignalRequest

func (s *Server) signalProcess(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	req, ok := decoded[SignalRequest](w, r)
	if !ok {
		return
	}
	if req.Signal == "" {
		req.Signal = "SIGTERM"
	}
	n, err := s.m.SignalProcess(r.Context(), sc, r.PathValue("id"), r.PathValue("pid"), req.Signal, req.Tree)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.SignalResult{Signalled: n})
}

func (s *Server) resizeProcess(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	size, ok := decoded[sandbox.PTYSize](w, r)
	if !ok {
		return
	}
	if err := s.m.ResizeProcess(r.Context(), sc, r.PathValue("id"), r.PathValue("pid"), size); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.OK{OK: true})
}

// defaultWait is a wait's timeout when the body names none.
const defaultWait = 30 * time.Second

func (s *Server) waitProcess(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	req, ok := decoded[wire.WaitRequest](w, r)
	if !ok {
		return
	}
	d := defaultWait
	if req.TimeoutMs != nil {
		if *req.TimeoutMs < 0 || *req.TimeoutMs > sandbox.MaxProcessWait.Milliseconds() {
			writeError(w, r, errs.Invalid("timeout_ms must be 0..%d", sandbox.MaxProcessWait.Milliseconds()))
			return
		}
		d = time.Duration(*req.TimeoutMs) * time.Millisecond
	}
	info, err := s.m.WaitProcess(r.Context(), sc, r.PathValue("id"), r.PathValue("pid"), d)
	reply(w, r, info, err)
}

// OutputLine is one line of the NDJSON output stream (wire.OutputLine).
type OutputLine = wire.OutputLine

// processOutput streams output as NDJSON: ?from=start|tail|N|stdout:N,...,
// ?follow=1 to keep going until the process exits, ?encoding=base64 for
// every chunk as data_b64.
func (s *Server) processOutput(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	q := r.URL.Query()
	opt := sandbox.OutputOptions{From: q.Get("from"), Follow: q.Get("follow") == "1" || q.Get("follow") == "true"}
	b64 := false
	switch q.Get("encoding") {
	case "", "text":
	case "base64":
		b64 = true
	default:
		writeError(w, r, errs.Invalid("encoding must be text or base64"))
		return
	}
	sw := &lazyStream{w: w}
	out := &ndjsonOut{enc: json.NewEncoder(sw), fl: sw}
	tx := &textChunks{b64: b64, emit: func(l OutputLine) error { return out.emit(l) }}
	info, err := s.m.ProcessOutput(r.Context(), sc, r.PathValue("id"), r.PathValue("pid"), opt, tx.event)
	if err == nil {
		err = tx.flushAll()
	}
	if err != nil {
		if !sw.started {
			writeError(w, r, err)
			return
		}
		_ = out.emit(OutputLine{Error: &wire.ErrorDetail{Code: string(errs.CodeOf(err)), Message: errs.Public(err)}})
		return
	}
	_ = out.emit(OutputLine{Process: &info})
}

// textChunks turns output events into NDJSON lines. JSON strings hold
// UTF-8, so a character split across two chunks is carried to the next
// one (offsets stay exact); a chunk that is not UTF-8 goes as base64.
type textChunks struct {
	b64   bool
	emit  func(OutputLine) error
	carry map[string]carried
}

// carried is the start of a character whose end has not arrived yet.
type carried struct {
	off int64
	b   []byte
}

func (t *textChunks) event(ev sandbox.OutputEvent) error {
	if len(ev.Data) == 0 {
		// A position: what was carried will not be completed.
		if err := t.flush(ev.Stream); err != nil {
			return err
		}
		off := ev.Offset
		return t.emit(OutputLine{Stream: ev.Stream, Offset: &off, Dropped: ev.Dropped})
	}
	if t.b64 {
		off := ev.Offset
		return t.emit(OutputLine{Stream: ev.Stream, Offset: &off, DataB64: base64.StdEncoding.EncodeToString(ev.Data)})
	}
	if t.carry == nil {
		t.carry = map[string]carried{}
	}
	prev := t.carry[ev.Stream]
	off := ev.Offset - int64(len(prev.b))
	buf := ev.Data
	if len(prev.b) > 0 {
		buf = append(prev.b, ev.Data...)
	}
	done, rest := splitUTF8(buf)
	if len(rest) > 0 {
		t.carry[ev.Stream] = carried{off: off + int64(len(done)), b: append([]byte(nil), rest...)}
	} else {
		delete(t.carry, ev.Stream)
	}
	if len(done) == 0 {
		return nil
	}
	return t.emit(chunkLine(ev.Stream, off, done))
}

// flush emits what is carried for stream as it is.
func (t *textChunks) flush(stream string) error {
	c, ok := t.carry[stream]
	if !ok {
		return nil
	}
	delete(t.carry, stream)
	return t.emit(chunkLine(stream, c.off, c.b))
}

// flushAll emits every carry at the end of the stream.
func (t *textChunks) flushAll() error {
	for _, name := range []string{"stdout", "stderr", "pty"} {
		if err := t.flush(name); err != nil {
			return err
		}
	}
	return nil
}

func chunkLine(stream string, off int64, p []byte) OutputLine {
	if utf8.Valid(p) {
		return OutputLine{Stream: stream, Offset: &off, Data: string(p)}
	}
	return OutputLine{Stream: stream, Offset: &off, DataB64: base64.StdEncoding.EncodeToString(p)}
}

// splitUTF8 splits p before a trailing incomplete UTF-8 sequence (at most
// three bytes that could still become a character), if there is one.
func splitUTF8(p []byte) (done, rest []byte) {
	for k := 1; k <= 3 && k <= len(p); k++ {
		c := p[len(p)-k]
		if c&0xC0 == 0x80 {
			continue // continuation byte: look further back
		}
		need := 0
		switch {
		case c&0xE0 == 0xC0:
			need = 2
		case c&0xF0 == 0xE0:
			need = 3
		case c&0xF8 == 0xF0:
			need = 4
		}
		if need > k {
			return p[:len(p)-k], p[len(p)-k:]
		}
		return p, nil
	}
	return p, nil
}
