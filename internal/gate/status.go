package gate

import (
	"encoding/json"
	"net/http"
	"sync"
)

// StatusWriter remembers the status of an answer (for its audit record,
// its metrics and its log line) and the code of an error answer (Code);
// streams still flush through it, and http.ResponseController reaches the
// writer underneath. The REST, MCP and E2B gate, the audit middleware and
// the metrics middleware all use this one.
type StatusWriter struct {
	http.ResponseWriter
	status  int // the first final status sent; 0 until one is
	sniffed bool

	mu   sync.Mutex
	code string
}

// NewStatusWriter wraps w; an answer that never sets a status is a 200.
func NewStatusWriter(w http.ResponseWriter) *StatusWriter {
	return &StatusWriter{ResponseWriter: w}
}

// Status is the status sent (200 if none was set).
func (w *StatusWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Code is the error code of the answer's body ({"error":{"code":...}}) when
// it is an error answer, or "".
func (w *StatusWriter) Code() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.code
}

// WriteHeader records and sends code. The first final status is the one
// the client gets (net/http drops later ones), so it is the one kept.
func (w *StatusWriter) WriteHeader(code int) {
	// 101 is final too: a WebSocket upgrade's answer, then the hijack.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write sends p, reading the error code from the first write of an error
// answer.
func (w *StatusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.sniffed && w.status >= 400 {
		w.sniffed = true
		if c := ErrorCode(p); c != "" {
			w.mu.Lock()
			w.code = c
			w.mu.Unlock()
		}
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes the writer underneath, if it can.
func (w *StatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap is the writer underneath (for http.ResponseController and
// WebSocket upgrades).
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ErrorCode reads the code of an API error body ({"error":{"code":...}}),
// or "" if body is not one (or is over 64 KiB, or its code over 64 bytes).
func ErrorCode(body []byte) string {
	if len(body) == 0 || len(body) > 64<<10 || body[0] != '{' {
		return ""
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Error.Code) > 64 {
		return ""
	}
	return e.Error.Code
}
