package e2bci

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// Contexts is what the handler needs: the code contexts of one sandbox.
// kernel.Supervisor satisfies it in the guest; the E2B adapter supplies
// one bound to a sandbox through the manager.
type Contexts interface {
	Create(ctx context.Context, req codewire.CreateContextRequest) (codewire.Context, error)
	List(ctx context.Context) ([]codewire.Context, error)
	Delete(ctx context.Context, id string) error
	Restart(ctx context.Context, id string) (codewire.Context, error)
	Execute(ctx context.Context, req codewire.ExecuteRequest, emit func(codewire.Event) error) error
}

// maxBody bounds a request body (the code of a cell, mostly).
const maxBody = 2 << 20

// Handler answers E2B's code-interpreter requests.
type Handler struct {
	c   Contexts
	mux *http.ServeMux
}

// NewHandler returns a handler over c.
func NewHandler(c Contexts) *Handler {
	h := &Handler{c: c, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, "OK") })
	h.mux.HandleFunc("POST /execute", h.execute)
	h.mux.HandleFunc("POST /contexts", h.create)
	h.mux.HandleFunc("GET /contexts", h.list)
	h.mux.HandleFunc("DELETE /contexts/{id}", h.delete)
	h.mux.HandleFunc("POST /contexts/{id}/restart", h.restart)
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// decode reads a JSON body; FastAPI answers a body it cannot validate
// with 422, and so does this.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			text(w, http.StatusRequestEntityTooLarge, "request body too large")
			return false
		}
		text(w, http.StatusBadRequest, "could not read the request body")
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{
			{"type": "json_invalid", "loc": []string{"body"}, "msg": "the body is not the JSON object expected"}}})
		return false
	}
	return true
}

func (h *Handler) execute(w http.ResponseWriter, r *http.Request) {
	var req ExecuteRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Code == nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{
			{"type": "missing", "loc": []string{"body", "code"}, "msg": "Field required"}}})
		return
	}
	if req.ContextID != "" && req.Language != "" {
		text(w, http.StatusBadRequest, "Only one of context_id or language can be provided")
		return
	}
	// E2B's SDKs name the default context "default" (and older servers
	// accept it): the default Python context.
	ctxID := req.ContextID
	if ctxID == "default" {
		ctxID = ""
	}
	rc := http.NewResponseController(w)
	var enc *Encoder
	err := h.c.Execute(r.Context(), codewire.ExecuteRequest{
		Code: *req.Code, Context: ctxID, Language: req.Language, Env: req.EnvVars,
	}, func(ev codewire.Event) error {
		if enc == nil {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
			enc = NewEncoder(w, func() { _ = rc.Flush() })
		}
		return enc.Event(ev)
	})
	if enc == nil {
		if err == nil {
			err = errs.New(errs.CodeInternal, "the execution produced no stream")
		}
		h.fail(w, err, req.ContextID)
		return
	}
	// A stream cut short (the caller left, or the backend failed after
	// the start): E2B's server always ends with end_of_execution.
	_ = enc.Close()
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	var req CreateContextRequest
	if !decode(w, r, &req) {
		return
	}
	c, err := h.c.Create(r.Context(), codewire.CreateContextRequest{Language: req.Language, Cwd: req.Cwd})
	if err != nil {
		h.fail(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, Context{ID: c.ID, Language: c.Language, Cwd: c.Cwd})
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	cs, err := h.c.List(r.Context())
	if err != nil {
		h.fail(w, err, "")
		return
	}
	out := make([]Context, 0, len(cs))
	for _, c := range cs {
		out = append(out, Context{ID: c.ID, Language: c.Language, Cwd: c.Cwd})
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := h.c.Delete(r.Context(), id); err != nil {
		h.fail(w, err, id)
		return
	}
	writeJSON(w, http.StatusOK, nil)
}

func (h *Handler) restart(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := h.c.Restart(r.Context(), id); err != nil {
		h.fail(w, err, id)
		return
	}
	writeJSON(w, http.StatusOK, nil)
}

// fail answers an error as E2B's server does: plain text; "Context ID not
// found" for an unknown context (the SDK shows the body in its
// NotFoundError).
func (h *Handler) fail(w http.ResponseWriter, err error, id string) {
	code := errs.CodeOf(err)
	if code == errs.CodeNotFound && id != "" {
		if len(id) > 64 {
			id = id[:64] // echoed back: bounded
		}
		text(w, http.StatusNotFound, "Context "+id+" not found")
		return
	}
	text(w, errs.HTTPStatus(code), errs.Public(err))
}

func text(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
