package e2b

import (
	"bytes"
	"strconv"
	"syscall"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// process.Process over the manager's background processes. A command the
// SDK runs is a background process (so it survives the client
// disconnecting, as in E2B); its output is read from the process's first
// byte, so nothing written before the stream was open is lost.

var processMethods = map[string]rpcMethod{
	"Start":       {need: rights.Exec, stream: streamOf(procStart)},
	"Connect":     {need: rights.Read, stream: streamOf(procConnect)},
	"List":        {need: rights.Read, unary: unaryOf(procList)},
	"SendInput":   {need: rights.Exec, unary: unaryOf(procSendInput)},
	"SendSignal":  {need: rights.Exec, unary: unaryOf(procSendSignal)},
	"CloseStdin":  {need: rights.Exec, unary: unaryOf(procCloseStdin)},
	"Update":      {need: rights.Exec, unary: unaryOf(procUpdate)},
	"StreamInput": {need: rights.Exec, unary: procStreamInput},
}

// defaultPTY is the size of a terminal whose request gives none.
var defaultPTY = sandbox.PTYSize{Rows: 24, Cols: 80}

// startRequest maps a StartRequest onto the manager's.
func startRequest(in *pbStartRequest, user string) (sandbox.ProcessRequest, error) {
	if in.Process == nil || in.Process.Cmd == "" {
		return sandbox.ProcessRequest{}, errs.Invalid("process.cmd is required")
	}
	req := sandbox.ProcessRequest{Cmd: append([]string{in.Process.Cmd}, in.Process.Args...), Env: in.Process.Envs,
		User: user, Cwd: homeOf(user)}
	if in.Process.Cwd != nil && *in.Process.Cwd != "" {
		cwd, err := resolvePath(*in.Process.Cwd, user)
		if err != nil {
			return req, err
		}
		req.Cwd = cwd
	}
	if in.Tag != nil {
		req.Tag = *in.Tag
	}
	if in.Stdin != nil {
		req.Stdin = *in.Stdin
	}
	if in.PTY != nil {
		size := defaultPTY
		if in.PTY.Size != nil && (in.PTY.Size.Rows != 0 || in.PTY.Size.Cols != 0) {
			size = sandbox.PTYSize{Rows: int(in.PTY.Size.Rows), Cols: int(in.PTY.Size.Cols)}
		}
		req.PTY = &size
	}
	return req, nil
}

func procStart(c *rpcCall, in *pbStartRequest, st *stream) error {
	timeout, err := parseTimeoutMs(c.r.Header.Get(hdrTimeoutMs))
	if err != nil {
		return err
	}
	req, err := startRequest(in, c.q.user)
	if err != nil {
		return err
	}
	// envd ends a command at the call's deadline (Connect-Timeout-Ms, the
	// SDK's timeoutMs), whether or not the client is still there: the
	// process's deadline, which the sandbox enforces (it outlives this
	// server). A deadline past the longest a sandbox keeps is that.
	req.TimeoutMs = min(timeout.Milliseconds(), wire.MaxProcessTimeoutMs)
	info, err := c.s.m.StartProcess(c.ctx(), c.q.sc, c.q.id, req)
	if err != nil {
		return err
	}
	return c.follow(st, info, wire.FromStart)
}

func procConnect(c *rpcCall, in *pbSelectorRequest, st *stream) error {
	ref, err := selectorRef(in.Process)
	if err != nil {
		return err
	}
	info, err := c.s.m.Process(c.ctx(), c.q.sc, c.q.id, ref)
	if err != nil {
		return err
	}
	// Re-attaching shows what comes from now on, as envd does.
	return c.follow(st, info, wire.FromTail)
}

// follow streams a process's events: start, its output, its end.
func (c *rpcCall) follow(st *stream, info sandbox.ProcessInfo, from string) error {
	if err := st.send(pbEventResponse{Event: pbProcessEvent{Start: &pbStartEvent{Pid: uint32(info.Pid)}}}); err != nil {
		return err
	}
	stop := st.keepalives(parseKeepalive(c.r.Header.Get(hdrKeepalive)), pbEventResponse{Event: pbProcessEvent{Keepalive: &struct{}{}}})
	defer stop()
	final, err := c.s.m.ProcessOutput(c.ctx(), c.q.sc, c.q.id, info.ID, sandbox.OutputOptions{From: from, Follow: true},
		func(ev sandbox.OutputEvent) error {
			if len(ev.Data) == 0 {
				return nil // a position: E2B's stream has no offsets
			}
			var d pbDataEvent
			switch ev.Stream {
			case wire.StreamStdout:
				d.Stdout = ev.Data
			case wire.StreamStderr:
				d.Stderr = ev.Data
			case wire.StreamPTY:
				d.PTY = ev.Data
			default:
				return nil
			}
			return st.send(pbEventResponse{Event: pbProcessEvent{Data: &d}})
		})
	if err != nil {
		return err
	}
	if final.State != wire.ProcExited {
		return errs.New(errs.CodeUnavailable, "the process's output ended before it exited")
	}
	return st.send(pbEventResponse{Event: pbProcessEvent{End: endEvent(final)}})
}

// endEvent describes how a process ended as envd does (Go's
// os.ProcessState): exit code -1 and "signal: killed" for a death by
// signal, "exit status N" otherwise; error is set unless it exited 0.
func endEvent(info sandbox.ProcessInfo) *pbEndEvent {
	if info.Signal != "" {
		status := "signal: " + signalText(info.Signal)
		if info.OOMKilled {
			status += " (out of memory)"
		}
		return &pbEndEvent{ExitCode: -1, Exited: false, Status: status, Error: &status}
	}
	code := 0
	if info.ExitCode != nil {
		code = *info.ExitCode
	}
	status := "exit status " + strconv.Itoa(code)
	ev := &pbEndEvent{ExitCode: int32(code), Exited: true, Status: status}
	if code != 0 {
		ev.Error = &status
	}
	return ev
}

// signalText is a signal's description as Go prints it ("killed").
func signalText(name string) string {
	n, err := sandbox.SignalNumber(name)
	if err != nil {
		return name
	}
	return syscall.Signal(n).String()
}

// selectorRef turns a ProcessSelector into a process reference.
func selectorRef(sel *pbSelector) (string, error) {
	switch {
	case sel == nil || (sel.Pid == nil && sel.Tag == nil):
		return "", errs.Invalid("process selector (pid or tag) is required")
	case sel.Pid != nil && sel.Tag != nil:
		return "", errs.Invalid("process selector takes a pid or a tag, not both")
	case sel.Tag != nil:
		if err := sandbox.ValidTag(*sel.Tag); err != nil {
			return "", err
		}
		return "tag:" + *sel.Tag, nil
	}
	if *sel.Pid == 0 {
		return "", errs.Invalid("pid must not be 0")
	}
	return strconv.FormatUint(uint64(*sel.Pid), 10), nil
}

// runningProcess resolves a selector to a running process, for an
// action that needs exec: envd knows only running processes, and the
// SDK's kill answers false for the others.
func (c *rpcCall) runningProcess(sel *pbSelector) (sandbox.ProcessInfo, error) {
	ref, err := selectorRef(sel)
	if err != nil {
		return sandbox.ProcessInfo{}, err
	}
	info, err := c.s.m.ResolveProcess(c.ctx(), c.q.sc, c.q.id, ref, rights.Exec)
	if err != nil {
		return info, err
	}
	if info.State != wire.ProcRunning {
		return info, errs.NotFound("process %s has exited", ref)
	}
	return info, nil
}

func procList(c *rpcCall, in *empty) (any, error) {
	procs, err := c.s.m.Processes(c.ctx(), c.q.sc, c.q.id)
	if err != nil {
		return nil, err
	}
	out := pbListResponse{Processes: []pbProcessInfo{}}
	for _, p := range procs {
		if p.State != wire.ProcRunning {
			continue
		}
		cfg := pbProcessConfig{Envs: p.Env}
		if len(p.Argv) > 0 {
			cfg.Cmd, cfg.Args = p.Argv[0], p.Argv[1:]
		}
		if p.Cwd != "" {
			cwd := p.Cwd
			cfg.Cwd = &cwd
		}
		pi := pbProcessInfo{Config: cfg, Pid: uint32(p.Pid)}
		if p.Tag != "" {
			tag := p.Tag
			pi.Tag = &tag
		}
		out.Processes = append(out.Processes, pi)
	}
	return out, nil
}

func procSendInput(c *rpcCall, in *pbSendInputRequest) (any, error) {
	var data []byte
	switch {
	case in.Input == nil || (in.Input.Stdin == nil && in.Input.PTY == nil):
		return nil, errs.Invalid("input (stdin or pty) is required")
	case in.Input.Stdin != nil && in.Input.PTY != nil:
		return nil, errs.Invalid("input is stdin or pty, not both")
	case in.Input.Stdin != nil:
		data = *in.Input.Stdin
	default:
		data = *in.Input.PTY
	}
	info, err := c.runningProcess(in.Process)
	if err != nil {
		return nil, err
	}
	if _, err := c.s.m.WriteStdin(c.ctx(), c.q.sc, c.q.id, info.ID, bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return empty{}, nil
}

func procSendSignal(c *rpcCall, in *pbSendSignalRequest) (any, error) {
	info, err := c.runningProcess(in.Process)
	if err != nil {
		return nil, err
	}
	switch in.Signal {
	case sigKill:
		// The whole tree: what bash -c started goes with it.
		_, err = c.s.m.KillProcess(c.ctx(), c.q.sc, c.q.id, info.ID)
	case sigTerm:
		_, err = c.s.m.SignalProcess(c.ctx(), c.q.sc, c.q.id, info.ID, "SIGTERM", false)
	default:
		return nil, errs.Invalid("signal must be SIGNAL_SIGTERM or SIGNAL_SIGKILL")
	}
	if err != nil {
		return nil, err
	}
	return empty{}, nil
}

func procCloseStdin(c *rpcCall, in *pbSelectorRequest) (any, error) {
	info, err := c.runningProcess(in.Process)
	if err != nil {
		return nil, err
	}
	if err := c.s.m.CloseStdin(c.ctx(), c.q.sc, c.q.id, info.ID); err != nil {
		return nil, err
	}
	return empty{}, nil
}

func procUpdate(c *rpcCall, in *pbUpdateRequest) (any, error) {
	info, err := c.runningProcess(in.Process)
	if err != nil {
		return nil, err
	}
	if in.PTY != nil && in.PTY.Size != nil {
		size := sandbox.PTYSize{Rows: int(in.PTY.Size.Rows), Cols: int(in.PTY.Size.Cols)}
		if err := c.s.m.ResizeProcess(c.ctx(), c.q.sc, c.q.id, info.ID, size); err != nil {
			return nil, err
		}
	}
	return empty{}, nil
}

// procStreamInput is a client stream, which the SDK's fetch transport
// cannot send; SendInput does the same.
func procStreamInput(*rpcCall, func(any) error) (any, error) {
	return nil, rpcErr(ccUnimplemented, "process.Process/StreamInput is not supported; use SendInput")
}
