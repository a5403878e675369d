package e2b

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sort"
	"strconv"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// E2B's snapshots and fork over Paddock's (docs/state.md). A snapshot's
// E2B id is its Paddock name (names are per tenant); `Sandbox.create(id)`
// makes a sandbox from it, `deleteSnapshot` is E2B's DELETE
// /templates/{id}. Snapshots hold the filesystem; a fork's processes start
// fresh (memory snapshots belong to the gVisor runtime).

type e2bSnapshot struct {
	SnapshotID string   `json:"snapshotID"`
	Names      []string `json:"names"`
}

func snapshotInfo(sn sandbox.Snapshot) e2bSnapshot {
	return e2bSnapshot{SnapshotID: sn.Name, Names: []string{sn.Name}}
}

// createSnapshot is POST /sandboxes/{id}/snapshots {name?}: 201.
func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b struct {
		Name *string `json:"name"`
	}
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	id := r.PathValue("sandboxID")
	if _, err := s.visible(r, sc, id, rights.Snapshots); err != nil {
		writeAPIError(w, err)
		return
	}
	name := ""
	if b.Name != nil {
		name = *b.Name
	}
	if name == "" {
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		name = "snap-" + hex.EncodeToString(rnd[:])
	}
	sn, err := s.m.CreateSnapshot(r.Context(), sc, id, name)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, snapshotInfo(sn))
}

// listSnapshots is GET /snapshots?sandboxID&name&limit&nextToken, oldest
// first; the next page's token is in x-next-token.
func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	q := r.URL.Query()
	limit, start := 100, 0
	for k, vs := range q {
		if len(vs) != 1 {
			writeAPIError(w, errs.Invalid("query parameter %s is given %d times", clipText(k), len(vs)))
			return
		}
		var err error
		switch k {
		case "sandboxID", "name":
		case "limit":
			if limit, err = strconv.Atoi(vs[0]); err != nil || limit < 1 || limit > 1000 {
				err = errs.Invalid("limit must be between 1 and 1000")
			}
		case "nextToken":
			if start, err = strconv.Atoi(vs[0]); err != nil || start < 0 {
				err = errs.Invalid("malformed nextToken")
			}
		default:
			err = errs.Invalid("query parameter %s is not supported", clipText(k))
		}
		if err != nil {
			writeAPIError(w, err)
			return
		}
	}
	all, err := s.m.ListSnapshots(r.Context(), sc)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].CreatedAt.Before(all[j].CreatedAt) })
	var keep []e2bSnapshot
	for _, sn := range all {
		if (q.Get("sandboxID") == "" || sn.Source == q.Get("sandboxID")) && (q.Get("name") == "" || sn.Name == q.Get("name")) {
			keep = append(keep, snapshotInfo(sn))
		}
	}
	if start > len(keep) {
		start = len(keep)
	}
	keep = keep[start:]
	if len(keep) > limit {
		keep = keep[:limit]
		w.Header().Set("X-Next-Token", strconv.Itoa(start+limit))
	}
	if keep == nil {
		keep = []e2bSnapshot{}
	}
	writeJSON(w, http.StatusOK, keep)
}

// deleteTemplate is DELETE /templates/{id}: E2B's deleteSnapshot. Paddock's
// own templates are the server's, not deleted through this API.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	name := r.PathValue("templateID")
	err := s.m.DeleteSnapshot(r.Context(), sc, name)
	if errs.CodeOf(err) == errs.CodeNotFound {
		err = errs.NotFound("no snapshot %s (Paddock's templates are not deleted through the E2B API)", quoteText(name))
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type forkResult struct {
	Sandbox *newSandbox `json:"sandbox,omitempty"`
	Error   *apiError   `json:"error,omitempty"`
}

// forkSandbox is POST /sandboxes/{id}/fork {timeout, count}: one capture,
// count new sandboxes (each its own id, tokens and identity). A fork of a
// sandbox that is gone is 404 before anything happens.
func (s *Server) forkSandbox(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b struct {
		Timeout *int64 `json:"timeout"`
		Count   *int   `json:"count"`
	}
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	count := 1
	if b.Count != nil {
		count = *b.Count
	}
	if count < 1 || count > wire.MaxForks {
		writeAPIError(w, errs.Invalid("count must be between 1 and %d", wire.MaxForks))
		return
	}
	if b.Timeout != nil && *b.Timeout < 0 {
		writeAPIError(w, errs.Invalid("timeout must not be negative"))
		return
	}
	id := r.PathValue("sandboxID")
	if _, err := s.visible(r, sc, id, rights.Write); err != nil {
		writeAPIError(w, err)
		return
	}
	forks, err := s.m.Fork(r.Context(), sc, id, count)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	out := make([]forkResult, 0, len(forks))
	for _, sb := range forks {
		if b.Timeout != nil && *b.Timeout > 0 {
			if ext, err := s.m.SetTimeout(r.Context(), sc, sb.ID, seconds(*b.Timeout)); err == nil {
				sb = ext
			}
		}
		tok, err := s.mintToken(sc, sb.ID)
		if err != nil {
			_ = s.m.Delete(r.Context(), sc, sb.ID) // nobody could reach it
			out = append(out, forkResult{Error: &apiError{Code: http.StatusInternalServerError, Message: errs.Public(err)}})
			continue
		}
		out = append(out, forkResult{Sandbox: &newSandbox{SandboxID: sb.ID, TemplateID: sb.Spec.Template, ClientID: clientID,
			EnvdVersion: EnvdVersion, EnvdAccessToken: tok, TrafficAccessToken: &tok, Domain: s.domain()}})
	}
	writeJSON(w, http.StatusOK, out)
}
