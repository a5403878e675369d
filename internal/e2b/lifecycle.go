package e2b

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// E2B's lifecycle over Paddock's pause (docs/state.md): pause freezes the
// sandbox in place — its memory stays in RAM and its timeout clock stops —
// so both of E2B's kinds (with memory, and the filesystem-only
// `memory: false`) get the same, stronger pause; connect and resume thaw
// it with the life it had left. A paused sandbox is listed, with state
// "paused". `autoPause` is on_timeout "pause", `autoResume` the spec's
// auto_resume: a call that needs the sandbox wakes it.

// visible returns a sandbox the scope may act on with need that runs or
// sleeps (getInfo, connect, timeouts see paused ones too).
func (s *Server) visible(r *http.Request, sc sandbox.Scope, id string, need rights.Right) (sandbox.Sandbox, error) {
	sb, err := s.m.Resolve(r.Context(), sc, id, need)
	if err != nil {
		return sb, err
	}
	if sb.State != sandbox.StateRunning && sb.State != sandbox.StatePaused {
		return sandbox.Sandbox{}, errs.NotFound("sandbox %s is not running: %s", id, sb.Reason)
	}
	return sb, nil
}

type pauseBody struct {
	Memory *bool `json:"memory"` // false: filesystem only — Paddock keeps memory either way
}

// pauseSandbox is POST /sandboxes/{id}/pause: 204, or 409 when it already
// sleeps (the SDK's pause() then answers false).
func (s *Server) pauseSandbox(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b pauseBody
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	id := r.PathValue("sandboxID")
	sb, err := s.visible(r, sc, id, rights.Write)
	if err == nil && sb.State == sandbox.StatePaused {
		err = errs.New(errs.CodeConflict, "sandbox %s is already paused", id)
	}
	if err == nil {
		_, err = s.m.Pause(r.Context(), sc, id)
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// resumeSandbox is the older POST /sandboxes/{id}/resume {timeout}: 201 with
// the sandbox, 409 when it is not paused.
func (s *Server) resumeSandbox(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b struct {
		Timeout   *int64 `json:"timeout"`
		AutoPause *bool  `json:"autoPause"`
	}
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	if b.AutoPause != nil && *b.AutoPause {
		writeAPIError(w, errs.New(errs.CodeUnsupported, "autoPause on resume is not supported: set it at create"))
		return
	}
	id := r.PathValue("sandboxID")
	sb, err := s.visible(r, sc, id, rights.Write)
	if err == nil && sb.State != sandbox.StatePaused {
		err = errs.New(errs.CodeConflict, "sandbox %s is not paused", id)
	}
	if err == nil {
		sb, err = s.m.Resume(r.Context(), sc, id)
	}
	if err == nil && b.Timeout != nil && *b.Timeout > 0 {
		sb, err = s.extend(r, sc, sb, seconds(*b.Timeout))
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	s.answerSandbox(w, sc, sb, http.StatusCreated)
}

// wake resumes a paused sandbox for connect: connecting to a sleeping
// sandbox wakes it, as in E2B, for a caller who may (write).
func (s *Server) wake(r *http.Request, sc sandbox.Scope, sb sandbox.Sandbox, memory *bool) (sandbox.Sandbox, error) {
	if sb.State != sandbox.StatePaused {
		return sb, nil
	}
	if memory != nil && !*memory {
		return sb, errs.New(errs.CodeUnsupported, "resuming by reboot (onResume: \"reboot\") is not supported: a paused Paddock sandbox keeps its processes and resumes them")
	}
	if !sc.Can(rights.Write) {
		return sb, errs.New(errs.CodeForbidden, "sandbox %s is paused; resuming it needs the %q scope", sb.ID, rights.Write)
	}
	return s.m.Resume(r.Context(), sc, sb.ID)
}

// lifecycleFor maps autoPause/autoResume onto the spec.
func lifecycleFor(b *createBody, spec *sandbox.Spec) {
	if b.AutoPause != nil && *b.AutoPause {
		spec.OnTimeout = wire.OnTimeoutPause
	}
	if b.AutoResume != nil && b.AutoResume.Enabled {
		spec.AutoResume = true
	}
}

// stateOf is E2B's name for a sandbox's state.
func stateOf(sb sandbox.Sandbox) string {
	if sb.State == sandbox.StatePaused {
		return "paused"
	}
	return "running"
}
