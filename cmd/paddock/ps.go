package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

func newPsCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ps ID",
		Short: "List a sandbox's background processes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := e.client().Processes(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					return printJSON(e.stdout, []any{})
				}
				return printJSON(e.stdout, list)
			}
			rows := make([][]string, 0, len(list))
			for _, p := range list {
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
				rows = append(rows, []string{strconv.Itoa(p.Pid), p.ID, p.Tag, status, kind, ago(p.StartedAt), clipCmd(p.Argv)})
			}
			table(e.stdout, []string{"PID", "ID", "TAG", "STATUS", "TTY", "STARTED", "COMMAND"}, rows)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
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
	var asJSON, pty bool
	cmd := &cobra.Command{
		Use:   "start [flags] ID -- CMD [ARG...]",
		Short: "Start a background process (prints its pid)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return fmt.Errorf("usage: paddock proc start [flags] ID -- CMD [ARG...]")
			}
			var err error
			if req.Env, err = parseKV("--env", envs); err != nil {
				return err
			}
			if buffer != "" {
				n, err := parseSizeBytes(buffer)
				if err != nil {
					return fmt.Errorf("--buffer: %w", err)
				}
				req.BufferBytes = n
			}
			if pty {
				req.PTY = &client.PTYSize{Rows: 24, Cols: 80}
			}
			req.Cmd = args[1:]
			info, err := e.client().StartProcess(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, info)
			}
			fmt.Fprintln(e.stdout, info.Pid)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&req.Tag, "tag", "", "name the process (find it later as tag:NAME)")
	fs.StringVar(&req.Cwd, "cwd", "", "working directory inside the sandbox")
	fs.StringVar(&req.User, "user", "", "run as root (default) or user")
	fs.StringArrayVar(&envs, "env", nil, "environment variable KEY=VALUE (repeatable)")
	fs.BoolVar(&req.Stdin, "stdin", false, "keep its stdin open (write with paddock proc stdin)")
	fs.BoolVar(&pty, "pty", false, "run it on a terminal (attach with paddock proc attach)")
	fs.StringVar(&buffer, "buffer", "", "output kept per stream (default 1M, 4K..16M)")
	fs.BoolVar(&asJSON, "json", false, "print the process as JSON")
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

func newProcLogsCmd(e *env) *cobra.Command {
	var follow bool
	var from string
	cmd := &cobra.Command{
		Use:   "logs [flags] ID PID",
		Short: "Print a process's output (kept in its ring buffer)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var lost int64
			_, err := e.client().ProcessOutput(cmd.Context(), args[0], client.ProcessRef(args[1]),
				client.OutputOptions{From: from, Follow: follow}, func(ev client.OutputEvent) error {
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
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the process exits")
	cmd.Flags().StringVar(&from, "from", "", "start, tail, an offset or stdout:N,stderr:M (default start)")
	return cmd
}

func newProcStdinCmd(e *env) *cobra.Command {
	var closeAfter bool
	cmd := &cobra.Command{
		Use:   "stdin [flags] ID PID",
		Short: "Send standard input to a process",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := e.client()
			ref := client.ProcessRef(args[1])
			if _, err := c.WriteStdin(cmd.Context(), args[0], ref, io.NopCloser(e.stdin)); err != nil {
				return err
			}
			if closeAfter {
				return c.CloseStdin(cmd.Context(), args[0], ref)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&closeAfter, "close", false, "close the process's stdin afterwards")
	return cmd
}

func newProcKillCmd(e *env) *cobra.Command {
	var sig string
	var tree bool
	cmd := &cobra.Command{
		Use:   "kill [flags] ID PID",
		Short: "Kill a process and everything it started (or send a signal)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := e.client()
			ref := client.ProcessRef(args[1])
			if sig != "" {
				_, err := c.SignalProcess(cmd.Context(), args[0], ref, sig, tree)
				return err
			}
			_, err := c.KillProcess(cmd.Context(), args[0], ref)
			return err
		},
	}
	cmd.Flags().StringVarP(&sig, "signal", "s", "", "send this signal instead of killing the tree (e.g. TERM, HUP)")
	cmd.Flags().BoolVar(&tree, "tree", false, "with --signal: to every process of its tree")
	return cmd
}

func newProcWaitCmd(e *env) *cobra.Command {
	var timeout string
	cmd := &cobra.Command{
		Use:   "wait [flags] ID PID",
		Short: "Wait for a process to exit (exits with its exit code)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := parseDuration(timeout)
			if err != nil {
				return fmt.Errorf("--timeout: %w", err)
			}
			if d == 0 {
				d = time.Hour
			}
			info, err := e.client().WaitProcess(cmd.Context(), args[0], client.ProcessRef(args[1]), d)
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
		},
	}
	cmd.Flags().StringVar(&timeout, "timeout", "", "give up after this long (default 1h; exit 124)")
	return cmd
}

func newProcAttachCmd(e *env) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "attach [flags] ID PID",
		Short: "Attach to a process's terminal (detach by closing: the process keeps running)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := client.TerminalOptions{Attach: client.ProcessRef(args[1]), From: from}
			return runTerminal(cmd.Context(), e, e.client(), args[0], opt, true, 0)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "replay output from start or an offset (default: new output only)")
	return cmd
}
