package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/client"
)

// execFlags are shared by exec and run.
type execFlags struct {
	interactive bool
	tty         bool
	cwd, user   string
	env         []string
	timeout     string
	jsonOut     bool
}

func (f *execFlags) register(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.interactive, "interactive", "i", false, "stream standard input to the command")
	fs.BoolVarP(&f.tty, "tty", "t", false, "run the command on a terminal (with -i: interactive, raw mode)")
	fs.StringVar(&f.cwd, "cwd", "", "working directory inside the sandbox (default /workspace)")
	fs.StringVar(&f.user, "user", "", "run as root (default) or user (uid 1000)")
	fs.StringArrayVar(&f.env, "env", nil, "environment variable KEY=VALUE (repeatable)")
	fs.StringVar(&f.timeout, "timeout", "", "kill the command (and everything it started) after this long")
	fs.BoolVar(&f.jsonOut, "json", false, "print the result as JSON instead of streaming output")
}

func (f *execFlags) request(e *env, argv []string) (client.ExecRequest, error) {
	req := client.ExecRequest{Cmd: argv, Cwd: f.cwd, User: f.user}
	var err error
	if req.Env, err = parseKV("--env", f.env); err != nil {
		return req, err
	}
	if f.timeout != "" {
		d, err := parseDuration(f.timeout)
		if err != nil {
			return req, fmt.Errorf("--timeout: %w", err)
		}
		req.TimeoutMs = d.Milliseconds()
	}
	if f.tty && f.jsonOut {
		return req, fmt.Errorf("--json and -t do not go together: a terminal has no separate output streams")
	}
	// -i streams stdin over a WebSocket; only --json (one buffered answer)
	// still reads it whole first.
	if f.interactive && f.jsonOut {
		b, err := io.ReadAll(io.LimitReader(e.stdin, 8<<20+1))
		if err != nil {
			return req, fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > 8<<20 {
			return req, fmt.Errorf("stdin over 8 MiB: copy the data in with `paddock cp` instead")
		}
		req.Stdin = string(b)
	}
	return req, nil
}

// runExec executes req in id and turns the result into the CLI's exit code.
func runExec(ctx context.Context, e *env, c *client.Client, id string, f *execFlags, req client.ExecRequest) error {
	if f.tty {
		opt := client.TerminalOptions{Cmd: req.Cmd, User: req.User, Cwd: req.Cwd, Env: req.Env}
		return runTerminal(ctx, e, c, id, opt, f.interactive, time.Duration(req.TimeoutMs)*time.Millisecond)
	}
	var res client.ExecResult
	if f.jsonOut {
		out, err := c.Exec(ctx, id, req)
		if err != nil {
			return err
		}
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
		res = out.ExecResult
	} else {
		var err error
		if f.interactive {
			res, err = c.ExecInteractive(ctx, id, req, e.stdin, e.stdout, e.stderr)
		} else {
			res, err = c.ExecStream(ctx, id, req, e.stdout, e.stderr)
		}
		if err != nil {
			return err
		}
		switch {
		case res.TimedOut:
			fmt.Fprintf(e.stderr, "paddock: command timed out and was killed\n")
			return exitError{124}
		case res.OOMKilled:
			fmt.Fprintf(e.stderr, "paddock: command was killed: the sandbox ran out of memory\n")
		}
	}
	if res.ExitCode != 0 {
		return exitError{res.ExitCode}
	}
	return nil
}

func newExecCmd(e *env) *cobra.Command {
	var f execFlags
	cmd := &cobra.Command{
		Use:   "exec [flags] ID -- CMD [ARG...]",
		Short: "Run a command in a sandbox (exits with its exit code)",
		Long: `Run a command in a sandbox. The command is an argv, run directly — use
"sh -c '...'" for shell syntax. Output streams as it is produced; paddock
exits with the command's exit code (124 if it timed out). -i streams standard
input to the command; -t runs it on a terminal (with -i, the local terminal
is put in raw mode, as paddock shell does).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() > 1 {
				return fmt.Errorf("usage: paddock exec [flags] ID -- CMD [ARG...]")
			}
			req, err := f.request(e, args[1:])
			if err != nil {
				return err
			}
			return runExec(cmd.Context(), e, e.client(), args[0], &f, req)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func newRunCmd(e *env) *cobra.Command {
	var sf specFlags
	var ef execFlags
	cmd := &cobra.Command{
		Use:   "run [create flags] -- CMD [ARG...]",
		Short: "Create a sandbox, run one command in it, destroy it",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := sf.spec()
			if err != nil {
				return err
			}
			req, err := ef.request(e, args)
			if err != nil {
				return err
			}
			c := e.client()
			sb, err := c.Create(cmd.Context(), spec)
			if err != nil {
				return err
			}
			// Destroy even if interrupted.
			defer func() { _ = c.Delete(context.WithoutCancel(cmd.Context()), sb.ID) }()
			return runExec(cmd.Context(), e, c, sb.ID, &ef, req)
		},
	}
	sf.register(cmd.Flags())
	fs := cmd.Flags()
	fs.BoolVarP(&ef.interactive, "interactive", "i", false, "stream standard input to the command")
	fs.BoolVarP(&ef.tty, "tty", "t", false, "run the command on a terminal (with -i: interactive)")
	fs.StringVar(&ef.cwd, "cwd", "", "working directory inside the sandbox")
	fs.StringVar(&ef.user, "user", "", "run as root (default) or user")
	fs.StringVar(&ef.timeout, "exec-timeout", "", "kill the command after this long")
	fs.BoolVar(&ef.jsonOut, "json", false, "print the result as JSON")
	return cmd
}
