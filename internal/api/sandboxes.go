package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

func (s *Server) sandboxRoutes() {
	s.authed("POST /v1/sandboxes", auth.ScopeWrite, s.createSandbox)
	s.authed("GET /v1/sandboxes", auth.ScopeRead, s.listSandboxes)
	s.authed("GET /v1/sandboxes/{id}", auth.ScopeRead, s.getSandbox)
	s.authed("DELETE /v1/sandboxes/{id}", auth.ScopeWrite, s.deleteSandbox)
	s.authed("POST /v1/sandboxes/{id}/timeout", auth.ScopeWrite, s.setTimeout)
	s.authed("GET /v1/sandboxes/{id}/stats", auth.ScopeRead, s.sandboxStats)
	s.authed("GET /v1/templates", auth.ScopeRead, s.listTemplates)
}

func (s *Server) createSandbox(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var spec sandbox.Spec
	if err := decode(r, &spec); err != nil {
		writeError(w, r, err)
		return
	}
	sb, err := s.m.Create(r.Context(), scopeOf(p), spec)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/sandboxes/"+sb.ID)
	writeJSON(w, http.StatusCreated, sb)
}

// listSandboxes filters by ?label=k=v (repeatable; all must match).
func (s *Server) listSandboxes(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	match := map[string]string{}
	for _, l := range r.URL.Query()["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			writeError(w, r, errs.Invalid("label filter must be key=value"))
			return
		}
		match[k] = v
	}
	list := s.m.List(r.Context(), scopeOf(p), match)
	if list == nil {
		list = []sandbox.Sandbox{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sandboxes": list})
}

func (s *Server) getSandbox(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	sb, err := s.m.Get(r.Context(), scopeOf(p), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sb)
}

func (s *Server) deleteSandbox(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if err := s.m.Delete(r.Context(), scopeOf(p), r.PathValue("id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var body struct {
		TimeoutS int64 `json:"timeout_s"`
	}
	if err := decode(r, &body); err != nil {
		writeError(w, r, err)
		return
	}
	sb, err := s.m.SetTimeout(r.Context(), scopeOf(p), r.PathValue("id"), time.Duration(body.TimeoutS)*time.Second)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sb)
}

func (s *Server) sandboxStats(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	st, err := s.m.Stats(r.Context(), scopeOf(p), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	list, err := s.o.Templates.List()
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"templates": list})
}
