package mcp

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

type pauseIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Id of the sandbox."`
}

// stateChange is what a lifecycle tool does to a sandbox: the backend's
// method for it, or why this server has none.
type stateChange func(*Call) (func(context.Context, string) (wire.Sandbox, error), error)

// lifecycle is the frame of the tools that move a sandbox between states
// (pause, resume, hibernate): the sandbox is required, a sandbox the caller
// cannot see is named as such, and the result is the sandbox after.
func lifecycle(verb string, act stateChange) func(*Call, pauseIn) (sandboxInfo, error) {
	return func(c *Call, in pauseIn) (sandboxInfo, error) {
		if in.Sandbox == "" {
			return sandboxInfo{}, newToolError(errs.CodeInvalid, "Give `sandbox`: the id of the sandbox to %s (sandbox_list shows them).", verb)
		}
		fn, err := act(c)
		if err != nil {
			return sandboxInfo{}, err
		}
		sb, err := fn(c.Context(), in.Sandbox)
		if err != nil {
			if isNotFound(err) {
				return sandboxInfo{}, errNoSandbox(in.Sandbox)
			}
			return sandboxInfo{}, err
		}
		own := ""
		if c.sess != nil {
			own = c.SessionSandbox()
		}
		return infoOf(sb, own), nil
	}
}

// pauseTools are sandbox_pause and sandbox_resume (docs/state.md).
func pauseTools(tb *Toolbox) {
	Add(tb, Tool{Name: "sandbox_pause", Need: rights.Of(rights.Write), Title: "Pause a sandbox", Idempotent: true,
		Description: "Freeze every process of a sandbox: memory, files and open connections stay, it uses no CPU and its " +
			"timeout clock stops (it is destroyed after its paused timeout, 7 days by default). Other tools on it fail " +
			"with sandbox_paused until sandbox_resume, unless it was created with auto_resume."},
		lifecycle("pause", func(c *Call) (func(context.Context, string) (wire.Sandbox, error), error) {
			return c.Backend().Pause, nil
		}))
	Add(tb, Tool{Name: "sandbox_resume", Need: rights.Of(rights.Write), Title: "Resume a paused sandbox", Idempotent: true,
		Description: "Thaw a paused sandbox: its processes continue where they were and its timeout clock restarts with the life it had left."},
		lifecycle("resume", func(c *Call) (func(context.Context, string) (wire.Sandbox, error), error) {
			return c.Backend().Resume, nil
		}))
}
