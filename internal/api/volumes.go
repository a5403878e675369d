package api

import (
	"io"
	"net/http"
	"strconv"

	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// volumeRoutes are the volume routes of docs/state.md: the volumes, and
// their files without a sandbox (the sandbox files routes' shapes).
func (s *Server) volumeRoutes() {
	s.authed("POST /v1/volumes", rights.Volumes, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		if req, ok := decoded[wire.CreateVolumeRequest](w, r); ok {
			v, err := s.m.CreateVolume(r.Context(), sc, req.Name, req.SizeMB)
			if err != nil {
				writeError(w, r, err)
				return
			}
			writeJSON(w, http.StatusCreated, v)
		}
	})
	s.authed("GET /v1/volumes", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		list, err := s.m.ListVolumes(r.Context(), sc)
		reply(w, r, wire.VolumeList{Volumes: list}, err)
	})
	s.authed("GET /v1/volumes/{name}", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		v, err := s.m.GetVolume(r.Context(), sc, r.PathValue("name"))
		reply(w, r, v, err)
	})
	s.authed("DELETE /v1/volumes/{name}", rights.Volumes, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		replyNoContent(w, r, s.m.DeleteVolume(r.Context(), sc, r.PathValue("name")))
	})
	const files = "/v1/volumes/{name}/files"
	s.authed("GET "+files, rights.Read, s.volumeReadFile)
	s.authed("PUT "+files, rights.Volumes, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		if req, ok := fileRequest(w, r, func(q *query) sandbox.WriteRequest {
			return sandbox.WriteRequest{Path: q.str("path"), User: q.str("user"), Mode: q.str("mode")}
		}, "path", "mode", "user"); ok {
			fi, err := s.m.VolumeWriteFile(r.Context(), sc, r.PathValue("name"), req, r.Body)
			reply(w, r, fi, err)
		}
	})
	s.authed("DELETE "+files, rights.Volumes, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		if req, ok := fileRequest(w, r, func(q *query) sandbox.RemoveRequest {
			return sandbox.RemoveRequest{Path: q.str("path"), User: q.str("user"), Recursive: q.bool("recursive")}
		}, "path", "recursive", "user"); ok {
			res, err := s.m.VolumeRemove(r.Context(), sc, r.PathValue("name"), req)
			reply(w, r, res, err)
		}
	})
	s.authed("GET "+files+"/stat", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		if p, ok := fileRequest(w, r, func(q *query) string { return q.str("path") }, "path"); ok {
			fi, err := s.m.VolumeStat(r.Context(), sc, r.PathValue("name"), p)
			reply(w, r, fi, err)
		}
	})
	s.authed("GET "+files+"/list", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		if req, ok := fileRequest(w, r, func(q *query) sandbox.ListRequest {
			return sandbox.ListRequest{Path: q.str("path"), Limit: int(q.int("limit"))}
		}, "path", "limit"); ok {
			res, err := s.m.VolumeList(r.Context(), sc, r.PathValue("name"), req)
			reply(w, r, res, err)
		}
	})
	s.authed("POST "+files+"/mkdir", rights.Volumes, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		if req, ok := decoded[sandbox.MkdirRequest](w, r); ok {
			fi, err := s.m.VolumeMkdir(r.Context(), sc, r.PathValue("name"), req)
			reply(w, r, fi, err)
		}
	})
}

func (s *Server) volumeReadFile(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	p, ok := fileRequest(w, r, func(q *query) string { return q.str("path") }, "path")
	if !ok {
		return
	}
	fr, err := s.m.VolumeReadFile(r.Context(), sc, r.PathValue("name"), p)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer fr.Body.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.FormatInt(fr.Size, 10))
	h.Set(wire.HeaderSize, strconv.FormatInt(fr.Size, 10))
	h.Set(wire.HeaderMode, fr.Mode)
	if !fr.MTime.IsZero() {
		h.Set("Last-Modified", fr.MTime.UTC().Format(http.TimeFormat))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.CopyN(w, fr.Body, fr.Size)
}
