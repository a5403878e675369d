package kernel

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/kernel/jupyter"
)

//go:embed python_startup.py
var pythonStartup string

// pythonLauncher starts ipykernel as `python3 -m ipykernel_launcher` does
// (the script's directory is not put first on sys.path), after hiding two
// optional modules the kernel imports at start and a headless code
// interpreter never uses: debugpy (the notebook debugger) and jedi
// (completion). That takes a third off the kernel's start.
const pythonLauncher = `import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
sys.modules["debugpy"] = None
sys.modules["jedi"] = None
from ipykernel import kernelapp
kernelapp.launch_new_instance()
`

type pythonEngine struct {
	*proc
	client *jupyter.Client
	sup    *Supervisor
}

// startPython starts an ipykernel for a context and connects to it.
func (s *Supervisor) startPython(ctx context.Context, cwd string, env []string) (engine, error) {
	var lastErr error
	// A port picked free may be taken before the kernel binds it; a
	// second try with new ports is the usual remedy.
	for attempt := range 3 {
		e, err := s.startPythonOnce(ctx, cwd, env, attempt)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if ctx.Err() != nil || !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	return nil, lastErr
}

func (s *Supervisor) startPythonOnce(ctx context.Context, cwd string, env []string, attempt int) (engine, error) {
	ci, err := jupyter.NewConnInfo()
	if err != nil {
		return nil, err
	}
	ci.KernelName = "python3"
	file := filepath.Join(s.stateDir, fmt.Sprintf("kernel-%s-%d.json", jupyter.NewID()[:8], attempt))
	if err := ci.WriteFile(file); err != nil {
		return nil, fmt.Errorf("connection file: %w", err)
	}
	defer os.Remove(file) // read by the kernel at start; the key need not stay on disk
	if err := s.own(file); err != nil {
		return nil, fmt.Errorf("connection file: %w", err)
	}

	tail := newTail(8 << 10)
	rs, ws, err := pipes(1)
	if err != nil {
		return nil, err
	}
	env = mergeEnv(env, map[string]string{
		"PYDEVD_DISABLE_FILE_VALIDATION": "1",
		"PADDOCK_OUTPUT_CAP":             strconv.Itoa(s.lim.MaxOutputBytes),
	})
	if envLookup(env, "MPLBACKEND") == "" {
		env = mergeEnv(env, map[string]string{"MPLBACKEND": "module://matplotlib_inline.backend_inline"})
	}
	p, err := s.starter.Start(ProcSpec{
		Path: s.cfg.Python,
		Args: []string{s.cfg.Python, "-c", pythonLauncher, "-f", file,
			"--InteractiveShell.colors=NoColor", "--HistoryManager.enabled=False"},
		Env:    env,
		Dir:    cwd,
		Stdout: ws[0],
		Stderr: ws[0],
	})
	closeAll(ws...)
	if err != nil {
		closeAll(rs...)
		return nil, fmt.Errorf("start %s: %w", s.cfg.Python, err)
	}
	go func() {
		// The kernel's own output (not a cell's: that goes over IOPub)
		// is kept for error messages.
		buf := make([]byte, 32<<10)
		for {
			n, err := rs[0].Read(buf)
			_, _ = tail.Write(buf[:n])
			if err != nil {
				_ = rs[0].Close()
				return
			}
		}
	}()
	pr := &proc{p: p, tail: tail}

	dctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	go func() {
		select {
		case <-p.Done(): // died while starting: stop dialling at once
			cancel()
		case <-dctx.Done():
		}
	}()
	c, err := jupyter.Dial(dctx, ci, jupyter.DialOptions{Timeout: s.cfg.StartTimeout})
	if err != nil {
		pr.kill()
		if r := pr.reason(); r != "" && ctx.Err() == nil {
			return nil, fmt.Errorf("the python kernel ended while starting (%s): %s", r, lastLine(tail.String()))
		}
		return nil, fmt.Errorf("the python kernel did not answer within %v: %w", s.cfg.StartTimeout, err)
	}
	e := &pythonEngine{proc: pr, client: c, sup: s}
	go func() {
		<-p.Done()
		c.Close() // wakes a cell waiting for its reply
	}()
	// The startup snippet runs in a namespace of its own.
	code := "exec(compile(" + strconv.Quote(pythonStartup) + ", '<paddock-startup>', 'exec'), {'__name__': '_paddock_startup'})"
	if err := e.silent(dctx, code); err != nil {
		e.kill()
		return nil, fmt.Errorf("python startup snippet: %w", err)
	}
	return e, nil
}

// silent runs code without history or output and fails on an error.
func (e *pythonEngine) silent(ctx context.Context, code string) error {
	var failure string
	reply, err := e.client.Call(ctx, "shell", "execute_request", map[string]any{
		"code": code, "silent": true, "store_history": false,
		"user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": false,
	}, func(m jupyter.Message) {
		if m.Header.MsgType == "error" {
			var c struct {
				Name  string `json:"ename"`
				Value string `json:"evalue"`
			}
			_ = json.Unmarshal(m.Content, &c)
			failure = c.Name + ": " + c.Value
		}
	})
	if err != nil {
		return err
	}
	var st struct {
		Status string `json:"status"`
		Name   string `json:"ename"`
		Value  string `json:"evalue"`
	}
	_ = json.Unmarshal(reply.Content, &st)
	if st.Status != "ok" {
		if failure == "" {
			failure = st.Name + ": " + st.Value
		}
		return errors.New(failure)
	}
	return nil
}

func (e *pythonEngine) done() <-chan struct{} { return e.p.Done() }
func (e *pythonEngine) interrupt() error      { return interruptProc(e.p) }

func (e *pythonEngine) kill() {
	e.proc.kill()
	e.client.Close()
}

type streamContent struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

type bundleContent struct {
	Data  map[string]json.RawMessage `json:"data"`
	Count int                        `json:"execution_count"`
}

type errorContent struct {
	Name      string   `json:"ename"`
	Value     string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

func (e *pythonEngine) execute(c *cell) cellEnd {
	bg := context.Background()
	if len(c.env) > 0 {
		b, _ := json.Marshal(c.env) // a JSON object of strings is a Python dict literal
		if err := e.silent(bg, "__import__('_paddock').setenv("+string(b)+")"); err != nil {
			return e.lost()
		}
	}
	count := 0
	dropped := jupyter.DroppedBytes()
	reply, err := e.client.Call(bg, "shell", "execute_request", map[string]any{
		"code": c.code, "silent": false, "store_history": true,
		// stop_on_error makes ipykernel abort the requests that arrive
		// shortly after a failed one (a notebook's "run all"); cells here
		// are queued by the context, one at a time, and never aborted.
		"user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": false,
	}, func(m jupyter.Message) {
		switch m.Header.MsgType {
		case "stream":
			var s streamContent
			if json.Unmarshal(m.Content, &s) == nil {
				name := codewire.EventStdout
				if s.Name == "stderr" {
					name = codewire.EventStderr
				}
				c.out.stream(name, s.Text)
			}
		case "execute_input":
			var b bundleContent
			if json.Unmarshal(m.Content, &b) == nil {
				count = b.Count
			}
		case "execute_result":
			var b bundleContent
			if json.Unmarshal(m.Content, &b) == nil && b.Data != nil {
				c.out.result(true, b.Data, b.Count)
			}
		case "display_data", "update_display_data":
			var b bundleContent
			if json.Unmarshal(m.Content, &b) == nil && b.Data != nil {
				c.out.result(false, b.Data, 0)
			}
		case "error":
			var x errorContent
			if json.Unmarshal(m.Content, &x) == nil {
				c.out.fail(codewire.ExecError{Name: x.Name, Value: x.Value, Traceback: strings.Join(x.Traceback, "\n")})
			}
		}
	})
	if jupyter.DroppedBytes() != dropped {
		c.out.markTruncated()
	}
	if err != nil {
		return e.lost()
	}
	var st struct {
		Status string `json:"status"`
		Count  int    `json:"execution_count"`
	}
	_ = json.Unmarshal(reply.Content, &st)
	if st.Count > 0 {
		count = st.Count
	}
	if len(c.env) > 0 {
		_ = e.silent(bg, "__import__('_paddock').restoreenv()")
	}
	end := cellEnd{status: codewire.StatusOK, count: count}
	switch st.Status {
	case "ok":
	case "aborted":
		end.status = codewire.StatusError
		c.out.fail(codewire.ExecError{Name: "ExecutionAborted", Value: "the kernel aborted the cell"})
	default:
		end.status = codewire.StatusError
	}
	return end
}

// lost is the end of a cell whose kernel went away under it.
func (e *pythonEngine) lost() cellEnd {
	select {
	case <-e.p.Done():
	case <-time.After(2 * time.Second):
		// The connection broke but the process lives: it is no use.
		e.kill()
	}
	return cellEnd{status: codewire.StatusError, died: true}
}
