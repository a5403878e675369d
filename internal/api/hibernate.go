package api

import "github.com/paddockhq/paddock/internal/rights"

// hibernateRoutes: hibernation of a gVisor sandbox (docs/state.md); resume
// (pause.go) wakes it. The right is that of pause.
func (s *Server) hibernateRoutes() {
	s.authed("POST /v1/sandboxes/{id}/hibernate", rights.Write, s.lifecycle(s.m.Hibernate))
}
