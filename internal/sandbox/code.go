package sandbox

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// Code contexts (docs/code.md): stateful interpreters the guest runs in a
// sandbox. Rights: running a cell needs exec, as a command does; so do
// creating, restarting and deleting a context (they start or end an
// interpreter, which is running code); listing and describing contexts
// need read, like listing processes' state for a viewer.

// Bounds checked here before the guest sees a request (the guest checks
// them again; refusing early keeps an oversized cell off the wire).
const (
	maxCodeBytes   = 1 << 20 // the kernel's cap on one cell
	maxCodeTimeout = 24 * time.Hour
	maxContextID   = 128
	maxCodeCwd     = 4096
)

// CodeExecuteRequest runs one cell (POST .../code).
type CodeExecuteRequest = wire.CodeExecuteRequest

// CodeContextRequest creates a context.
type CodeContextRequest = wire.CodeContextRequest

// CodeContext is a context and the user it runs as.
type CodeContext = wire.CodeContext

// CodeEvent is one event of an execution stream.
type CodeEvent = codewire.Event

func codeContext(c guestapi.CodeContext) CodeContext {
	return CodeContext{Context: c.Context, User: c.User}
}

func validContextID(id string) error {
	if id == "" {
		return errs.Invalid("a context id is required")
	}
	if len(id) > maxContextID {
		return errs.NotFound("code context not found")
	}
	return nil
}

// CreateCodeContext starts a new context in sandbox id.
func (m *Manager) CreateCodeContext(ctx context.Context, sc Scope, id string, req CodeContextRequest) (CodeContext, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return CodeContext{}, err
	}
	lang, ok := codewire.NormalizeLanguage(req.Language)
	if !ok {
		return CodeContext{}, errs.Invalid("unknown language %q: Paddock runs python, javascript, typescript and bash", clip(req.Language))
	}
	req.Language = lang
	if err := validUser(req.User); err != nil {
		return CodeContext{}, err
	}
	if len(req.Cwd) > maxCodeCwd {
		return CodeContext{}, errs.Invalid("cwd too long")
	}
	if err := ValidateEnv(req.Env); err != nil {
		return CodeContext{}, err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return CodeContext{}, err
	}
	defer b.hold()()
	data := map[string]any{"language": lang, "cwd": req.Cwd, "user": req.User}
	if err := m.event(ctx, Event{Kind: "code.context_create", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Data: data}); err != nil {
		return CodeContext{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	t0 := time.Now()
	c, err := m.guestOf(b).CreateCodeContext(ctx, guestapi.CodeCreateRequest{CreateContextRequest: req.CreateContextRequest, User: req.User})
	ev := Event{Kind: "code.context_create", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Duration: time.Since(t0)}
	if err != nil {
		ev.Error, ev.Code = errs.Public(err), string(errs.CodeOf(err))
	} else {
		ev.Data = map[string]any{"context_id": c.ID, "language": c.Language}
	}
	_ = m.event(ctx, ev)
	return codeContext(c), err
}

// CodeContexts lists sandbox id's contexts, oldest first.
func (m *Manager) CodeContexts(ctx context.Context, sc Scope, id string) ([]CodeContext, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return nil, err
	}
	list, err := m.guestOf(b).CodeContexts(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]CodeContext, 0, len(list))
	for _, c := range list {
		out = append(out, codeContext(c))
	}
	return out, nil
}

// CodeContext describes one context.
func (m *Manager) CodeContext(ctx context.Context, sc Scope, id, ctxID string) (CodeContext, error) {
	if err := sc.Need(rights.Read); err != nil {
		return CodeContext{}, err
	}
	if err := validContextID(ctxID); err != nil {
		return CodeContext{}, err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return CodeContext{}, err
	}
	c, err := m.guestOf(b).CodeContext(ctx, ctxID)
	return codeContext(c), err
}

// RestartCodeContext replaces a context's kernel (its state is lost).
func (m *Manager) RestartCodeContext(ctx context.Context, sc Scope, id, ctxID string) (CodeContext, error) {
	var out CodeContext
	err := m.contextAction(ctx, sc, id, ctxID, "code.context_restart", func(g *guestapi.Client) error {
		c, err := g.RestartCodeContext(ctx, ctxID)
		out = codeContext(c)
		return err
	})
	return out, err
}

// DeleteCodeContext ends a context and its kernel.
func (m *Manager) DeleteCodeContext(ctx context.Context, sc Scope, id, ctxID string) error {
	return m.contextAction(ctx, sc, id, ctxID, "code.context_delete", func(g *guestapi.Client) error {
		return g.DeleteCodeContext(ctx, ctxID)
	})
}

// contextAction is restart and delete: exec right, audited.
func (m *Manager) contextAction(ctx context.Context, sc Scope, id, ctxID, kind string, do func(*guestapi.Client) error) error {
	if err := sc.Need(rights.Exec); err != nil {
		return err
	}
	if err := validContextID(ctxID); err != nil {
		return err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return err
	}
	defer b.hold()()
	data := map[string]any{"context_id": ctxID}
	if err := m.event(ctx, Event{Kind: kind, Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Data: data}); err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	t0 := time.Now()
	err = do(m.guestOf(b))
	ev := Event{Kind: kind, Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Data: data, Duration: time.Since(t0)}
	if err != nil {
		ev.Error, ev.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(ctx, ev)
	return err
}

func (m *Manager) validateCode(req *CodeExecuteRequest) error {
	if len(req.Code) > maxCodeBytes {
		return errs.New(errs.CodeTooLarge, "the code of one cell is at most %d bytes", maxCodeBytes)
	}
	if req.Context != "" && req.Language != "" {
		return errs.Invalid("give context_id or language, not both (a context has its language)")
	}
	if len(req.Context) > maxContextID {
		return errs.NotFound("code context not found")
	}
	if req.Context == "" {
		lang, ok := codewire.NormalizeLanguage(req.Language)
		if !ok {
			return errs.Invalid("unknown language %q: Paddock runs python, javascript, typescript and bash", clip(req.Language))
		}
		req.Language = lang
	}
	if err := validUser(req.User); err != nil {
		return err
	}
	if err := ValidateEnv(req.Env); err != nil {
		return err
	}
	if req.TimeoutMS < 0 {
		return errs.Invalid("timeout_ms must not be negative")
	}
	limit := maxCodeTimeout
	if m.cfg.MaxExecTime > 0 && m.cfg.MaxExecTime < limit {
		limit = m.cfg.MaxExecTime
	}
	if req.TimeoutMS > int64(limit/time.Millisecond) {
		return errs.Invalid("timeout_ms must be at most %d", int64(limit/time.Millisecond))
	}
	return nil
}

// ExecuteCode runs one cell in sandbox id and calls emit with each event
// of its stream, in order, from start to end. A refused request returns
// its error before any event. Once the start event was emitted the
// stream always ends with an end event: when the sandbox goes away
// mid-cell, this emits one (status died) and returns nil. An emit that
// fails (the caller went away) closes the guest's stream, which
// interrupts the cell, and its error is returned.
func (m *Manager) ExecuteCode(ctx context.Context, sc Scope, id string, req CodeExecuteRequest, emit func(CodeEvent) error) error {
	if err := sc.Need(rights.Exec); err != nil {
		return err
	}
	if err := m.validateCode(&req); err != nil {
		return err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return err
	}
	defer b.hold()() // not idle while a cell runs (idle_pause_after_s)
	if err := m.event(ctx, Event{Kind: "code.execute", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Data: map[string]any{"context_id": req.Context, "language": req.Language, "user": req.User, "code_bytes": len(req.Code)}}); err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	var (
		started, ended bool
		start          codewire.Start
		end            codewire.End
		emitErr        error
	)
	t0 := time.Now()
	err = m.guestOf(b).ExecuteCode(ctx, guestapi.CodeExecuteRequest{ExecuteRequest: req.ExecuteRequest, User: req.User}, func(ev codewire.Event) error {
		switch ev.Type {
		case codewire.EventStart:
			started, start = true, *ev.Start
		case codewire.EventEnd:
			ended, end = true, *ev.End
		}
		if e := emit(ev); e != nil {
			emitErr = e
			return e
		}
		return nil
	})
	if err != nil && started && !ended && emitErr == nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		// The sandbox stopped (or its agent broke) mid-cell: the caller's
		// stream still ends, saying so.
		end = codewire.End{Status: codewire.StatusDied, StateLost: true, DurationMS: float64(time.Since(t0).Microseconds()) / 1000,
			Message: "the cell's stream from the sandbox broke: " + errs.Public(err)}
		ended = true
		if e := emit(codewire.Event{Type: codewire.EventEnd, End: &end}); e == nil {
			err = nil
		}
	}
	ev := Event{Kind: "code.execute", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Duration: time.Since(t0)}
	switch {
	case ended:
		ev.Data = map[string]any{"context_id": start.Context, "language": start.Language, "status": end.Status,
			"execution_count": end.ExecutionCount, "restarted": start.Restarted, "truncated": end.Truncated}
	case err != nil:
		ev.Error, ev.Code = errs.Public(err), string(errs.CodeOf(err))
		if started {
			ev.Data = map[string]any{"context_id": start.Context, "language": start.Language, "status": codewire.StatusCancelled}
		}
	}
	_ = m.event(context.WithoutCancel(ctx), ev)
	return err
}

// guestOf is the agent client of a running box.
func (m *Manager) guestOf(b *box) *guestapi.Client {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inst.Guest()
}

// ExecuteCode runs one cell, calling emit with each event as it comes.
func (c *Caller) ExecuteCode(ctx context.Context, id string, req CodeExecuteRequest, emit func(CodeEvent) error) error {
	return c.m.ExecuteCode(ctx, rights.FromContext(ctx), id, req, emit)
}

// CreateCodeContext starts a context.
func (c *Caller) CreateCodeContext(ctx context.Context, id string, req CodeContextRequest) (CodeContext, error) {
	return c.m.CreateCodeContext(ctx, rights.FromContext(ctx), id, req)
}

// CodeContexts lists a sandbox's contexts.
func (c *Caller) CodeContexts(ctx context.Context, id string) ([]CodeContext, error) {
	return c.m.CodeContexts(ctx, rights.FromContext(ctx), id)
}

// CodeContext describes one context.
func (c *Caller) CodeContext(ctx context.Context, id, ctxID string) (CodeContext, error) {
	return c.m.CodeContext(ctx, rights.FromContext(ctx), id, ctxID)
}

// RestartCodeContext replaces a context's kernel.
func (c *Caller) RestartCodeContext(ctx context.Context, id, ctxID string) (CodeContext, error) {
	return c.m.RestartCodeContext(ctx, rights.FromContext(ctx), id, ctxID)
}

// DeleteCodeContext ends a context.
func (c *Caller) DeleteCodeContext(ctx context.Context, id, ctxID string) error {
	return c.m.DeleteCodeContext(ctx, rights.FromContext(ctx), id, ctxID)
}

// WarmCode starts the default contexts of languages (as user) in sandbox
// id in the background, so that its first cell finds a running kernel. It
// returns once the guest accepted; a warm-up that fails is reported by
// the first cell.
func (m *Manager) WarmCode(ctx context.Context, sc Scope, id, user string, languages []string) error {
	if err := sc.Need(rights.Exec); err != nil {
		return err
	}
	if len(languages) > guestapi.MaxWarmLanguages {
		return errs.Invalid("at most %d languages", guestapi.MaxWarmLanguages)
	}
	for i, l := range languages {
		lang, ok := codewire.NormalizeLanguage(l)
		if !ok {
			return errs.Invalid("unknown language %q", clip(l))
		}
		languages[i] = lang
	}
	if err := validUser(user); err != nil {
		return err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return err
	}
	return m.guestOf(b).WarmCode(ctx, guestapi.CodeWarmRequest{Languages: languages, User: user})
}
