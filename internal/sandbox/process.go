package sandbox

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// Types of the process API (package wire: the REST API's shapes). Where
// output starts is wire's from parameter: wire.FromStart, wire.FromTail,
// an offset, or wire.FromOffsets.
type (
	ProcessRequest = wire.ProcessRequest
	ProcessInfo    = wire.ProcessInfo
	PTYSize        = wire.PTYSize
	OutputEvent    = wire.OutputEvent
	OutputOptions  = wire.OutputOptions
	StreamInfo     = wire.StreamInfo
	Control        = wire.Control
)

// ValidFrom checks an output start position: "start", "tail", an offset,
// or "stdout:N,stderr:M".
func ValidFrom(s string) error {
	_, err := guestapi.ParseFrom(s)
	return err
}

// ValidPTY checks a terminal size.
func ValidPTY(size PTYSize) error { return guestapi.PTYSize{Rows: size.Rows, Cols: size.Cols}.Valid() }

// ValidTag checks a process tag.
func ValidTag(tag string) error { return guestapi.ValidTag(tag) }

// SignalNumber reads a signal: a name ("SIGTERM", "TERM") or a number.
func SignalNumber(sig string) (int, error) { return guestapi.ParseSignal(sig) }

// MaxProcessWait bounds one wait call.
const MaxProcessWait = time.Hour

// errAudit is the answer when an intent cannot be recorded.
func errAudit(err error) error {
	return errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
}

// act records the intent of kind, runs fn, and records its result (with
// the data fn returns).
func (m *Manager) act(ctx context.Context, sc Scope, id, kind string, intent map[string]any, fn func() (map[string]any, error)) error {
	if err := m.event(ctx, Event{Kind: kind, Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Data: intent}); err != nil {
		return errAudit(err)
	}
	start := time.Now()
	data, err := fn()
	ev := Event{Kind: kind, Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Duration: time.Since(start), Data: data}
	if err != nil {
		ev.Error, ev.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(context.WithoutCancel(ctx), ev)
	return err
}

// procGuest resolves the sandbox (scoped) and checks the process reference.
// procGuestFor is procGuest for a caller who needs the right need.
func (m *Manager) procGuestFor(ctx context.Context, sc Scope, need rights.Right, id, ref string) (*guestapi.Client, error) {
	if err := sc.Need(need); err != nil {
		return nil, err
	}
	return m.procGuest(ctx, sc, id, ref)
}

func (m *Manager) procGuest(ctx context.Context, sc Scope, id, ref string) (*guestapi.Client, error) {
	g, _, err := m.guest(sc, id)
	if err != nil {
		return nil, err
	}
	if ref != "" {
		if _, err := guestapi.ParseRef(ref); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func validateProcess(req *ProcessRequest) error {
	if len(req.Cmd) == 0 && req.PTY == nil {
		return errs.Invalid("cmd must name a program (it is run directly, not through a shell; use [\"sh\",\"-c\",\"...\"] for shell syntax)")
	}
	if len(req.Cmd) > 0 && req.Cmd[0] == "" {
		return errs.Invalid("cmd[0] must name a program")
	}
	if err := validArgv(req.Cmd); err != nil {
		return err
	}
	if err := ValidateEnv(req.Env); err != nil {
		return err
	}
	if len(req.Cwd) > 4096 {
		return errs.Invalid("cwd too long")
	}
	if err := validUser(req.User); err != nil {
		return err
	}
	if req.Tag != "" {
		if err := guestapi.ValidTag(req.Tag); err != nil {
			return err
		}
	}
	if req.PTY != nil {
		if err := ValidPTY(*req.PTY); err != nil {
			return err
		}
	}
	if b := req.BufferBytes; b != 0 && (b < guestapi.MinProcessBuffer || b > guestapi.MaxProcessBuffer) {
		return errs.Invalid("buffer_bytes must be %d..%d", guestapi.MinProcessBuffer, guestapi.MaxProcessBuffer)
	}
	if req.TimeoutMs < 0 || req.TimeoutMs > wire.MaxProcessTimeoutMs {
		return errs.Invalid("timeout_ms must be 0..%d", int64(wire.MaxProcessTimeoutMs))
	}
	return nil
}

func validArgv(cmd []string) error {
	if len(cmd) > maxArgs {
		return errs.Invalid("at most %d arguments", maxArgs)
	}
	n := 0
	for _, a := range cmd {
		n += len(a) + 1
		for i := 0; i < len(a); i++ {
			if a[i] == 0 {
				return errs.Invalid("arguments must not contain NUL bytes")
			}
		}
	}
	if n > maxArgvBytes {
		return errs.Invalid("arguments exceed %d bytes", maxArgvBytes)
	}
	return nil
}

// StartProcess starts a background process in sandbox id. It runs until it
// exits, is killed, or the sandbox ends — independent of any client.
func (m *Manager) StartProcess(ctx context.Context, sc Scope, id string, req ProcessRequest) (ProcessInfo, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return ProcessInfo{}, err
	}
	if err := validateProcess(&req); err != nil {
		return ProcessInfo{}, err
	}
	g, spec, err := m.guest(sc, id)
	if err != nil {
		return ProcessInfo{}, err
	}
	env := withSpecEnv(spec.Env, req.Env)
	var info ProcessInfo
	err = m.act(ctx, sc, id, "process.start",
		map[string]any{"argv": req.Cmd, "cwd": req.Cwd, "user": req.User, "tag": req.Tag, "pty": req.PTY != nil, "stdin": req.Stdin,
			"timeout_ms": req.TimeoutMs},
		func() (map[string]any, error) {
			var err error
			gi, err := g.StartProcess(ctx, guestapi.ProcessStartRequest{Argv: req.Cmd, Env: env, Cwd: req.Cwd, User: req.User,
				Tag: req.Tag, PTY: guestPTY(req.PTY), Stdin: req.Stdin, BufferBytes: req.BufferBytes, TimeoutMs: req.TimeoutMs})
			info = wireProcess(gi)
			if err != nil {
				return nil, err
			}
			return map[string]any{"pid": info.Pid, "id": info.ID, "argv": info.Argv}, nil
		})
	return info, err
}

// Processes lists the sandbox's running and recently exited processes.
func (m *Manager) Processes(ctx context.Context, sc Scope, id string) ([]ProcessInfo, error) {
	g, err := m.procGuestFor(ctx, sc, rights.Read, id, "")
	if err != nil {
		return nil, err
	}
	list, err := g.ListProcesses(ctx)
	return wireProcesses(list), err
}

// Process describes one process; ref is a pid, a process id or "tag:NAME".
func (m *Manager) Process(ctx context.Context, sc Scope, id, ref string) (ProcessInfo, error) {
	g, err := m.procGuestFor(ctx, sc, rights.Read, id, ref)
	if err != nil {
		return ProcessInfo{}, err
	}
	info, err := g.Process(ctx, ref)
	return wireProcess(info), err
}

// ResolveProcess is Process for a caller about to act on the process
// with need (0: no right beyond seeing the sandbox): an adapter that must
// know a process's state before it acts (E2B knows only running ones)
// looks it up under the right of the action.
func (m *Manager) ResolveProcess(ctx context.Context, sc Scope, id, ref string, need rights.Right) (ProcessInfo, error) {
	if need != 0 {
		if err := sc.Need(need); err != nil {
			return ProcessInfo{}, err
		}
	}
	g, err := m.procGuest(ctx, sc, id, ref)
	if err != nil {
		return ProcessInfo{}, err
	}
	info, err := g.Process(ctx, ref)
	return wireProcess(info), err
}

// ProcessOutput streams a process's output to fn (from opt.From; until it
// exits with opt.Follow) and returns its state at the end.
func (m *Manager) ProcessOutput(ctx context.Context, sc Scope, id, ref string, opt OutputOptions, fn func(OutputEvent) error) (ProcessInfo, error) {
	if err := sc.Need(rights.Read); err != nil {
		return ProcessInfo{}, err
	}
	from, err := guestapi.ParseFrom(opt.From)
	if err != nil {
		return ProcessInfo{}, err
	}
	g, err := m.procGuest(ctx, sc, id, ref)
	if err != nil {
		return ProcessInfo{}, err
	}
	info, err := g.ProcessOutput(ctx, ref, guestapi.OutputOptions{From: from, Follow: opt.Follow}, wireOutput(fn))
	return wireProcess(info), err
}

// WriteStdin streams r to a process's input and returns the bytes written.
func (m *Manager) WriteStdin(ctx context.Context, sc Scope, id, ref string, r io.Reader) (int64, error) {
	g, err := m.procGuestFor(ctx, sc, rights.Exec, id, ref)
	if err != nil {
		return 0, err
	}
	var n int64
	err = m.act(ctx, sc, id, "process.stdin", map[string]any{"process": ref}, func() (map[string]any, error) {
		var err error
		n, err = g.WriteStdin(ctx, ref, r)
		return map[string]any{"bytes": n}, err
	})
	return n, err
}

// CloseStdin closes a process's input (a terminal gets ^D).
func (m *Manager) CloseStdin(ctx context.Context, sc Scope, id, ref string) error {
	g, err := m.procGuestFor(ctx, sc, rights.Exec, id, ref)
	if err != nil {
		return err
	}
	return m.act(ctx, sc, id, "process.close_stdin", map[string]any{"process": ref}, func() (map[string]any, error) {
		return nil, g.CloseStdin(ctx, ref)
	})
}

// SignalProcess sends sig (a name like "SIGTERM" or a number) to a process,
// or with tree to every process in its tree; it returns how many got it.
func (m *Manager) SignalProcess(ctx context.Context, sc Scope, id, ref, sig string, tree bool) (int, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return 0, err
	}
	n, err := guestapi.ParseSignal(sig)
	if err != nil {
		return 0, err
	}
	name := guestapi.SignalName(n)
	g, err := m.procGuest(ctx, sc, id, ref)
	if err != nil {
		return 0, err
	}
	var res guestapi.SignalResult
	err = m.act(ctx, sc, id, "process.signal", map[string]any{"process": ref, "signal": name, "tree": tree},
		func() (map[string]any, error) {
			var err error
			res, err = g.SignalProcess(ctx, ref, guestapi.SignalRequest{Signal: name, Tree: tree})
			return map[string]any{"signalled": res.Signalled}, err
		})
	return res.Signalled, err
}

// WaitProcess waits up to timeout for a process to exit and returns its
// state (still "running" if the timeout passed first).
func (m *Manager) WaitProcess(ctx context.Context, sc Scope, id, ref string, timeout time.Duration) (ProcessInfo, error) {
	if err := sc.Need(rights.Read); err != nil {
		return ProcessInfo{}, err
	}
	if timeout < 0 || timeout > MaxProcessWait {
		return ProcessInfo{}, errs.Invalid("wait timeout must be 0..%s", MaxProcessWait)
	}
	g, err := m.procGuest(ctx, sc, id, ref)
	if err != nil {
		return ProcessInfo{}, err
	}
	info, err := g.WaitProcess(ctx, ref, timeout)
	return wireProcess(info), err
}

// KillProcess kills a process and everything it started (SIGKILL to its
// cgroup sub-group) and returns its final state.
func (m *Manager) KillProcess(ctx context.Context, sc Scope, id, ref string) (ProcessInfo, error) {
	g, err := m.procGuestFor(ctx, sc, rights.Exec, id, ref)
	if err != nil {
		return ProcessInfo{}, err
	}
	var info ProcessInfo
	err = m.act(ctx, sc, id, "process.kill", map[string]any{"process": ref}, func() (map[string]any, error) {
		gi, err := g.KillProcess(ctx, ref)
		info = wireProcess(gi)
		if err != nil {
			return nil, err
		}
		return map[string]any{"pid": info.Pid, "state": info.State, "exit_code": info.ExitCode}, nil
	})
	return info, err
}

// ResizeProcess changes the size of a process's terminal.
func (m *Manager) ResizeProcess(ctx context.Context, sc Scope, id, ref string, size PTYSize) error {
	if err := sc.Need(rights.Exec); err != nil {
		return err
	}
	if err := ValidPTY(size); err != nil {
		return err
	}
	g, err := m.procGuest(ctx, sc, id, ref)
	if err != nil {
		return err
	}
	return g.ResizeProcess(ctx, ref, guestapi.PTYSize{Rows: size.Rows, Cols: size.Cols})
}

// Attachment is an interactive connection to a process (a terminal, or any
// process with stdin): its output, its input and control. Receive runs in
// one goroutine; the other methods may be called from others. Close
// detaches; for a session opened by OpenTerminal it also hangs up.
type Attachment struct {
	m       *Manager
	sc      Scope
	sandbox string
	info    ProcessInfo
	ref     string
	g       *guestapi.Client
	a       *guestapi.Attachment
	hangup  bool
	start   time.Time
	in, out atomic.Int64
	once    sync.Once
}

// AttachProcess opens an interactive connection to a running process;
// output starts at from (wire's from parameter; "" is the start).
func (m *Manager) AttachProcess(ctx context.Context, sc Scope, id, ref, from string) (*Attachment, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return nil, err
	}
	f, err := guestapi.ParseFrom(from)
	if err != nil {
		return nil, err
	}
	g, err := m.procGuest(ctx, sc, id, ref)
	if err != nil {
		return nil, err
	}
	info, err := g.Process(ctx, ref)
	if err != nil {
		return nil, err
	}
	return m.attach(ctx, sc, id, g, wireProcess(info), f, false)
}

func (m *Manager) attach(ctx context.Context, sc Scope, id string, g *guestapi.Client, info ProcessInfo, from guestapi.From, hangup bool) (*Attachment, error) {
	if err := m.event(ctx, Event{Kind: "process.attach", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Data: map[string]any{"process": info.ID, "pid": info.Pid, "pty": info.PTY != nil}}); err != nil {
		return nil, errAudit(err)
	}
	// The attachment outlives the request that opened it only as long as
	// the caller keeps it; it is not tied to ctx beyond the dial.
	ga, err := g.AttachProcess(context.WithoutCancel(ctx), info.ID, from)
	if err != nil {
		_ = m.event(ctx, Event{Kind: "process.attach", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Error: errs.Public(err), Code: string(errs.CodeOf(err))})
		return nil, err
	}
	return &Attachment{m: m, sc: sc, sandbox: id, info: info, ref: info.ID, g: g, a: ga, hangup: hangup, start: time.Now()}, nil
}

// TerminalRequest opens an interactive terminal session.
type TerminalRequest struct {
	Cmd  []string // default: the user's login shell
	Env  map[string]string
	Cwd  string
	User string
	Size PTYSize // default 24x80
}

// OpenTerminal starts a process on a new terminal and attaches to it. The
// session is the connection's: closing the attachment hangs up (SIGHUP to
// the session's processes, then SIGKILL to what is left).
func (m *Manager) OpenTerminal(ctx context.Context, sc Scope, id string, req TerminalRequest) (*Attachment, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return nil, err
	}
	size := req.Size
	if size.Rows == 0 && size.Cols == 0 {
		size = PTYSize{Rows: 24, Cols: 80}
	}
	info, err := m.StartProcess(ctx, sc, id, ProcessRequest{Cmd: req.Cmd, Env: req.Env, Cwd: req.Cwd, User: req.User, PTY: &size})
	if err != nil {
		return nil, err
	}
	g, err := m.procGuest(ctx, sc, id, "")
	if err == nil {
		var a *Attachment
		if a, err = m.attach(ctx, sc, id, g, info, guestapi.From{Mode: guestapi.FromStart}, true); err == nil {
			return a, nil
		}
	}
	if g != nil {
		_, _ = g.KillProcess(context.WithoutCancel(ctx), info.ID)
	}
	return nil, err
}

// Info is the process as it was when the attachment opened.
func (a *Attachment) Info() ProcessInfo { return a.info }

// Receive calls fn for each output event until the process's output ends,
// and returns its final state.
func (a *Attachment) Receive(fn func(OutputEvent) error) (ProcessInfo, error) {
	info, err := a.a.Receive(wireOutput(func(ev OutputEvent) error {
		a.out.Add(int64(len(ev.Data)))
		return fn(ev)
	}))
	return wireProcess(info), err
}

// Write sends input to the process.
func (a *Attachment) Write(p []byte) error {
	a.in.Add(int64(len(p)))
	return a.a.Write(p)
}

// Resize changes the terminal's size.
func (a *Attachment) Resize(size PTYSize) error {
	if err := ValidPTY(size); err != nil {
		return err
	}
	return a.a.Control(guestapi.Control{Type: guestapi.ControlResize, Rows: size.Rows, Cols: size.Cols})
}

// CloseStdin ends the process's input.
func (a *Attachment) CloseStdin() error {
	return a.a.Control(guestapi.Control{Type: guestapi.ControlEOF})
}

// Signal sends a signal to the process (tree: to all of its processes).
func (a *Attachment) Signal(sig string, tree bool) error {
	n, err := guestapi.ParseSignal(sig)
	if err != nil {
		return err
	}
	name := guestapi.SignalName(n)
	ctx := context.Background()
	return a.m.act(ctx, a.sc, a.sandbox, "process.signal", map[string]any{"process": a.ref, "signal": name, "tree": tree},
		func() (map[string]any, error) {
			return nil, a.a.Control(guestapi.Control{Type: guestapi.ControlSignal, Signal: name, Tree: tree})
		})
}

// hangupGrace is how long a hung-up session gets before it is killed.
const hangupGrace = 2 * time.Second

// Close detaches (and for a terminal session, hangs up and kills it). It
// records the attachment's result: bytes in and out.
func (a *Attachment) Close() error {
	var err error
	a.once.Do(func() {
		err = a.a.Close()
		ctx := context.Background()
		data := map[string]any{"process": a.info.ID, "bytes_in": a.in.Load(), "bytes_out": a.out.Load()}
		if a.hangup {
			data["hangup"] = true
			_, _ = a.g.SignalProcess(ctx, a.ref, guestapi.SignalRequest{Signal: "SIGHUP", Tree: true})
			if info, werr := a.g.WaitProcess(ctx, a.ref, hangupGrace); werr != nil || info.State != guestapi.ProcExited {
				_, _ = a.g.KillProcess(ctx, a.ref)
			}
		}
		_ = a.m.event(ctx, Event{Kind: "process.attach", Phase: "result", Tenant: a.sc.Tenant, Actor: a.sc.Actor,
			Sandbox: a.sandbox, Duration: time.Since(a.start), Data: data})
	})
	return err
}

// ParseControl reads a terminal control message.
func ParseControl(b []byte) (Control, error) {
	c, err := guestapi.ParseControl(b)
	return Control{Type: c.Type, Rows: c.Rows, Cols: c.Cols, Signal: c.Signal, Tree: c.Tree}, err
}

// Control message types of terminals.
const (
	ControlResize = wire.ControlResize
	ControlEOF    = wire.ControlEOF
	ControlSignal = wire.ControlSignal
)
