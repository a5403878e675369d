//go:build linux

package process

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/harden"
)

// Table spawns processes and reaps every child of PID 1.
//
// As PID 1 the guest inherits every orphan in the sandbox, so a single
// reaper calls wait4(-1) and hands exit statuses to whoever spawned the pid.
// Spawning holds mu, and so does reaping, so a child can never be reaped
// before its waiter is registered.
//
// Every fork happens on one OS thread, the spawner, whose bounding set is
// empty (harden.PrepareExecThread): that is what makes an exec'd workload
// end up with no capabilities, and doing it for one thread costs
// microseconds where doing it for every thread costs a stop-the-world per
// capability.
type Table struct {
	opt     TableOptions
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus
	cg      *cgroup.Delegated // nil when the host gave no exec group
	seq     atomic.Int64
	jobs    chan spawnJob

	// Exec sub-groups are reused: reading an empty group's process list
	// costs a few microseconds, making and removing one a hundred.
	subsMu    sync.Mutex
	freeSubs  []*cgroup.Sub // empty, never killed
	lingering []*cgroup.Sub // their exec's daemons still run
	recycled  int
}

const (
	maxFreeSubs  = 16
	sweepEvery   = 64 // recycles between attempts to remove lingering groups
	maxLingering = 4096
)

// newSub returns an empty sub-group: a recycled one or a new one.
func (t *Table) newSub() (*cgroup.Sub, error) {
	t.subsMu.Lock()
	if n := len(t.freeSubs); n > 0 {
		s := t.freeSubs[n-1]
		t.freeSubs = t.freeSubs[:n-1]
		t.subsMu.Unlock()
		return s, nil
	}
	t.subsMu.Unlock()
	return t.cg.NewSub("e" + strconv.FormatInt(t.seq.Add(1), 10))
}

// recycle is Cleanup for a process nothing will refer to again (an exec):
// its sub-group goes back to the free list if empty, is removed if it was
// killed (pids.max is 0 there), or waits among the lingering ones for its
// daemons to end. Background processes, which keep their proc to report
// and signal it later, use Cleanup: their group must never be reused.
func (t *Table) recycle(p *Proc) {
	p.closePidFD()
	s := p.sub
	p.sub = nil
	if s == nil {
		return
	}
	t.subsMu.Lock()
	defer t.subsMu.Unlock()
	t.recycled++
	if t.recycled%sweepEvery == 0 {
		kept := t.lingering[:0]
		for _, l := range t.lingering {
			if removed, err := l.Remove(); err != nil || !removed {
				kept = append(kept, l)
			}
		}
		t.lingering = kept
	}
	if p.killed {
		if removed, err := s.Remove(); err != nil || !removed {
			t.linger(s)
		}
		return
	}
	if pids, err := s.Procs(); err == nil && len(pids) == 0 && len(t.freeSubs) < maxFreeSubs {
		t.freeSubs = append(t.freeSubs, s)
		return
	}
	if removed, err := s.Remove(); err != nil || !removed {
		t.linger(s)
	}
}

// linger keeps s for a later sweep; called with subsMu held.
func (t *Table) linger(s *cgroup.Sub) {
	if len(t.lingering) < maxLingering {
		t.lingering = append(t.lingering, s)
	}
}

type spawnJob struct {
	fn   func() error
	done chan error
}

// TableOptions are what differs inside gVisor (the agent's gvisor mode).
type TableOptions struct {
	// PrepareThread readies the spawner thread; nil is
	// harden.PrepareExecThread.
	PrepareThread func() error
	// Flat puts every process in the delegated group itself rather than
	// in a sub-group of its own. gVisor's pids controller is not
	// hierarchical — a limit applies to its own group's tasks only — so
	// there the sandbox-wide process limit holds only if all workloads
	// share one group (a fork bomb is then stopped). Killing a process
	// tree then kills its session.
	Flat bool
	// ChdirInSpawner makes the spawner thread change into a workload's
	// (verified) working directory itself, so that the child inherits it,
	// instead of the child changing into /proc/self/fd/N. gVisor makes
	// /proc/self/fd of a non-dumpable process (the agent, and so its
	// children until they exec) root's: a child that dropped to the user
	// cannot pass through it. PrepareThread must unshare CLONE_FS.
	ChdirInSpawner bool
	// BeforeSpawn, if set, runs on the spawner thread just before each
	// fork (gVisor: the process limit of the workload's uid).
	BeforeSpawn func(s *Spec) error
}

// NewTable starts the spawner and the reaper; cg, if not nil, is the
// group the host delegated for processes.
func NewTable(cg *cgroup.Delegated) (*Table, error) { return NewTableWith(cg, TableOptions{}) }

// NewTableWith is NewTable with options.
func NewTableWith(cg *cgroup.Delegated, opt TableOptions) (*Table, error) {
	if opt.PrepareThread == nil {
		opt.PrepareThread = harden.PrepareExecThread
	}
	t := &Table{opt: opt, waiters: make(map[int]chan syscall.WaitStatus), cg: cg, jobs: make(chan spawnJob)}
	if err := t.startSpawner(); err != nil {
		return nil, err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	go func() {
		for range sig {
			t.reap()
		}
	}()
	return t, nil
}

// startSpawner starts the goroutine that owns the spawner thread.
func (t *Table) startSpawner() error {
	ready := make(chan error, 1)
	go func() {
		// Never unlocked: if the thread is spoiled (stranded in a cgroup),
		// the goroutine ends and the runtime discards the thread.
		goruntime.LockOSThread()
		if err := t.opt.PrepareThread(); err != nil {
			ready <- err
			return
		}
		if t.cg != nil {
			if err := t.cg.JoinThread(); err != nil {
				ready <- err
				return
			}
		}
		ready <- nil
		for j := range t.jobs {
			err := j.fn()
			j.done <- err
			if errors.Is(err, cgroup.ErrThreadStranded) {
				if err := t.startSpawner(); err != nil {
					fmt.Fprintf(os.Stderr, "paddock-guest: cannot replace the spawner thread: %v\n", err)
					os.Exit(1)
				}
				return
			}
		}
	}()
	return <-ready
}

// onSpawner runs fn on the spawner thread.
func (t *Table) onSpawner(fn func() error) error {
	j := spawnJob{fn: fn, done: make(chan error, 1)}
	t.jobs <- j
	return <-j.done
}

func (t *Table) reap() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
		if ch, ok := t.waiters[pid]; ok {
			delete(t.waiters, pid)
			ch <- ws // buffered
		}
	}
}

// Spec is what spawn needs.
type Spec struct {
	Path  string
	Argv  []string
	Env   []string
	Dir   string
	Files []*os.File // stdin, stdout, stderr (and any extra)
	UID   uint32
	GID   uint32
	// Setctty makes Files[Ctty] the controlling terminal (PTY sessions).
	Setctty bool
	Ctty    int
	// PidFD opens a pidfd of the child before the reaper can see it, so
	// that later signals reach this process and never a recycled pid.
	PidFD bool
}

// Proc is one spawned process and its sub-group.
type Proc struct {
	Pid    int
	sub    *cgroup.Sub
	exit   chan syscall.WaitStatus
	pidfd  int  // -1 unless Spec.PidFD
	killed bool // KillTree ran (the sub-group's pids.max is then 0)
}

// spawn starts s in a new session and, when the host delegated a group,
// in a fresh sub-group, so that its whole tree can be found and killed later.
func (t *Table) Spawn(s Spec) (*Proc, error) {
	var sub *cgroup.Sub
	if t.cg != nil && !t.opt.Flat {
		var err error
		if sub, err = t.newSub(); err != nil {
			return nil, fmt.Errorf("exec group: %w", err)
		}
	}
	sys := &syscall.SysProcAttr{
		Setsid:     true,
		Setctty:    s.Setctty,
		Ctty:       s.Ctty,
		Credential: &syscall.Credential{Uid: s.UID, Gid: s.GID, Groups: []uint32{s.GID}},
	}
	attr := &os.ProcAttr{Env: s.Env, Files: s.Files, Sys: sys}
	spawnDir := -1
	if s.Dir != "" {
		// The child changes into a descriptor verified here, not a path it
		// resolves itself (see openWorkDir: CVE-2024-21626).
		dfd, err := openWorkDir(s.Dir)
		if err != nil {
			if sub != nil {
				t.recycle(&Proc{sub: sub, pidfd: -1})
			}
			return nil, fmt.Errorf("working directory: %w", err)
		}
		defer unix.Close(dfd)
		attr.Dir = "/proc/self/fd/" + strconv.Itoa(dfd)
		if t.opt.ChdirInSpawner {
			attr.Dir, spawnDir = "", dfd
		}
	}
	p := &Proc{sub: sub, exit: make(chan syscall.WaitStatus, 1), pidfd: -1}

	start := func(cgfd int) error {
		if cgfd >= 0 {
			sys.UseCgroupFD = true
			sys.CgroupFD = cgfd
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		// Leaked descriptors (CVE-2024-21626 class): a descriptor anything
		// in the agent opened without close-on-exec would reach this
		// workload (and every later one); the child gets exactly 0, 1, 2
		// and s.Files, which the spawner dup2s into place.
		if err := harden.CloseOnExecAll(); err != nil {
			return fmt.Errorf("close-on-exec sweep: %w", err)
		}
		if t.opt.BeforeSpawn != nil {
			if err := t.opt.BeforeSpawn(&s); err != nil {
				return err
			}
		}
		if spawnDir >= 0 {
			// Only this thread's cwd: PrepareThread unshared CLONE_FS.
			if err := unix.Fchdir(spawnDir); err != nil {
				return fmt.Errorf("working directory: %w", err)
			}
			defer func() { _ = unix.Chdir("/") }()
		}
		op, err := os.StartProcess(s.Path, s.Argv, attr)
		if err != nil {
			return err
		}
		p.Pid = op.Pid
		t.waiters[op.Pid] = p.exit
		if s.PidFD {
			// Under t.mu the child cannot have been reaped, so the pid is
			// still this child's. Without a pidfd signals fall back to
			// the pid.
			if fd, err := unix.PidfdOpen(op.Pid, 0); err == nil {
				p.pidfd = fd
			}
		}
		// The reaper owns the exit status; drop Go's handle without waiting.
		_ = op.Release()
		return nil
	}
	err := t.onSpawner(func() error {
		if sub != nil {
			return sub.Spawn(start)
		}
		return start(-1)
	})
	if err != nil {
		if sub != nil {
			t.recycle(p)
		}
		return nil, err
	}
	return p, nil
}

// Exit delivers the process's exit status, once (from the reaper).
func (p *Proc) Exit() <-chan syscall.WaitStatus { return p.exit }

// Count is how many spawned processes are not reaped yet.
func (t *Table) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.waiters)
}

// KillTree kills the process and every descendant, wherever they moved.
func (p *Proc) KillTree() int {
	p.killed = true
	n := 0
	if p.sub != nil {
		n, _ = p.sub.Kill()
	}
	// Also the process group, in case there is no sub-group.
	if err := unix.Kill(-p.Pid, unix.SIGKILL); err != nil || p.sub != nil {
		return n
	}
	// Without a sub-group (gVisor) a fork bomb forks while the group is
	// being killed: a child made during one kill outlives it and goes on.
	// Kill again until the group is empty (its last members are reaped by
	// the reaper), within a bound.
	for i := 0; i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
		if unix.Kill(-p.Pid, unix.SIGKILL) != nil {
			break
		}
	}
	return n
}

// Signal sends sig to the main process only.
func (p *Proc) Signal(sig syscall.Signal) error {
	err := unix.Kill(p.Pid, sig)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// SignalExact sends sig to the main process through its pidfd when it has
// one: a pid alone may name another process once this one is reaped (pid
// reuse races, the reason pidfds exist). ESRCH (already reaped) is not an
// error.
func (p *Proc) SignalExact(sig syscall.Signal) error {
	if p.pidfd < 0 {
		return p.Signal(sig)
	}
	err := unix.PidfdSendSignal(p.pidfd, sig, nil, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// closePidFD releases the pidfd; the caller makes sure no SignalExact runs
// concurrently.
func (p *Proc) closePidFD() {
	if p.pidfd >= 0 {
		_ = unix.Close(p.pidfd)
		p.pidfd = -1
	}
}

// Cleanup removes the sub-group if nothing lives in it any more; lingering
// daemons keep it until the sandbox ends.
func (p *Proc) Cleanup() {
	p.closePidFD()
	if p.sub != nil {
		_, _ = p.sub.Remove()
	}
}

// signalName names the signal that ended ws, or "".
func ExitSignal(ws syscall.WaitStatus) string {
	if !ws.Signaled() {
		return ""
	}
	n := unix.SignalName(ws.Signal())
	if n == "" {
		n = "SIG" + strconv.Itoa(int(ws.Signal()))
	}
	return n
}

// exitCode follows the shell convention: 128+signal for a signal death.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
