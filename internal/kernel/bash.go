package kernel

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/kernel/jupyter"
)

// bashDriver is the loop a bash context runs. Each cell arrives as a
// nonce on fd 3; its code is in $__PD_DIR/NONCE.cell (and the per-cell
// environment in .pre/.post). The cell is sourced at top level, so its
// variables, functions, cwd and declare'd names persist. A trap makes
// SIGINT end the sourced cell (return 130) instead of the shell. After the
// cell a marker with the exit status goes to the original stdout (and one
// to stderr): everything before it is the cell's output, in order.
const bashDriver = `shopt -s expand_aliases
exec {__pd_out}>&1 {__pd_err}>&2
trap : INT
while IFS= read -r -u 3 __pd_n; do
  trap 'return 130' INT
  [ -f "$__PD_DIR/$__pd_n.pre" ] && . "$__PD_DIR/$__pd_n.pre"
  . "$__PD_DIR/$__pd_n.cell"
  __pd_st=$?
  trap : INT
  [ -f "$__PD_DIR/$__pd_n.post" ] && . "$__PD_DIR/$__pd_n.post"
  printf '\036PDK:%s:%d\036' "$__pd_n" "$__pd_st" >&$__pd_out
  printf '\036PDK:%s:\036' "$__pd_n" >&$__pd_err
done
`

type bashEngine struct {
	*proc
	cmd *os.File
	dir string
	own func(string) error

	mu      sync.Mutex
	cur     *cell
	ended   map[string]*cell // per stream: the cell whose marker it has passed
	outDone chan int
	errDone chan struct{}
}

func (s *Supervisor) startBash(ctx context.Context, cwd string, env []string) (engine, error) {
	dir, err := os.MkdirTemp(s.stateDir, "bash-")
	if err != nil {
		return nil, err
	}
	if err := s.own(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	rs, ws, err := pipes(3)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	cmdR, cmdW := rs[0], ws[0]
	outR, outW := rs[1], ws[1]
	errR, errW := rs[2], ws[2]
	env = mergeEnv(env, map[string]string{"__PD_DIR": dir})
	p, err := s.starter.Start(ProcSpec{
		Path:       s.cfg.Bash,
		Args:       []string{s.cfg.Bash, "--noprofile", "--norc", "-c", bashDriver},
		Env:        env,
		Dir:        cwd,
		Stdout:     outW,
		Stderr:     errW,
		ExtraFiles: []*os.File{cmdR},
	})
	closeAll(cmdR, outW, errW)
	if err != nil {
		closeAll(cmdW, outR, errR)
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", s.cfg.Bash, err)
	}
	e := &bashEngine{proc: &proc{p: p, tail: newTail(8 << 10)}, cmd: cmdW, dir: dir, own: s.own,
		outDone: make(chan int, 1), errDone: make(chan struct{}, 1)}
	go e.pump(outR, codewire.EventStdout)
	go e.pump(errR, codewire.EventStderr)
	return e, nil
}

func (e *bashEngine) current() *cell {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

// pump splits one output stream at the markers of the running cell.
func (e *bashEngine) pump(r *os.File, name string) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	var pend []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			pend = e.feed(name, append(pend, buf[:n]...))
		}
		if err != nil {
			return
		}
	}
}

// feed delivers the bytes of b that belong to the running cell and returns
// those it keeps back (a marker that may be incomplete).
func (e *bashEngine) feed(name string, b []byte) []byte {
	for len(b) > 0 {
		c := e.current()
		e.mu.Lock()
		if e.ended[name] == c {
			c = nil // this stream is past the cell's marker
		}
		e.mu.Unlock()
		if c == nil {
			_, _ = e.tail.Write(b) // a background job's output between cells
			return nil
		}
		prefix := []byte("\x1ePDK:" + c.nonce + ":")
		i := bytes.Index(b, prefix)
		if i < 0 {
			keep := partialSuffix(b, prefix)
			c.out.raw(name, b[:len(b)-keep])
			return append([]byte(nil), b[len(b)-keep:]...)
		}
		j := bytes.IndexByte(b[i+len(prefix):], 0x1e)
		if j < 0 || j > 12 {
			if j < 0 {
				c.out.raw(name, b[:i])
				return append([]byte(nil), b[i:]...)
			}
			// not our marker after all (a cell printing the prefix)
			c.out.raw(name, b[:i+len(prefix)])
			b = b[i+len(prefix):]
			continue
		}
		c.out.raw(name, b[:i])
		payload := string(b[i+len(prefix) : i+len(prefix)+j])
		b = b[i+len(prefix)+j+1:]
		e.mu.Lock()
		if e.ended == nil {
			e.ended = map[string]*cell{}
		}
		e.ended[name] = c
		e.mu.Unlock()
		if name == codewire.EventStdout {
			st, err := strconv.Atoi(payload)
			if err != nil {
				st = 1
			}
			e.outDone <- st
		} else {
			e.errDone <- struct{}{}
		}
		// What follows the marker was written after the cell ended (the
		// next cell is sent only once this one is over): a background
		// job's output.
		_, _ = e.tail.Write(b)
		return nil
	}
	return nil
}

// partialSuffix is the length of the longest suffix of b that is a prefix
// of p.
func partialSuffix(b, p []byte) int {
	n := min(len(b), len(p)-1)
	for k := n; k > 0; k-- {
		if bytes.Equal(b[len(b)-k:], p[:k]) {
			return k
		}
	}
	return 0
}

func (e *bashEngine) execute(c *cell) cellEnd {
	c.nonce = strings.ReplaceAll(jupyter.NewID(), "-", "")[:20]
	base := filepath.Join(e.dir, c.nonce)
	files := map[string]string{base + ".cell": c.code + "\n"}
	if len(c.env) > 0 {
		pre, post := bashEnvCode(c.env)
		files[base+".pre"], files[base+".post"] = pre, post
	}
	defer func() {
		for f := range files {
			_ = os.Remove(f)
		}
	}()
	for f, body := range files {
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			c.out.fail(codewire.ExecError{Name: "InternalError", Value: "could not hand the cell to bash"})
			return cellEnd{status: codewire.StatusError}
		}
		if e.own != nil {
			if err := e.own(f); err != nil {
				c.out.fail(codewire.ExecError{Name: "InternalError", Value: "could not hand the cell to bash"})
				return cellEnd{status: codewire.StatusError}
			}
		}
	}
	e.mu.Lock()
	e.cur = c
	e.mu.Unlock()
	clear := func() {
		e.mu.Lock()
		e.cur = nil
		e.mu.Unlock()
	}
	defer clear()
	if _, err := e.cmd.Write([]byte(c.nonce + "\n")); err != nil {
		<-e.p.Done()
		return cellEnd{status: codewire.StatusError, died: true}
	}
	status, gotOut, gotErr := 0, false, false
	for !gotOut || !gotErr {
		select {
		case status = <-e.outDone:
			gotOut = true
		case <-e.errDone:
			gotErr = true
		case <-e.p.Done():
			c.out.flushRaw()
			return cellEnd{status: codewire.StatusError, died: true}
		}
	}
	c.out.flushRaw()
	end := cellEnd{status: codewire.StatusOK, exitCode: &status}
	if status != 0 {
		end.status = codewire.StatusError
	}
	return end
}

// bashEnvCode returns code that sets env for one cell and code that puts
// the previous values back. Names were checked by checkEnv; values are
// single-quoted.
func bashEnvCode(env map[string]string) (pre, post string) {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var a, b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&a, "__pd_had_%[1]s=${%[1]s+1}; __pd_old_%[1]s=${%[1]s-}; export %[1]s=%[2]s\n", k, shQuote(env[k]))
		fmt.Fprintf(&b, "if [ -n \"$__pd_had_%[1]s\" ]; then export %[1]s=\"$__pd_old_%[1]s\"; else unset %[1]s; fi; unset __pd_had_%[1]s __pd_old_%[1]s\n", k)
	}
	return a.String(), b.String()
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (e *bashEngine) done() <-chan struct{} { return e.p.Done() }
func (e *bashEngine) interrupt() error      { return interruptProc(e.p) }

func (e *bashEngine) kill() {
	e.proc.kill()
	_ = e.cmd.Close()
	_ = os.RemoveAll(e.dir)
}
