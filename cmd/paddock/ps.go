package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

func newPsCmd(e *env) *cobra.Command {
	return listVerb(e, &cobra.Command{Use: "ps ID", Short: "List a sandbox's background processes", Args: cobra.ExactArgs(1)},
		[]string{"PID", "ID", "TAG", "STATUS", "TTY", "STARTED", "COMMAND"},
		func(ctx context.Context, args []string) ([]client.ProcessInfo, error) {
			return e.client().Processes(ctx, args[0])
		},
		func(p client.ProcessInfo) []string {
			status := p.State
			if p.ExitCode != nil {
				status = "exit " + strconv.Itoa(*p.ExitCode)
				if p.Signal != "" {
					status = p.Signal
				}
			}
			kind := ""
			if p.PTY != nil {
				kind = "pty"
			}
			return []string{strconv.Itoa(p.Pid), p.ID, p.Tag, status, kind, ago(p.StartedAt), clipCmd(p.Argv)}
		})
}

func clipCmd(argv []string) string {
	s := strings.Join(argv, " ")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

func newProcCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "proc",
		Short: "Background processes: start, logs, stdin, kill, wait, attach",
		Long: `Background processes run in a sandbox independently of any client. PID is
a pid, a process id (p7) or tag:NAME.`,
	}
	cmd.AddCommand(newProcStartCmd(e), newProcLogsCmd(e), newProcStdinCmd(e), newProcKillCmd(e),
		newProcWaitCmd(e), newProcAttachCmd(e))
	return cmd
}

func newProcStartCmd(e *env) *cobra.Command {
	var req client.ProcessRequest
	var envs []string
	var buffer string
	var pty bool
	cmd := &cobra.Command{
		Use:   "start [flags] ID -- CMD [ARG...]",
		Short: "Start a background process (prints its pid)",
		Args:  cobra.MinimumNArgs(2),
	}
	resultVerb(e, cmd, "print the process as JSON", func(ctx context.Context, args []string) (client.ProcessInfo, error) {
		if cmd.ArgsLenAtDash() != 1 {
			return client.ProcessInfo{}, fmt.Errorf("usage: paddock proc start [flags] ID -- CMD [ARG...]")
		}
		var err error
		if req.Env, err = parseKV("--env", envs); err != nil {
			return client.ProcessInfo{}, err
		}
		if buffer != "" {
			n, err := parseSizeBytes(buffer)
			if err != nil {
				return client.ProcessInfo{}, fmt.Errorf("--buffer: %w", err)
			}
			req.BufferBytes = n
		}
		if pty {
			req.PTY = &client.PTYSize{Rows: 24, Cols: 80}
		}
		req.Cmd = args[1:]
		return e.client().StartProcess(ctx, args[0], req)
	}, func(info client.ProcessInfo) error { return e.println(strconv.Itoa(info.Pid)) })
	fs := cmd.Flags()
	fs.StringVar(&req.Tag, "tag", "", "name the process (find it later as tag:NAME)")
	fs.StringVar(&req.Cwd, "cwd", "", "working directory inside the sandbox")
	fs.StringVar(&req.User, "user", "", "run as root (default) or user")
	fs.StringArrayVar(&envs, "env", nil, "environment variable KEY=VALUE (repeatable)")
	fs.BoolVar(&req.Stdin, "stdin", false, "keep its stdin open (write with paddock proc stdin)")
	fs.BoolVar(&pty, "pty", false, "run it on a terminal (attach with paddock proc attach)")
	fs.StringVar(&buffer, "buffer", "", "output kept per stream (default 1M, 4K..16M)")
	return cmd
}

// parseSizeBytes reads "64K", "1M" or a number of bytes.
func parseSizeBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, strings.TrimSuffix(t, "M")
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, fmt.Errorf("invalid size %q (try 64K or 4M)", s)
	}
	return n * mult, nil
}

// procVerb builds a verb on one process of a sandbox: ID PID.
func procVerb(e *env, use, short string, run func(ctx context.Context, c *client.Client, id string, ref client.ProcessRef) error) *cobra.Command {
	return &cobra.Command{
		Use:   use + " [flags] ID PID",
		Short: short,
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), e.client(), args[0], client.ProcessRef(args[1]))
		},
	}
}

func newProcLogsCmd(e *env) *cobra.Command {
	var follow bool
	var from string
	cmd := procVerb(e, "logs", "Print a process's output (kept in its ring buffer)",
		func(ctx context.Context, c *client.Client, id string, ref client.ProcessRef) error {
			var lost int64
			_, err := c.ProcessOutput(ctx, id, ref, client.OutputOptions{From: from, Follow: follow}, func(ev client.OutputEvent) error {
				lost += ev.Dropped
				w := e.stdout
				if ev.Stream == "stderr" {
					w = e.stderr
				}
				_, err := w.Write(ev.Data)
				return err
			})
			if lost > 0 {
				fmt.Fprintf(e.stderr, "paddock: %d bytes of output were dropped from the buffer before they could be read\n", lost)
			}
			return err
		})
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the process exits")
	cmd.Flags().StringVar(&from, "from", "", "start, tail, an offset or stdout:N,stderr:M (default start)")
	return cmd
}

func newProcStdinCmd(e *env) *cobra.Command {
	var closeAfter bool
	cmd := procVerb(e, "stdin", "Send standard input to a process",
		func(ctx context.Context, c *client.Client, id string, ref client.ProcessRef) error {
			if _, err := c.WriteStdin(ctx, id, ref, io.NopCloser(e.stdin)); err != nil {
				return err
			}
			if closeAfter {
				return c.CloseStdin(ctx, id, ref)
			}
			return nil
		})
	cmd.Flags().BoolVar(&closeAfter, "close", false, "close the process's stdin afterwards")
	return cmd
}

func newProcKillCmd(e *env) *cobra.Command {
	var sig string
	var tree bool
	cmd := procVerb(e, "kill", "Kill a process and everything it started (or send a signal)",
		func(ctx context.Context, c *client.Client, id string, ref client.ProcessRef) error {
			var err error
			if sig != "" {
				_, err = c.SignalProcess(ctx, id, ref, sig, tree)
			} else {
				_, err = c.KillProcess(ctx, id, ref)
			}
			return err
		})
	cmd.Flags().StringVarP(&sig, "signal", "s", "", "send this signal instead of killing the tree (e.g. TERM, HUP)")
	cmd.Flags().BoolVar(&tree, "tree", false, "with --signal: to every process of its tree")
	return cmd
}

func newProcWaitCmd(e *env) *cobra.Command {
	var timeout string
	cmd := procVerb(e, "wait", "Wait for a process to exit (exits with its exit code)",
		func(ctx context.Context, c *client.Client, id string, ref client.ProcessRef) error {
			d, err := parseDuration(timeout)
			if err != nil {
				return fmt.Errorf("--timeout: %w", err)
			}
			if d == 0 {
				d = time.Hour
			}
			info, err := c.WaitProcess(ctx, id, ref, d)
			if err != nil {
				return err
			}
			if info.ExitCode == nil {
				fmt.Fprintf(e.stderr, "paddock: still running after %s\n", d)
				return exitError{124}
			}
			if *info.ExitCode != 0 {
				return exitError{*info.ExitCode}
			}
			return nil
		})
	cmd.Flags().StringVar(&timeout, "timeout", "", "give up after this long (default 1h; exit 124)")
	return cmd
}

func newProcAttachCmd(e *env) *cobra.Command {
	var from string
	cmd := procVerb(e, "attach", "Attach to a process's terminal (detach by closing: the process keeps running)",
		func(ctx context.Context, c *client.Client, id string, ref client.ProcessRef) error {
			return runTerminal(ctx, e, c, id, client.TerminalOptions{Attach: ref, From: from}, true, 0)
		})
	cmd.Flags().StringVar(&from, "from", "", "replay output from start or an offset (default: new output only)")
	return cmd
}
