package api

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// pauseRoutes are the lifecycle routes of docs/state.md: pause and resume
// (the right is that of renewing a sandbox).
func (s *Server) pauseRoutes() {
	s.authed("POST /v1/sandboxes/{id}/pause", rights.Write, s.lifecycle(s.m.Pause))
	s.authed("POST /v1/sandboxes/{id}/resume", rights.Write, s.lifecycle(s.m.Resume))
}

// lifecycle answers a body-less action on a sandbox with the sandbox.
func (s *Server) lifecycle(act func(context.Context, sandbox.Scope, string) (sandbox.Sandbox, error)) func(http.ResponseWriter, *http.Request, sandbox.Scope) {
	return func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		sb, err := act(r.Context(), sc, r.PathValue("id"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, sb)
	}
}
