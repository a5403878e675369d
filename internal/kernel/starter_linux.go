//go:build linux

package kernel

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/harden"
)

// ExecStarter starts processes with os/exec, each in a new process group.
// It must not be used where another part of the process reaps every child
// (the guest agent as PID 1 does): that reaper would steal the exit status.
type ExecStarter struct{}

// Start implements Starter.
func (ExecStarter) Start(s ProcSpec) (Process, error) {
	cmd := &exec.Cmd{
		Path:        s.Path,
		Args:        s.Args,
		Env:         s.Env,
		Dir:         s.Dir,
		ExtraFiles:  s.ExtraFiles,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	// An explicit nil *os.File would be an os.File-typed nil interface;
	// leave the field nil so that os/exec opens /dev/null.
	if s.Stdin != nil {
		cmd.Stdin = s.Stdin
	}
	if s.Stdout != nil {
		cmd.Stdout = s.Stdout
	}
	if s.Stderr != nil {
		cmd.Stderr = s.Stderr
	}
	// Leaked descriptors (CVE-2024-21626 class): a kernel gets 0-2 and
	// ExtraFiles, nothing else this process holds.
	if err := harden.CloseOnExecAll(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &execProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exit = exitOf(cmd.ProcessState, err)
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

type execProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	exit ExitStatus
}

func (p *execProc) Pid() int              { return p.cmd.Process.Pid }
func (p *execProc) Done() <-chan struct{} { return p.done }

func (p *execProc) Exit() ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

func (p *execProc) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	err := syscall.Kill(-p.cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (p *execProc) Kill() error { return p.Signal(syscall.SIGKILL) }

func exitOf(ps *os.ProcessState, err error) ExitStatus {
	if ps == nil {
		return ExitStatus{Code: -1, Signal: "unknown"}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitStatus{Code: -1, Signal: signalName(ws.Signal())}
	}
	return ExitStatus{Code: ps.ExitCode()}
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return "SIG" + strconv.Itoa(int(s))
}
