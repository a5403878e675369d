package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/paddockhq/paddock/client"
)

func newShellCmd(e *env) *cobra.Command {
	var user, cwd string
	var envs []string
	cmd := &cobra.Command{
		Use:   "shell [flags] ID [-- CMD [ARG...]]",
		Short: "Open an interactive terminal in a sandbox",
		Long: `Open an interactive terminal in a sandbox: the user's login shell, or CMD.
The local terminal is put in raw mode (every key goes to the sandbox) and
restored on exit; window size changes follow. paddock exits with the shell's
exit code.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if d := cmd.ArgsLenAtDash(); d > 1 || (d < 0 && len(args) > 1) {
				return fmt.Errorf("usage: paddock shell [flags] ID [-- CMD [ARG...]]")
			}
			envMap, err := parseKV("--env", envs)
			if err != nil {
				return err
			}
			opt := client.TerminalOptions{Cmd: args[1:], User: user, Cwd: cwd, Env: envMap}
			return runTerminal(cmd.Context(), e, e.client(), args[0], opt, true, 0)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&user, "user", "", "run as root (default) or user (uid 1000)")
	fs.StringVar(&cwd, "cwd", "", "working directory inside the sandbox (default /workspace)")
	fs.StringArrayVar(&envs, "env", nil, "environment variable KEY=VALUE (repeatable)")
	return cmd
}

// fdOf returns the descriptor behind a stream when it is a terminal.
func fdOf(v any) (int, bool) {
	f, ok := v.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return -1, false
	}
	return int(f.Fd()), true
}

// runTerminal runs a terminal session in sandbox id, wired to the CLI's
// streams: with interactive, stdin goes to the terminal (raw mode when it
// is one). timeout > 0 hangs up after that long (exit 124).
func runTerminal(ctx context.Context, e *env, c *client.Client, id string, opt client.TerminalOptions, interactive bool, timeout time.Duration) error {
	inFD, inTTY := fdOf(e.stdin)
	outFD, outTTY := fdOf(e.stdout)
	if outTTY && opt.Rows == 0 {
		if w, h, err := term.GetSize(outFD); err == nil && w > 0 && h > 0 {
			opt.Rows, opt.Cols = h, w
		}
	}
	t, err := c.Terminal(ctx, id, opt)
	if err != nil {
		return err
	}
	defer t.Close()
	if interactive && inTTY {
		old, err := term.MakeRaw(inFD)
		if err != nil {
			return fmt.Errorf("raw terminal mode: %w", err)
		}
		// Restored on every way out, signals included (the deferred call
		// runs as RunE returns; SIGINT is a key in raw mode, not a signal).
		defer func() { _ = term.Restore(inFD, old) }()
	}
	if outTTY {
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer func() {
			signal.Stop(winch) // no sends after Stop: closing is safe
			close(winch)
		}()
		go func() {
			for range winch {
				if w, h, err := term.GetSize(outFD); err == nil {
					_ = t.Resize(h, w)
				}
			}
		}()
	}
	if interactive {
		go func() {
			_, _ = io.Copy(t, e.stdin)
			// End of input (a pipe, not a terminal): ^D to the terminal.
			_ = t.CloseInput()
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(e.stdout, t)
	}()
	var timer <-chan time.Time
	if timeout > 0 {
		tm := time.NewTimer(timeout)
		defer tm.Stop()
		timer = tm.C
	}
	select {
	case <-done:
	case <-timer:
		_ = t.Close()
		<-done
		fmt.Fprintf(e.stderr, "\r\npaddock: command timed out and was killed\r\n")
		return exitError{124}
	case <-ctx.Done():
		_ = t.Close()
		<-done
		return ctx.Err()
	}
	ex, err := t.Wait()
	if err != nil {
		return err
	}
	if ex.OOMKilled {
		fmt.Fprintf(e.stderr, "\r\npaddock: killed: the sandbox ran out of memory\r\n")
	}
	if ex.ExitCode != 0 {
		return exitError{ex.ExitCode}
	}
	return nil
}
