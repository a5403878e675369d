package processes

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// screen accumulates what a terminal prints, for waiting on patterns.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	err  error
	seen int // bytes consumed by previous expects
	more chan struct{}
	done chan struct{}
}

func watch(r io.Reader) *screen {
	s := &screen{more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			if n > 0 {
				s.mu.Lock()
				s.buf.Write(b[:n])
				s.mu.Unlock()
				select {
				case s.more <- struct{}{}:
				default:
				}
			}
			if err != nil {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
				return
			}
		}
	}()
	return s
}

// expect waits for re to match output not consumed yet and consumes up to
// the end of the match. The deadline only bounds a hung test.
func (s *screen) expect(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		rest := s.buf.Bytes()[s.seen:]
		if loc := rx.FindSubmatchIndex(rest); loc != nil {
			m := rx.FindSubmatch(rest)
			s.seen += loc[1]
			s.mu.Unlock()
			out := make([]string, len(m))
			for i := range m {
				out[i] = string(m[i])
			}
			return out
		}
		tail := string(rest)
		s.mu.Unlock()
		select {
		case <-s.more:
		case <-s.done:
			s.mu.Lock()
			rest := s.buf.Bytes()[s.seen:]
			ok := rx.Match(rest)
			s.mu.Unlock()
			if !ok {
				t.Fatalf("terminal ended (%v) before %q; unconsumed output:\n%q", s.err, re, tail)
			}
		case <-deadline:
			t.Fatalf("no %q on the terminal; unconsumed output:\n%q", re, tail)
		}
	}
}

func TestPTYShell(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	term, err := e.Client.Terminal(ctx, sb.ID, client.TerminalOptions{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	if term.Pid() <= 1 {
		t.Fatalf("pid %d", term.Pid())
	}
	scr := watch(term)
	send := func(s string) {
		t.Helper()
		if _, err := term.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}

	// Markers built by the shell ($((...))) so the echo of the typed
	// command cannot match.
	send("stty size; echo M$((1+1))\r")
	if got := scr.expect(t, `(\d+) (\d+)\r\nM2`); got[1] != "24" || got[2] != "80" {
		t.Fatalf("stty size before resize: %q", got)
	}
	if err := term.Resize(40, 100); err != nil {
		t.Fatal(err)
	}
	send("stty size; echo M$((2+1))\r")
	if got := scr.expect(t, `(\d+) (\d+)\r\nM3`); got[1] != "40" || got[2] != "100" {
		t.Fatalf("stty size after resize: %q", got)
	}
	send("tty; echo M$((3+1))\r")
	scr.expect(t, `/dev/pts/\d+\r\nM4`)
	send("echo TERM=$TERM\r")
	scr.expect(t, `TERM=xterm-256color`)

	// A full-screen program: vi draws its screen, takes an insert, writes
	// the file and quits.
	vi := "vi"
	if r := e.Sh(sb.ID, "command -v vi >/dev/null && test -x \"$(command -v vi)\" || echo missing"); strings.Contains(r.Stdout, "missing") {
		vi = "vim.basic"
	}
	send(vi + " /tmp/vi-test.txt\r")
	scr.expect(t, `"/tmp/vi-test\.txt" \[New\]`) // vi's status line, not the echo
	send("ihello from vi\x1b")
	send(":wq\r")
	scr.expect(t, `written`)
	scr.expect(t, `/workspace# `) // back at the prompt: vi flushes type-ahead
	send("echo M$((4+1))\r")
	scr.expect(t, `M5`)
	if r := e.Exec(sb.ID, "cat", "/tmp/vi-test.txt"); r.Stdout != "hello from vi\n" {
		t.Fatalf("vi wrote %q", r.Stdout)
	}

	send("exit 5\r")
	ex, err := term.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if ex.ExitCode != 5 {
		t.Fatalf("exit %+v", ex)
	}
}

// A process started with a PTY through the process API is resizable and
// attachable; detaching leaves it running.
func TestPTYProcessAttach(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"bash", "--norc", "-i"}, PTY: &client.PTYSize{Rows: 10, Cols: 20}, Tag: "sh"})
	if err != nil {
		t.Fatal(err)
	}
	if info.PTY == nil || info.PTY.Rows != 10 {
		t.Fatalf("pty %+v", info.PTY)
	}
	if err := e.Client.ResizeProcess(ctx, sb.ID, client.Tag("sh"), client.PTYSize{Rows: 33, Cols: 77}); err != nil {
		t.Fatal(err)
	}
	term, err := e.Client.Terminal(ctx, sb.ID, client.TerminalOptions{Attach: client.Tag("sh")})
	if err != nil {
		t.Fatal(err)
	}
	scr := watch(term)
	term.Write([]byte("stty size; echo M$((6*7))\r"))
	if got := scr.expect(t, `(\d+) (\d+)\r\nM42`); got[1] != "33" || got[2] != "77" {
		t.Fatalf("stty size %q", got)
	}
	term.Close()
	// Still running after the detach; input through the REST API works.
	p, err := e.Client.Process(ctx, sb.ID, client.PID(info.Pid))
	if err != nil || p.State != "running" {
		t.Fatalf("after detach: %v %+v", err, p)
	}
	if _, err := e.Client.WriteStdin(ctx, sb.ID, client.PID(info.Pid), strings.NewReader("exit 9\r")); err != nil {
		t.Fatal(err)
	}
	w, err := e.Client.WaitProcess(ctx, sb.ID, client.PID(info.Pid), 30*time.Second)
	if err != nil || w.ExitCode == nil || *w.ExitCode != 9 {
		t.Fatalf("wait: %v %+v", err, w)
	}
	// Resizing a process without a terminal is refused.
	q, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Client.ResizeProcess(ctx, sb.ID, client.PID(q.Pid), client.PTYSize{Rows: 1, Cols: 1}); err == nil {
		t.Fatal("resize of a pipe process succeeded")
	}
}

// A session as "user" runs as uid 1000 and owns its terminal, as a login
// would arrange.
func TestPTYAsUser(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	term, err := e.Client.Terminal(context.Background(), sb.ID, client.TerminalOptions{User: "user", Cmd: []string{"sh", "-c", `echo "uid=$(id -u) owner=$(stat -c %u "$(tty)")"`}})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	scr := watch(term)
	scr.expect(t, `uid=1000 owner=1000`)
	if ex, err := term.Wait(); err != nil || ex.ExitCode != 0 {
		t.Fatalf("exit %+v %v", ex, err)
	}
}
