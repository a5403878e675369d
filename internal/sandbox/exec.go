package sandbox

import (
	"context"
	"io"
	"maps"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// ExecRequest is one command to run (the REST body of POST .../exec).
type ExecRequest = wire.ExecRequest

// ExecResult is how a command ended.
type ExecResult = wire.ExecResult

// Output receives a command's output as it arrives; an error stops the
// command.
type Output interface {
	Stdout(p []byte) error
	Stderr(p []byte) error
}

const (
	maxArgs       = 4096
	maxArgvBytes  = 1 << 20
	maxStdinBytes = 8 << 20
	defaultExecTO = 10 * time.Minute
)

// Exec runs req in sandbox id, streaming output to out. A stdin reader, if
// given, is streamed to the command (req.Stdin is then ignored).
func (m *Manager) Exec(ctx context.Context, sc Scope, id string, req ExecRequest, stdin io.Reader, out Output, streaming bool) (ExecResult, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return ExecResult{}, err
	}
	if err := m.validateExec(&req); err != nil {
		return ExecResult{}, err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return ExecResult{}, err
	}
	defer b.hold()() // not idle while it runs (idle_pause_after_s)
	b.mu.Lock()
	spec := b.sb.Spec
	inst := b.inst
	b.mu.Unlock()

	env := withSpecEnv(spec.Env, req.Env)
	maxOut := req.MaxOutputBytes
	if maxOut == 0 {
		maxOut = m.cfg.MaxOutput
	}
	if streaming && req.MaxOutputBytes == 0 {
		maxOut = 0 // a stream holds nothing in memory: no cap unless asked
	}
	greq := guestapi.ExecRequest{Argv: req.Cmd, Env: env, Cwd: req.Cwd, User: req.User, TimeoutMs: req.TimeoutMs,
		MaxOutput: maxOut, Stdin: []byte(req.Stdin), StdinStream: stdin != nil}
	if err := m.event(ctx, Event{Kind: "exec", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Data: map[string]any{"argv": req.Cmd, "cwd": req.Cwd, "user": req.User}}); err != nil {
		return ExecResult{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	// The guest enforces the timeout; the host's deadline is a backstop for
	// a guest that stops answering.
	cctx, cancel := context.WithTimeout(ctx, time.Duration(req.TimeoutMs)*time.Millisecond+10*time.Second)
	defer cancel()
	gres, err := inst.Guest().Exec(cctx, greq, stdin, out)
	res := wireExec(gres)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		err = errs.New(errs.CodeTimeout, "the sandbox did not finish the command in time")
	}
	ev := Event{Kind: "exec", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Duration: time.Duration(res.DurationMs * float64(time.Millisecond))}
	if err != nil {
		ev.Error, ev.Code = errs.Public(err), string(errs.CodeOf(err))
	} else {
		ev.Data = map[string]any{"exit_code": res.ExitCode, "signal": res.Signal, "oom_killed": res.OOMKilled,
			"timed_out": res.TimedOut, "stdout_bytes": res.StdoutBytes, "stderr_bytes": res.StderrBytes}
	}
	_ = m.event(ctx, ev)
	return res, err
}

// withSpecEnv is a call's environment: the sandbox's (its spec's env)
// with the call's own over it.
func withSpecEnv(spec, call map[string]string) map[string]string {
	if len(spec) == 0 {
		return call
	}
	env := make(map[string]string, len(spec)+len(call))
	maps.Copy(env, spec)
	maps.Copy(env, call)
	return env
}

func (m *Manager) validateExec(req *ExecRequest) error {
	if len(req.Cmd) == 0 || req.Cmd[0] == "" {
		return errs.Invalid("cmd must name a program (it is run directly, not through a shell; use [\"sh\",\"-c\",\"...\"] for shell syntax)")
	}
	if err := validArgv(req.Cmd); err != nil {
		return err
	}
	if err := ValidateEnv(req.Env); err != nil {
		return err
	}
	if len(req.Stdin) > maxStdinBytes {
		return errs.New(errs.CodeTooLarge, "stdin over %d bytes: stream it instead", maxStdinBytes)
	}
	if len(req.Cwd) > 4096 {
		return errs.Invalid("cwd too long")
	}
	if err := validUser(req.User); err != nil {
		return err
	}
	if req.TimeoutMs < 0 {
		return errs.Invalid("timeout_ms must not be negative")
	}
	if req.TimeoutMs == 0 {
		req.TimeoutMs = int64(defaultExecTO / time.Millisecond)
	}
	if max := int64(m.cfg.MaxExecTime / time.Millisecond); req.TimeoutMs > max {
		return errs.Invalid("timeout_ms must be at most %d", max)
	}
	if req.MaxOutputBytes < 0 || req.MaxOutputBytes > 64<<20 {
		return errs.Invalid("max_output_bytes must be between 0 and %d", 64<<20)
	}
	return nil
}
