package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/wire"
)

// paddock code: run a cell in a stateful interpreter (docs/code.md).

// codeImageTypes are the binary representations the CLI saves (with
// --images) or summarises; text types are printed.
var codeImageTypes = []struct{ mime, ext string }{
	{"image/png", "png"}, {"image/jpeg", "jpg"}, {"image/svg+xml", "svg"}, {"application/pdf", "pdf"},
}

// Exit codes of paddock code for a cell that did not end ok.
const (
	codeExitError     = 1   // the code raised (or a bash cell exited non-zero: its status)
	codeExitTimeout   = 124 // as exec's timeout
	codeExitCancelled = 130
	codeExitDied      = 137 // the kernel died; the next cell starts a new one
)

type codeFlags struct {
	language, context, user, timeout, images string
	env                                      []string
	jsonOut                                  bool
}

func newCodeCmd(e *env) *cobra.Command {
	var f codeFlags
	cmd := &cobra.Command{
		Use:   "code [flags] ID [CODE]",
		Short: "Run a cell of Python, JavaScript, TypeScript or bash in a stateful context",
		Long: `Run one cell of code in a sandbox's interpreter. Variables, imports and
the working directory carry over to the next cell of the same context (the
language's default context unless --context names one). The code is the
argument, or standard input when there is none (or it is "-").

Output streams as it is produced. Results print as text (their text/plain, or
markdown, html or JSON when that is all they have); images and PDFs are
saved under --images DIR (result-N.png ...) or summarised on stderr. An error
prints its traceback on stderr. Exit codes: 0 ok, 1 the code raised (a bash
cell: its exit status), 124 timed out (the context keeps its state), 130
cancelled, 137 the kernel died (the next cell starts a new one).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req wire.CodeExecuteRequest
			if len(args) == 2 && args[1] != "-" {
				req.Code = args[1]
			} else {
				b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20+1))
				if err != nil {
					return fmt.Errorf("read the cell from stdin: %w", err)
				}
				if len(b) > 1<<20 {
					return fmt.Errorf("a cell is at most 1 MiB of code")
				}
				req.Code = string(b)
			}
			req.Language, req.Context, req.User = f.language, f.context, f.user
			var err error
			if req.Env, err = parseKV("--env", f.env); err != nil {
				return err
			}
			if f.timeout != "" {
				d, err := parseDuration(f.timeout)
				if err != nil {
					return fmt.Errorf("--timeout: %w", err)
				}
				req.TimeoutMS = d.Milliseconds()
			}
			c := e.client()
			if f.jsonOut {
				ex, err := c.RunCode(cmd.Context(), args[0], req)
				if err != nil {
					return err
				}
				if err := printJSON(e.stdout, ex); err != nil {
					return err
				}
				return codeExit(ex.End)
			}
			p := &cellPrinter{e: e, images: f.images}
			var end *wire.CodeEnd
			err = c.ExecuteCode(cmd.Context(), args[0], req, func(ev wire.CodeEvent) error {
				if ev.Type == "end" {
					end = ev.End
				}
				return p.event(ev)
			})
			if err != nil {
				return err
			}
			return codeExit(end)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.language, "language", "l", "", "python (default), javascript, typescript or bash: runs in that language's default context")
	fs.StringVarP(&f.context, "context", "c", "", "run in this context (from `paddock code new`)")
	fs.StringVar(&f.user, "user", "", "run as root (default) or user")
	fs.StringArrayVar(&f.env, "env", nil, "environment variable KEY=VALUE for this cell only (repeatable)")
	fs.StringVar(&f.timeout, "timeout", "", "interrupt the cell after this long (default 10m); the context keeps its state")
	fs.StringVar(&f.images, "images", "", "save images and PDFs the cell displays into this directory")
	fs.BoolVar(&f.jsonOut, "json", false, "print the whole execution as JSON at the end instead of streaming")
	cmd.AddCommand(newCodeContextsCmd(e), newCodeNewCmd(e), newCodeRestartCmd(e), newCodeRmCmd(e))
	return cmd
}

func codeExit(end *wire.CodeEnd) error {
	if end == nil {
		return fmt.Errorf("the execution ended without its end")
	}
	switch end.Status {
	case "ok":
		return nil
	case "error":
		if end.ExitCode != nil && *end.ExitCode > 0 && *end.ExitCode < 256 {
			return exitError{*end.ExitCode}
		}
		return exitError{codeExitError}
	case "timeout":
		return exitError{codeExitTimeout}
	case "cancelled":
		return exitError{codeExitCancelled}
	}
	return exitError{codeExitDied}
}

// cellPrinter prints a stream's events as they come.
type cellPrinter struct {
	e      *env
	images string
	n      int // images saved or summarised
}

func (p *cellPrinter) event(ev wire.CodeEvent) error {
	switch ev.Type {
	case "start":
		if ev.Start != nil && ev.Start.Restarted {
			fmt.Fprintf(p.e.stderr, "paddock: the context's kernel was restarted; earlier state is lost (%s)\n", ev.Start.Reason)
		}
	case "stdout":
		_, err := io.WriteString(p.e.stdout, ev.Text)
		return err
	case "stderr":
		_, err := io.WriteString(p.e.stderr, ev.Text)
		return err
	case "result":
		return p.result(ev.Result)
	case "error":
		if ev.Error != nil {
			tb := ev.Error.Traceback
			if tb == "" {
				tb = ev.Error.Name + ": " + ev.Error.Value
			}
			fmt.Fprintln(p.e.stderr, strings.TrimRight(tb, "\n"))
		}
	case "end":
		if ev.End != nil {
			if ev.End.Truncated {
				fmt.Fprintln(p.e.stderr, "paddock: output over the cap was dropped")
			}
			if ev.End.Status != "ok" && ev.End.Status != "error" && ev.End.Message != "" {
				fmt.Fprintln(p.e.stderr, "paddock: "+ev.End.Message)
			}
		}
	}
	return nil
}

func (p *cellPrinter) result(r *wire.CodeResult) error {
	if r == nil {
		return nil
	}
	for _, it := range codeImageTypes {
		mime, ext := it.mime, it.ext
		raw, ok := r.Bundle[mime]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		p.n++
		if p.images == "" {
			fmt.Fprintf(p.e.stderr, "[%s, %d bytes encoded: --images DIR saves it]\n", mime, len(s))
			continue
		}
		data := []byte(s)
		if mime != "image/svg+xml" {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return fmt.Errorf("the %s result is not base64: %w", mime, err)
			}
			data = b
		}
		if err := os.MkdirAll(p.images, 0o755); err != nil {
			return err
		}
		path := filepath.Join(p.images, fmt.Sprintf("result-%d.%s", p.n, ext))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(p.e.stderr, "[%s saved to %s]\n", mime, path)
	}
	for _, o := range r.Omitted {
		fmt.Fprintf(p.e.stderr, "[%s left out: %s]\n", o.MIME, o.Reason)
	}
	if text, ok := r.Text(); ok {
		_, err := fmt.Fprintln(p.e.stdout, strings.TrimRight(text, "\n"))
		return err
	}
	return nil
}

func newCodeContextsCmd(e *env) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "contexts ID",
		Short: "List a sandbox's code contexts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := e.client().CodeContexts(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if jsonOut {
				return printJSON(e.stdout, list)
			}
			rows := make([][]string, 0, len(list))
			for _, c := range list {
				def := ""
				if c.Default {
					def = "default"
				}
				rows = append(rows, []string{c.ID, c.Language, c.State, fmt.Sprint(c.ExecutionCount), c.User, c.Cwd, def})
			}
			table(e.stdout, []string{"ID", "LANGUAGE", "STATE", "CELLS", "USER", "CWD", ""}, rows)
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	return cmd
}

func newCodeNewCmd(e *env) *cobra.Command {
	var req wire.CodeContextRequest
	var envs []string
	cmd := &cobra.Command{
		Use:   "new ID",
		Short: "Start a new code context and print its id",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if req.Env, err = parseKV("--env", envs); err != nil {
				return err
			}
			c, err := e.client().CreateCodeContext(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, c.ID)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&req.Language, "language", "l", "", "python (default), javascript, typescript or bash")
	fs.StringVar(&req.Cwd, "cwd", "", "working directory (default the user's home)")
	fs.StringVar(&req.User, "user", "", "run as root (default) or user")
	fs.StringArrayVar(&envs, "env", nil, "environment variable KEY=VALUE (repeatable)")
	return cmd
}

func newCodeRestartCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "restart ID CONTEXT",
		Short: "Restart a code context's kernel (its state is lost)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := e.client().RestartCodeContext(cmd.Context(), args[0], args[1])
			return err
		},
	}
}

func newCodeRmCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID CONTEXT",
		Short: "Delete a code context",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.client().DeleteCodeContext(cmd.Context(), args[0], args[1])
		},
	}
}
