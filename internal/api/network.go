package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The network policy of a running sandbox (docs/network.md). A change
// takes effect on new connections at once.
func (s *Server) networkRoutes() {
	s.authed("GET /v1/sandboxes/{id}/network", rights.Read, s.getNetwork)
	s.authed("PUT /v1/sandboxes/{id}/network", rights.Network, s.setNetwork)
}

func (s *Server) getNetwork(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	n, err := s.m.Network(r.Context(), sc, r.PathValue("id"))
	reply(w, r, n, err)
}

func (s *Server) setNetwork(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	jsonCall(w, r, sc, s.m.SetNetwork)
}
