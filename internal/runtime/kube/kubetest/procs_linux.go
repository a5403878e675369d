//go:build linux

package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"
)

// daemon is one process the harness started (and so may kill by pid).
type daemon struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // valid after done
}

// spawner starts every daemon from one locked OS thread. Pdeathsig fires
// when the thread that forked a child exits, not the process; a thread
// that lives as long as the harness makes SIGKILL reach the daemons when
// the test binary dies without tearing down (and when Close ends it).
type spawner struct{ reqs chan spawnReq }

type spawnReq struct {
	cmd  *exec.Cmd
	resp chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq)}
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread dies with the goroutine
		for r := range s.reqs {
			r.resp <- r.cmd.Start()
		}
	}()
	return s
}

func (s *spawner) close() { close(s.reqs) }

// start runs argv with its output in logDir/name.log.
func (s *spawner) start(logDir, name string, env []string, argv ...string) (*daemon, error) {
	logPath := filepath.Join(logDir, name+".log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = append(os.Environ(), env...)
	// Own process group: a Ctrl-C to `go test` reaches the harness, which
	// then tears the daemons down in order, not the daemons directly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	resp := make(chan error, 1)
	s.reqs <- spawnReq{cmd: cmd, resp: resp}
	if err := <-resp; err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the exit.
func (d *daemon) stop(grace time.Duration) {
	if d == nil || d.exited() {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return
	case <-time.After(grace):
	}
	_ = d.cmd.Process.Kill()
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
	}
}

// tail returns the last n lines of the daemon's log, for error messages.
func (d *daemon) tail(n int) string {
	b, err := os.ReadFile(d.logPath)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// waitReady polls check until it succeeds, the daemon exits, or timeout
// passes; the error then carries the daemon's last log lines.
func (d *daemon) waitReady(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-d.done:
			return fmt.Errorf("%s exited (%v) before it was ready; its log ends:\n%s", d.name, d.err, indent(d.tail(25)))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v (last check: %v); its log ends:\n%s", d.name, timeout, last, indent(d.tail(25)))
		case <-tick.C:
		}
	}
}

func indent(s string) string {
	if s == "" {
		return "    (empty)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// errExited reports whether err says a daemon died.
var errExited = errors.New("daemon exited")
