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

// pauseTools are sandbox_pause and sandbox_resume (docs/state.md).
func pauseTools(tb *Toolbox) {
	lifecycle := func(verb string, act func(Backend) func(context.Context, string) (wire.Sandbox, error)) func(*Call, pauseIn) (sandboxInfo, error) {
		return func(c *Call, in pauseIn) (sandboxInfo, error) {
			if in.Sandbox == "" {
				return sandboxInfo{}, newToolError(errs.CodeInvalid, "Give `sandbox`: the id of the sandbox to %s (sandbox_list shows them).", verb)
			}
			sb, err := act(c.Backend())(c.Context(), in.Sandbox)
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
	Add(tb, Tool{Name: "sandbox_pause", Need: rights.Of(rights.Write), Title: "Pause a sandbox", Idempotent: true,
		Description: "Freeze every process of a sandbox: memory, files and open connections stay, it uses no CPU and its " +
			"timeout clock stops (it is destroyed after its paused timeout, 7 days by default). Other tools on it fail " +
			"with sandbox_paused until sandbox_resume, unless it was created with auto_resume."},
		lifecycle("pause", func(b Backend) func(context.Context, string) (wire.Sandbox, error) { return b.Pause }))
	Add(tb, Tool{Name: "sandbox_resume", Need: rights.Of(rights.Write), Title: "Resume a paused sandbox", Idempotent: true,
		Description: "Thaw a paused sandbox: its processes continue where they were and its timeout clock restarts with the life it had left."},
		lifecycle("resume", func(b Backend) func(context.Context, string) (wire.Sandbox, error) { return b.Resume }))
}
