package mcp

import (
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/textcut"
	"github.com/paddockhq/paddock/wire"
)

const maxProcessWait = 5 * time.Minute

const processDoc = "The process: its id from process_start (e.g. \"p1\"), its pid, or \"tag:NAME\"."

type processInfo struct {
	Process  string   `json:"process" jsonschema:"Process id within the sandbox (use it as process in the other process_* tools)."`
	Pid      int      `json:"pid"`
	Tag      string   `json:"tag,omitempty"`
	Cmd      []string `json:"cmd"`
	State    string   `json:"state" jsonschema:"running or exited."`
	ExitCode *int     `json:"exit_code,omitempty" jsonschema:"Exit status once exited."`
	Signal   string   `json:"signal,omitempty" jsonschema:"The signal that ended it, if any."`
}

func procOf(p wire.ProcessInfo) processInfo {
	cmd := p.Argv
	if cmd == nil {
		cmd = []string{}
	}
	return processInfo{Process: p.ID, Pid: p.Pid, Tag: p.Tag, Cmd: cmd, State: p.State, ExitCode: p.ExitCode, Signal: p.Signal}
}

type startIn struct {
	sandboxIn
	Command string            `json:"command,omitempty" jsonschema:"A shell command line, run with /bin/sh -c. Give this or argv."`
	Argv    []string          `json:"argv,omitempty" jsonschema:"The program and its arguments, run directly with no shell. Give this or command."`
	Cwd     string            `json:"cwd,omitempty" jsonschema:"Working directory (default /workspace)."`
	Env     map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables."`
	Tag     string            `json:"tag,omitempty" jsonschema:"A name for the process, unique among running ones; then refer to it as \"tag:NAME\"."`
	User    string            `json:"user,omitempty" jsonschema:"Run as \"root\" (default) or \"user\" (uid 1000)."`
}

type startOut struct {
	sandboxOut
	processInfo
}

type procRefIn struct {
	sandboxIn
	Process string `json:"process" jsonschema:"The process: its id from process_start (e.g. \"p1\"), its pid, or \"tag:NAME\"."`
}

type outputIn struct {
	procRefIn
	StdoutOffset int64   `json:"stdout_offset,omitempty" jsonschema:"Read stdout from this byte offset: pass stdout_offset from the previous answer to get only what is new (default 0: from the oldest byte kept)."`
	StderrOffset int64   `json:"stderr_offset,omitempty" jsonschema:"Read stderr from this byte offset, as stdout_offset."`
	TailBytes    int64   `json:"tail_bytes,omitempty" jsonschema:"Instead of offsets: only the last this many bytes of each stream."`
	WaitS        float64 `json:"wait_s,omitempty" jsonschema:"First wait up to this many seconds (at most 300) for the process to exit; 0 reads at once."`
	MaxBytes     int     `json:"max_bytes,omitempty" jsonschema:"Bytes to return per stream (default 32768, at most 1048576); if more is available, more is true and the offsets say where to continue."`
}

type outputOut struct {
	sandboxOut
	Process      processInfo `json:"process"`
	Stdout       string      `json:"stdout"`
	Stderr       string      `json:"stderr"`
	StdoutOffset int64       `json:"stdout_offset" jsonschema:"Offset after the stdout returned: pass it back to continue."`
	StderrOffset int64       `json:"stderr_offset" jsonschema:"Offset after the stderr returned: pass it back to continue."`
	More         bool        `json:"more" jsonschema:"More output is kept than was returned: call again with the offsets."`
	DroppedBytes int64       `json:"dropped_bytes" jsonschema:"Output lost before the offsets asked for (only the most recent output is kept)."`
}

type signalIn struct {
	procRefIn
	Signal string `json:"signal,omitempty" jsonschema:"Signal name or number: SIGTERM (default: ask to stop), SIGINT (like Ctrl-C), SIGKILL (force), SIGHUP..."`
	Tree   bool   `json:"tree,omitempty" jsonschema:"Signal every process it started too (e.g. a shell and its children)."`
}

type signalOut struct {
	sandboxOut
	Process   string `json:"process"`
	Signal    string `json:"signal"`
	Signalled int    `json:"signalled" jsonschema:"How many processes got the signal."`
}

type procListIn struct {
	sandboxIn
}

type procListOut struct {
	sandboxOut
	Processes []processInfo `json:"processes"`
}

func processTools(tb *Toolbox) {
	Add(tb, Tool{Name: "process_start", Need: rights.Of(rights.Exec), Title: "Start a background process", Additive: true,
		Description: "Start a command in the background and return at once with its process id: for servers, " +
			"watchers and long builds. It keeps running between tool calls. Read its output with process_output, " +
			"stop it with process_signal. A server listening inside the sandbox can be reached from exec " +
			"(e.g. curl http://127.0.0.1:PORT/) or, where the server allows, at the URL port_url gives."},
		func(c *Call, in startIn) (startOut, error) {
			argv, err := commandLine(in.Command, in.Argv, "to start")
			if err != nil {
				return startOut{}, err
			}
			req := wire.ProcessRequest{Cmd: argv, Env: in.Env, Cwd: in.Cwd, User: in.User, Tag: in.Tag}
			return onSandbox(c, in.sandboxIn, func(id string, out *startOut) error {
				info, err := c.Backend().StartProcess(c.Context(), id, req)
				out.processInfo = procOf(info)
				return err
			})
		})

	Add(tb, Tool{Name: "process_output", Need: rights.Of(rights.Read), Title: "Read a background process's output", ReadOnly: true,
		Description: "Read what a background process (from process_start) wrote, and whether it is still running " +
			"(process.state, process.exit_code). Pass back stdout_offset and stderr_offset from the previous answer " +
			"to get only new output, or tail_bytes for just the latest. Set wait_s to wait for it to finish first."},
		func(c *Call, in outputIn) (outputOut, error) {
			if in.Process == "" {
				return outputOut{}, newToolError(errs.CodeInvalid, "Give `process`: %s", processDoc)
			}
			if in.StdoutOffset < 0 || in.StderrOffset < 0 || in.TailBytes < 0 {
				return outputOut{}, newToolError(errs.CodeInvalid, "Offsets and tail_bytes must not be negative.")
			}
			wait, err := seconds(in.WaitS, 0, maxProcessWait, "wait_s")
			if err != nil {
				return outputOut{}, err
			}
			budget := int64(outputBudget(in.MaxBytes))
			return onSandbox(c, in.sandboxIn, func(id string, out *outputOut) error {
				var err error
				*out, err = readOutput(c, id, in, wait, budget)
				return err
			})
		})

	Add(tb, Tool{Name: "process_signal", Need: rights.Of(rights.Exec), Title: "Signal a background process",
		Description: "Send a signal to a background process: SIGTERM (default) asks it to stop, SIGINT is Ctrl-C, " +
			"SIGKILL forces it. With tree, everything it started gets the signal too."},
		func(c *Call, in signalIn) (signalOut, error) {
			if in.Process == "" {
				return signalOut{}, newToolError(errs.CodeInvalid, "Give `process`: %s", processDoc)
			}
			sig := in.Signal
			if sig == "" {
				sig = "SIGTERM"
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *signalOut) error {
				*out = signalOut{Process: in.Process, Signal: sig}
				n, err := c.Backend().SignalProcess(c.Context(), id, in.Process, sig, in.Tree)
				out.Signalled = n
				return err
			})
		})

	Add(tb, Tool{Name: "process_list", Need: rights.Of(rights.Read), Title: "List background processes", ReadOnly: true,
		Description: "List a sandbox's background processes (running and recently exited) with their state."},
		func(c *Call, in procListIn) (procListOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *procListOut) error {
				*out = procListOut{Processes: []processInfo{}}
				l, err := c.Backend().Processes(c.Context(), id)
				for _, p := range l {
					out.Processes = append(out.Processes, procOf(p))
				}
				return err
			})
		})
}

// readOutput collects up to budget bytes per stream from the offsets (or
// the tail) asked for.
func readOutput(c *Call, id string, in outputIn, wait time.Duration, budget int64) (outputOut, error) {
	b, ctx := c.Backend(), c.Context()
	if wait > 0 {
		if _, err := b.WaitProcess(ctx, id, in.Process, wait); err != nil {
			return outputOut{}, err
		}
	}
	from := map[string]int64{}
	if in.TailBytes > 0 {
		info, err := b.Process(ctx, id, in.Process)
		if err != nil {
			return outputOut{}, err
		}
		for name, st := range info.Streams {
			from[name] = max(0, st.Written-in.TailBytes)
		}
	} else {
		if in.StdoutOffset > 0 {
			from["stdout"] = in.StdoutOffset
		}
		if in.StderrOffset > 0 {
			from["stderr"] = in.StderrOffset
		}
	}
	bufs := map[string][]byte{}
	next := map[string]int64{"stdout": from["stdout"], "stderr": from["stderr"]}
	var out outputOut
	info, err := b.ProcessOutput(ctx, id, in.Process, wire.OutputOptions{From: wire.FromOffsets(from)}, func(ch wire.OutputEvent) error {
		out.DroppedBytes += ch.Dropped
		if len(ch.Data) == 0 {
			next[ch.Stream] = max(next[ch.Stream], ch.Offset)
			return nil
		}
		room := budget - int64(len(bufs[ch.Stream]))
		if room <= 0 {
			out.More = true
			return nil
		}
		data := ch.Data
		if int64(len(data)) > room {
			data = data[:room]
			out.More = true
		}
		bufs[ch.Stream] = append(bufs[ch.Stream], data...)
		next[ch.Stream] = ch.Offset + int64(len(data))
		return nil
	})
	if err != nil {
		return outputOut{}, err
	}
	out.Process = procOf(info)
	out.Stdout, out.Stderr = textcut.Valid(string(textcut.TrimPartialEnd(bufs["stdout"]))), textcut.Valid(string(textcut.TrimPartialEnd(bufs["stderr"])))
	out.StdoutOffset = next["stdout"] - int64(len(bufs["stdout"])-len(textcut.TrimPartialEnd(bufs["stdout"])))
	out.StderrOffset = next["stderr"] - int64(len(bufs["stderr"])-len(textcut.TrimPartialEnd(bufs["stderr"])))
	return out, nil
}
