package gate

import "net/http"

// StatusWriter remembers the status of an answer (for its audit record
// and log line); streams still flush through it, and
// http.ResponseController reaches the writer underneath.
type StatusWriter struct {
	http.ResponseWriter
	status int
}

// NewStatusWriter wraps w; an answer that never sets a status is a 200.
func NewStatusWriter(w http.ResponseWriter) *StatusWriter {
	return &StatusWriter{ResponseWriter: w, status: http.StatusOK}
}

// Status is the status sent (200 if none was set).
func (w *StatusWriter) Status() int { return w.status }

// WriteHeader records and sends code.
func (w *StatusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

// Flush flushes the writer underneath, if it can.
func (w *StatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap is the writer underneath (for http.ResponseController).
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
