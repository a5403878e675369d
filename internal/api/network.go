package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The network policy of a running sandbox (docs/network.md). A change
// takes effect on new connections at once.
func (s *Server) networkRoutes() {
	s.authed("GET /v1/sandboxes/{id}/network", auth.ScopeRead, s.getNetwork)
	s.authed("PUT /v1/sandboxes/{id}/network", auth.ScopeWrite, s.setNetwork)
}

func (s *Server) getNetwork(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	n, err := s.m.Network(r.Context(), scopeOf(p), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, n)
}

func (s *Server) setNetwork(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var n sandbox.Network
	if err := decode(r, &n); err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.m.SetNetwork(r.Context(), scopeOf(p), r.PathValue("id"), n)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
