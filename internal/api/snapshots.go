package api

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// snapshotRoutes are the snapshot and fork routes of docs/state.md.
func (s *Server) snapshotRoutes() {
	s.authed("POST /v1/sandboxes/{id}/snapshots", rights.Snapshots, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		if req, ok := decoded[wire.CreateSnapshotRequest](w, r); ok {
			snap, err := s.m.CreateSnapshotWith(r.Context(), sc, r.PathValue("id"), req.Name, req.Memory)
			if err != nil {
				writeError(w, r, err)
				return
			}
			writeJSON(w, http.StatusCreated, snap)
		}
	})
	s.authed("POST /v1/sandboxes/{id}/fork", rights.Write, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		jsonCall(w, r, sc, func(ctx context.Context, sc sandbox.Scope, id string, req wire.ForkRequest) (wire.ForkResponse, error) {
			forks, err := s.m.ForkWith(ctx, sc, id, req.Count, req.Memory)
			if forks == nil {
				forks = []sandbox.Sandbox{}
			}
			return wire.ForkResponse{Sandboxes: forks}, err
		})
	})
	s.authed("GET /v1/snapshots", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		list, err := s.m.ListSnapshots(r.Context(), sc)
		reply(w, r, wire.SnapshotList{Snapshots: list}, err)
	})
	s.authed("GET /v1/snapshots/{name}", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		snap, err := s.m.GetSnapshot(r.Context(), sc, r.PathValue("name"))
		reply(w, r, snap, err)
	})
	s.authed("DELETE /v1/snapshots/{name}", rights.Snapshots, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		replyNoContent(w, r, s.m.DeleteSnapshot(r.Context(), sc, r.PathValue("name")))
	})
}
