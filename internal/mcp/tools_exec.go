package mcp

import (
	"math"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

const (
	defaultExecTimeout = 120 * time.Second
	maxExecTimeout     = time.Hour
	// Output kept per stream for a model (head and tail); the rest is
	// counted and marked as omitted.
	defaultOutputBytes = 32 << 10
	minOutputBytes     = 1 << 10
	maxOutputBytes     = 1 << 20
)

type execIn struct {
	sandboxIn
	Command        string            `json:"command,omitempty" jsonschema:"A shell command line, run with /bin/sh -c: pipes, &&, redirects, globs and variables work. Give this or argv."`
	Argv           []string          `json:"argv,omitempty" jsonschema:"The program and its arguments, run directly with no shell (nothing is interpreted). Give this or command."`
	Cwd            string            `json:"cwd,omitempty" jsonschema:"Working directory (default /workspace)."`
	Env            map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables."`
	TimeoutS       float64           `json:"timeout_s,omitempty" jsonschema:"Kill the command after this many seconds (default 120, at most 3600). Start servers and long jobs with process_start instead."`
	Stdin          string            `json:"stdin,omitempty" jsonschema:"Text given to the command on its standard input."`
	User           string            `json:"user,omitempty" jsonschema:"Run as \"root\" (default; root inside the sandbox only) or \"user\" (uid 1000)."`
	MaxOutputBytes int               `json:"max_output_bytes,omitempty" jsonschema:"Bytes of stdout and of stderr to return (default 32768, at most 1048576); beyond that the first and last halves are kept and a marker says how much was omitted."`
}

type execOut struct {
	Sandbox         string  `json:"sandbox" jsonschema:"The sandbox the command ran in."`
	ExitCode        int     `json:"exit_code" jsonschema:"The command's exit status (0 is success; 128+N if killed by signal N)."`
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	StdoutBytes     int64   `json:"stdout_bytes" jsonschema:"Total bytes the command wrote to stdout."`
	StderrBytes     int64   `json:"stderr_bytes" jsonschema:"Total bytes the command wrote to stderr."`
	StdoutTruncated bool    `json:"stdout_truncated" jsonschema:"stdout was cut (see the marker in it)."`
	StderrTruncated bool    `json:"stderr_truncated" jsonschema:"stderr was cut (see the marker in it)."`
	TimedOut        bool    `json:"timed_out" jsonschema:"The command was killed because it ran past timeout_s."`
	Signal          string  `json:"signal,omitempty" jsonschema:"The signal that killed the command, if any."`
	OOMKilled       bool    `json:"oom_killed,omitempty" jsonschema:"The sandbox ran out of memory and the command was killed."`
	DurationMs      float64 `json:"duration_ms"`
}

func (o *execOut) setSandbox(id string) { o.Sandbox = id }

// commandLine turns command or argv into an argv.
func commandLine(command string, argv []string, what string) ([]string, error) {
	switch {
	case command != "" && len(argv) > 0:
		return nil, newToolError(errs.CodeInvalid, "Give either `command` (a shell line) or `argv` (a program and its arguments), not both.")
	case command != "":
		return []string{"/bin/sh", "-c", command}, nil
	case len(argv) > 0:
		return argv, nil
	}
	return nil, newToolError(errs.CodeInvalid, "Give `command` (a shell line such as \"ls -la | head\") or `argv` (such as [\"python3\", \"app.py\"]) %s.", what)
}

// seconds reads a timeout in seconds, bounded.
func seconds(s float64, def, max time.Duration, name string) (time.Duration, error) {
	if s == 0 {
		return def, nil
	}
	if s < 0 || math.IsNaN(s) || s > max.Seconds() {
		return 0, newToolError(errs.CodeInvalid, "`%s` must be between 0 and %g seconds.", name, max.Seconds())
	}
	return time.Duration(s * float64(time.Second)), nil
}

func outputBudget(n int) int {
	switch {
	case n <= 0:
		return defaultOutputBytes
	case n < minOutputBytes:
		return minOutputBytes
	case n > maxOutputBytes:
		return maxOutputBytes
	}
	return n
}

func execTools(tb *Toolbox) {
	Add(tb, Tool{Name: "exec", Need: rights.Of(rights.Exec), Title: "Run a command",
		Description: "Run a command in a sandbox and wait for it: returns its exit code, stdout and stderr. " +
			"Use `command` for a shell line (e.g. \"cd app && npm test 2>&1 | tail -50\") or `argv` to run a program " +
			"directly. Long output is cut in the middle (first and last parts kept, marked). Each call starts fresh " +
			"(no shell state is kept between calls: cd and export do not carry over; pass cwd and env instead). " +
			"For servers or jobs that run longer than a few minutes use process_start."},
		func(c *Call, in execIn) (execOut, error) {
			argv, err := commandLine(in.Command, in.Argv, "to run")
			if err != nil {
				return execOut{}, err
			}
			to, err := seconds(in.TimeoutS, defaultExecTimeout, maxExecTimeout, "timeout_s")
			if err != nil {
				return execOut{}, err
			}
			budget := outputBudget(in.MaxOutputBytes)
			req := wire.ExecRequest{Cmd: argv, Env: in.Env, Cwd: in.Cwd, User: in.User, Stdin: in.Stdin,
				TimeoutMs: max(1, to.Milliseconds())}
			return onSandbox(c, in.sandboxIn, func(id string, out *execOut) error {
				stdout, stderr := newCapture(budget), newCapture(budget)
				res, err := c.Backend().ExecStream(c.Context(), id, req, stdout, stderr)
				if err != nil {
					return err
				}
				*out = execOut{ExitCode: res.ExitCode, Stdout: stdout.String(), Stderr: stderr.String(),
					StdoutBytes: stdout.total, StderrBytes: stderr.total,
					StdoutTruncated: stdout.truncated(), StderrTruncated: stderr.truncated(),
					TimedOut: res.TimedOut, Signal: res.Signal, OOMKilled: res.OOMKilled, DurationMs: res.DurationMs}
				return nil
			})
		})
}
