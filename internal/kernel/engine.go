package kernel

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// engine is one running interpreter process of a context.
type engine interface {
	// execute runs one cell, pushing its output to c.out, and returns when
	// the cell ended or the process died.
	execute(c *cell) cellEnd
	// interrupt asks the running cell to stop (SIGINT to the process
	// group): KeyboardInterrupt in Python, the context survives.
	interrupt() error
	// done is closed when the process has ended.
	done() <-chan struct{}
	// reason says why the process ended (valid after done).
	reason() string
	// kill ends the process and releases everything; it waits for done.
	kill()
}

// cell is one execution handed to an engine.
type cell struct {
	code  string
	lang  string
	env   map[string]string
	out   *cellOut
	nonce string
}

// cellEnd is what an engine says about a finished cell.
type cellEnd struct {
	status   string // codewire.StatusOK or StatusError; the context decides timeout/cancel/died
	count    int
	exitCode *int
	died     bool // the process ended during the cell
}

// proc wraps a started Process with its exit reason and a log of what it
// wrote to its own stdout/stderr outside any cell (for error messages).
type proc struct {
	p    Process
	tail *tailBuf
	once sync.Once
}

func (p *proc) reason() string {
	select {
	case <-p.p.Done():
	default:
		return ""
	}
	return exitReason(p.p.Exit())
}

func (p *proc) kill() {
	p.once.Do(func() { _ = p.p.Kill() })
	<-p.p.Done()
}

func exitReason(st ExitStatus) string {
	switch {
	case st.OOM:
		return "it ran out of memory (killed by the out-of-memory killer)"
	case st.Signal == "SIGKILL":
		return "it was killed by SIGKILL (the sandbox's memory limit, or a kill from inside the sandbox)"
	case st.Signal != "":
		return "it was killed by " + st.Signal
	default:
		return fmt.Sprintf("it exited with status %d", st.Code)
	}
}

// tailBuf keeps the last bytes a process wrote (bounded).
type tailBuf struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func newTail(max int) *tailBuf { return &tailBuf{max: max} }

func (t *tailBuf) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuf) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(strings.TrimSpace(string(t.buf)), "\uFFFD")
}

// lastLine is the last non-empty line of s, for a one-line error.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// pipes opens n pipes; on error the ones opened are closed.
func pipes(n int) (r, w []*os.File, err error) {
	for range n {
		pr, pw, err := os.Pipe()
		if err != nil {
			closeAll(r...)
			closeAll(w...)
			return nil, nil, err
		}
		r, w = append(r, pr), append(w, pw)
	}
	return r, w, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}

// readLines calls fn for every line of r; a line longer than max is
// dropped (fn gets nil and tooLong) instead of growing without bound.
func readLines(r io.Reader, max int, fn func(line []byte, tooLong bool)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var acc []byte
	over := false
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 && !over {
			if len(acc)+len(frag) > max {
				over, acc = true, acc[:0]
			} else {
				acc = append(acc, frag...)
			}
		}
		switch {
		case err == nil:
			if over {
				fn(nil, true)
			} else {
				fn(bytes.TrimRight(acc, "\r\n"), false)
			}
			acc, over = acc[:0], false
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return err
		}
	}
}

// envName is what a per-cell or per-context variable name must look like:
// names are spliced into generated code (bash, Python), so anything else is
// refused (code injection through a name, CWE-94).
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkEnv(env map[string]string) error {
	for k, v := range env {
		if !envName.MatchString(k) || len(k) > 256 {
			return fmt.Errorf("environment variable name %q is not a valid name ([A-Za-z_][A-Za-z0-9_]*)", trunc(k, 64))
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("environment variable %s contains a NUL byte", k)
		}
	}
	return nil
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// mergeEnv returns base with the overrides applied (sorted for stable
// tests), without duplicates.
func mergeEnv(base []string, over map[string]string) []string {
	m := make(map[string]string, len(base)+len(over))
	var order []string
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := m[k]; !ok {
			order = append(order, k)
		}
		m[k] = v
	}
	var extra []string
	for k, v := range over {
		if _, ok := m[k]; !ok {
			extra = append(extra, k)
		}
		m[k] = v
	}
	sort.Strings(extra)
	order = append(order, extra...)
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+m[k])
	}
	return out
}

func envLookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func interruptProc(p Process) error { return p.Signal(syscall.SIGINT) }

// pid is the engine process's pid (benchmarks read its memory).
func (p *proc) pid() int { return p.p.Pid() }
