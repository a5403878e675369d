package processes

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cli builds the paddock binary once per test run.
func cli(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "paddock-cli")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "paddock")
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		cmd := exec.Command(goBin, "build", "-o", cliPath, "github.com/paddockhq/paddock/cmd/paddock")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = err
			cliPath = string(out)
		}
	})
	if cliErr != nil {
		t.Fatalf("build the CLI: %v\n%s", cliErr, cliPath)
	}
	return cliPath
}

func cliEnv(e *testenv.Env) []string {
	return append(os.Environ(), "PADDOCK_URL="+e.Server.URL, "PADDOCK_API_KEY="+e.AdminKey)
}

// underPTY starts the CLI with a terminal of rows×cols as its stdin,
// stdout and stderr (its controlling terminal), as a user's shell would.
type ptyRun struct {
	cmd         *exec.Cmd
	master, tty *os.File
	scr         *screen
	waitErr     error
	waited      chan struct{}
}

func underPTY(t *testing.T, e *testenv.Env, rows, cols int, args ...string) *ptyRun {
	t.Helper()
	m, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(m, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli(t), args...)
	cmd.Env = cliEnv(e)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &ptyRun{cmd: cmd, master: m, tty: tty, scr: watch(m), waited: make(chan struct{})}
	go func() { r.waitErr = cmd.Wait(); close(r.waited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.waited
		m.Close()
		tty.Close()
	})
	return r
}

func (r *ptyRun) send(t *testing.T, s string) {
	t.Helper()
	if _, err := r.master.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// exit waits for the CLI to end and returns its exit code.
func (r *ptyRun) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-r.waited:
	case <-time.After(60 * time.Second):
		t.Fatal("the CLI did not exit")
	}
	return r.cmd.ProcessState.ExitCode()
}

func termios(t *testing.T, f *os.File) *unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio
}

// paddock shell under a real terminal: raw mode while it runs, keys reach
// the sandbox's shell, the window size follows, the terminal is restored
// and the shell's exit code comes back.
func TestCLIShell(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	r := underPTY(t, e, 30, 90, "shell", sb.ID)
	r.send(t, "echo $((6*7))\r")
	r.scr.expect(t, `42\r\n`) // the typed line has no 42: this is the answer
	// Raw mode locally while the session runs (the remote terminal echoes).
	if tio := termios(t, r.tty); tio.Lflag&(unix.ECHO|unix.ICANON) != 0 {
		t.Fatalf("local terminal not raw during the session: lflag %#x", tio.Lflag)
	}
	r.send(t, "stty size; echo M$((2+3))\r")
	if got := r.scr.expect(t, `(\d+) (\d+)\r\nM5`); got[1] != "30" || got[2] != "90" {
		t.Fatalf("initial size %q", got)
	}
	// Resize the local window: SIGWINCH reaches the CLI, which resizes
	// the remote terminal.
	if err := pty.Setsize(r.master, &pty.Winsize{Rows: 50, Cols: 132}); err != nil {
		t.Fatal(err)
	}
	// The resize travels asynchronously: ask until it has arrived.
	deadline := time.Now().Add(30 * time.Second)
	for i := 10; ; i++ {
		r.send(t, fmt.Sprintf("stty size; echo M$((%d+0))\r", i))
		got := r.scr.expect(t, fmt.Sprintf(`(\d+) (\d+)\r\nM%d`, i))
		if got[1] == "50" && got[2] == "132" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("remote size after SIGWINCH: %q", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.send(t, "exit 3\r")
	if code := r.exit(t); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
	if tio := termios(t, r.tty); tio.Lflag&(unix.ECHO|unix.ICANON) != unix.ECHO|unix.ICANON {
		t.Fatalf("local terminal not restored: lflag %#x", tio.Lflag)
	}
}

// runCLI runs the CLI without a terminal.
func runCLI(t *testing.T, e *testenv.Env, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli(t), args...)
	cmd.Env = cliEnv(e)
	cmd.Stdin = strings.NewReader(stdin)
	var o, eb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &eb
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run %q: %v", args, err)
	}
	return o.String(), eb.String(), cmd.ProcessState.ExitCode()
}

// exec -i streams stdin; exec -t runs on a terminal; -it under a real
// terminal is interactive; ps and proc drive background processes.
func TestCLIExecAndProcesses(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	if out, _, code := runCLI(t, e, "line one\nline two\n", "exec", "-i", sb.ID, "--", "sh", "-c", "cat; exit 4"); out != "line one\nline two\n" || code != 4 {
		t.Fatalf("exec -i: %q exit %d", out, code)
	}
	// Without -i stdin is not read.
	if out, _, code := runCLI(t, e, "ignored\n", "exec", sb.ID, "--", "cat"); out != "" || code != 0 {
		t.Fatalf("exec without -i: %q exit %d", out, code)
	}
	// -t without a local terminal: the command still gets one.
	if out, _, code := runCLI(t, e, "", "exec", "-t", sb.ID, "--", "sh", "-c", "tty; exit 2"); !strings.HasPrefix(out, "/dev/pts/") || code != 2 {
		t.Fatalf("exec -t: %q exit %d", out, code)
	}
	// -it under a real terminal.
	r := underPTY(t, e, 24, 80, "exec", "-it", sb.ID, "--", "sh", "-c", `read x; echo "got:$x"; exit 6`)
	r.send(t, "hello\r")
	r.scr.expect(t, `got:hello`)
	if code := r.exit(t); code != 6 {
		t.Fatalf("exec -it exit %d", code)
	}

	// Background processes through the CLI.
	pid, _, code := runCLI(t, e, "", "proc", "start", "--tag", "web", "--stdin", sb.ID, "--", "sh", "-c", "read x; echo hi $x; echo warn >&2; exit 5")
	pid = strings.TrimSpace(pid)
	if code != 0 || pid == "" {
		t.Fatalf("proc start: %q exit %d", pid, code)
	}
	if out, _, _ := runCLI(t, e, "", "ps", sb.ID); !strings.Contains(out, "web") || !strings.Contains(out, pid) {
		t.Fatalf("ps: %q", out)
	}
	if _, errOut, code := runCLI(t, e, "there\n", "proc", "stdin", "--close", sb.ID, "tag:web"); code != 0 {
		t.Fatalf("proc stdin: %q", errOut)
	}
	if _, _, code := runCLI(t, e, "", "proc", "wait", sb.ID, pid); code != 5 {
		t.Fatalf("proc wait exit %d", code)
	}
	out, errOut, code := runCLI(t, e, "", "proc", "logs", sb.ID, pid)
	if out != "hi there\n" || errOut != "warn\n" || code != 0 {
		t.Fatalf("proc logs: %q %q %d", out, errOut, code)
	}
	long, _, _ := runCLI(t, e, "", "proc", "start", sb.ID, "--", "sleep", "1000")
	if _, errOut, code := runCLI(t, e, "", "proc", "kill", sb.ID, strings.TrimSpace(long)); code != 0 {
		t.Fatalf("proc kill: %q", errOut)
	}
	if _, _, code := runCLI(t, e, "", "proc", "wait", "--timeout", "20s", sb.ID, strings.TrimSpace(long)); code != 137 {
		t.Fatalf("killed process exit %d", code)
	}
}
