//go:build linux

package code

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/process"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/kernel"
)

// spawner is what the starter needs of the process service.
type spawner interface {
	Spawn(process.Spec) (*process.Proc, error)
	Env(id user.ID, cwd string, extra map[string]string, tty bool) ([]string, string)
	OOMKills() int64
}

// starter is the kernel.Starter of one user's supervisor: every kernel is
// spawned as a sandbox workload (see the package doc). It never uses
// os/exec: as PID 1 the agent's reaper waits for every child, and only a
// spawn registered with it gets its exit status.
type starter struct {
	svc spawner
	id  user.ID
	// base is the environment the supervisor was given (kernel.Config.Env),
	// a snapshot of the sandbox's at the time; see env.
	base map[string]string
}

// Start implements kernel.Starter.
func (s *starter) Start(ps kernel.ProcSpec) (kernel.Process, error) {
	if !filepath.IsAbs(ps.Path) || len(ps.Args) == 0 {
		return nil, errs.Invalid("a kernel needs an absolute path and its arguments")
	}
	dir := ps.Dir
	if dir == "" {
		dir = s.id.Home
	}
	if err := searchable(dir, s.id); err != nil {
		return nil, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "open /dev/null")
	}
	defer devnull.Close()
	or := func(f *os.File) *os.File {
		if f == nil {
			return devnull
		}
		return f
	}
	files := append([]*os.File{or(ps.Stdin), or(ps.Stdout), or(ps.Stderr)}, ps.ExtraFiles...)
	before := s.svc.OOMKills()
	p, err := s.svc.Spawn(process.Spec{Path: ps.Path, Argv: ps.Args, Env: s.env(ps.Env, dir), Dir: dir,
		Files: files, UID: s.id.UID, GID: s.id.GID, PidFD: true})
	if err != nil {
		return nil, process.StartErr(filepath.Base(ps.Path), err)
	}
	k := &kproc{p: p, oomBefore: before, oomKills: s.svc.OOMKills, done: make(chan struct{})}
	go k.wait()
	return k, nil
}

// env is the kernel's environment as an exec in dir would get it now, plus
// what the supervisor added to its base (the context's variables, the
// kernel's own). The sandbox-wide environment changes at runtime (a
// network given to a pooled sandbox sets proxy and CA variables): a kernel
// started after the change gets it, as an exec would, instead of the
// snapshot the supervisor was made with.
func (s *starter) env(spec []string, dir string) []string {
	fresh, _ := s.svc.Env(s.id, dir, nil, false)
	m := make(map[string]string, len(fresh)+8)
	for _, kv := range fresh {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for _, kv := range spec {
		k, v, _ := strings.Cut(kv, "=")
		if bv, ok := s.base[k]; ok && bv == v {
			continue // the snapshot's: the fresh value (or its removal) wins
		}
		m[k] = v
	}
	m["PWD"] = dir
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// kproc is a kernel process spawned by the starter.
type kproc struct {
	p         *process.Proc
	oomBefore int64
	oomKills  func() int64
	done      chan struct{}

	mu      sync.Mutex
	exit    kernel.ExitStatus
	killed  bool // Kill ran: a SIGKILL is ours, not the OOM killer's
	cleanup sync.Once
}

func (k *kproc) wait() {
	ws := <-k.p.Exit()
	st := kernel.ExitStatus{Code: ws.ExitStatus()}
	if ws.Signaled() {
		st.Code, st.Signal = -1, process.ExitSignal(ws)
	}
	k.mu.Lock()
	// The sandbox's OOM-kill counter is read when the exit is reaped (the
	// kernel counts the kill before the process dies). It is the sandbox's
	// (v1 has no per-process memory group here), so a SIGKILL we did not
	// send, with the counter grown during the kernel's life, is taken for
	// the OOM killer's.
	if st.Signal == "SIGKILL" && !k.killed && k.oomBefore >= 0 && k.oomKills() > k.oomBefore {
		st.OOM = true
	}
	k.exit = st
	k.mu.Unlock()
	close(k.done)
}

// Pid implements kernel.Process.
func (k *kproc) Pid() int { return k.p.Pid }

// Done implements kernel.Process.
func (k *kproc) Done() <-chan struct{} { return k.done }

// Exit implements kernel.Process.
func (k *kproc) Exit() kernel.ExitStatus {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.exit
}

// Signal sends sig to the kernel's process group (its session: the
// spawner starts every workload with setsid), so that an interrupt reaches
// the command a cell runs too, as Ctrl-C in a terminal does.
func (k *kproc) Signal(sig syscall.Signal) error {
	select {
	case <-k.done:
		return nil // reaped: its pid may be another process's by now
	default:
	}
	err := unix.Kill(-k.p.Pid, sig)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// Kill ends the kernel and everything it started, wherever in the tree
// (its cgroup sub-group), waits for its exit and removes the sub-group.
func (k *kproc) Kill() error {
	k.mu.Lock()
	k.killed = true
	k.mu.Unlock()
	k.p.KillTree()
	<-k.done
	k.cleanup.Do(k.p.Cleanup)
	return nil
}
