package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

func (s *Server) sandboxRoutes() {
	s.authed("POST /v1/sandboxes", rights.Write, s.createSandbox)
	s.authed("GET /v1/sandboxes", rights.Read, s.listSandboxes)
	s.authed("GET /v1/sandboxes/{id}", rights.Read, s.getSandbox)
	s.authed("DELETE /v1/sandboxes/{id}", rights.Write, s.deleteSandbox)
	s.authed("POST /v1/sandboxes/{id}/timeout", rights.Write, s.setTimeout)
	s.authed("GET /v1/sandboxes/{id}/stats", rights.Read, s.sandboxStats)
}

func (s *Server) createSandbox(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	spec, ok := decoded[sandbox.Spec](w, r)
	if !ok {
		return
	}
	sb, err := s.m.Create(r.Context(), sc, spec)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/sandboxes/"+sb.ID)
	writeJSON(w, http.StatusCreated, sb)
}

// listSandboxes filters by ?label=k=v (repeatable; all must match).
func (s *Server) listSandboxes(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	match := map[string]string{}
	for _, l := range r.URL.Query()["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			writeError(w, r, errs.Invalid("label filter must be key=value"))
			return
		}
		match[k] = v
	}
	list, err := s.m.List(r.Context(), sc, match)
	replyList(w, r, list, err, func(l []wire.Sandbox) wire.SandboxList { return wire.SandboxList{Sandboxes: l} })
}

func (s *Server) getSandbox(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	sb, err := s.m.Get(r.Context(), sc, r.PathValue("id"))
	reply(w, r, sb, err)
}

func (s *Server) deleteSandbox(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	replyNoContent(w, r, s.m.Delete(r.Context(), sc, r.PathValue("id")))
}

func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	body, ok := decoded[wire.TimeoutRequest](w, r)
	if !ok {
		return
	}
	sb, err := s.m.SetTimeout(r.Context(), sc, r.PathValue("id"), time.Duration(body.TimeoutS)*time.Second)
	reply(w, r, sb, err)
}

func (s *Server) sandboxStats(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	st, err := s.m.Stats(r.Context(), sc, r.PathValue("id"))
	reply(w, r, st, err)
}

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	list, err := s.m.ListTemplates(r.Context(), sc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.TemplateList{Templates: list})
}
