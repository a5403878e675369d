//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

// Delegated is the guest-side view of a delegated group: directory file
// descriptors opened before pivot_root, used after it. Every operation goes
// through openat/mkdirat/unlinkat on these fds with single-component names:
// after pivot_root no host path resolves, and the guest must never reach
// the host's cgroupfs by any path. Delegated does not own the fds.
type Delegated struct {
	version      Version
	pids, memory int
}

// NewDelegated wraps directory fds. version is that of the host. pidsDir is
// the group in which exec sub-groups are made (v1 pids, v2 unified);
// memoryDir is where OOM counters are read (v1 memory, v2 unified). Either
// may be -1 when unavailable; the methods then degrade as documented.
//
// The fds are marked close-on-exec: an inherited cgroupfs directory fd
// would let sandboxed code reach the host's cgroup tree (through
// /proc/self/fd or "..") — the runc "Leaky Vessels" escape, CVE-2024-21626.
func NewDelegated(version Version, pidsDir, memoryDir int) *Delegated {
	for _, fd := range []int{pidsDir, memoryDir} {
		if fd >= 0 {
			// Best effort: an fd this fails on is not open, and every
			// method on it then fails by itself.
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	return &Delegated{version: version, pids: pidsDir, memory: memoryDir}
}

// JoinThread moves the calling thread (locked by the caller) into the
// delegated workload group in every hierarchy (v1), so that everything it
// forks is born there and counts against the workloads' limits, not the
// agent's. On v2 threads stay put (children are placed with
// CLONE_INTO_CGROUP) and it does nothing.
func (d *Delegated) JoinThread() error {
	if d.version == V2 {
		return nil
	}
	tid := strconv.Itoa(unix.Gettid())
	for _, fd := range []int{d.memory, d.pids} {
		if fd < 0 {
			continue
		}
		if err := writeAt(fd, "tasks", tid); err != nil {
			return fmt.Errorf("cgroup: move spawner thread into the workload group: %w", err)
		}
	}
	return nil
}

// Sub is one exec's sub-group.
type Sub struct {
	d    *Delegated
	name string
}

// NewSub creates sub-group name ("e<N>"). It wraps errs.ErrUnsupported when
// the Delegated has no pids directory and errs.ErrConflict when the
// sub-group exists.
func (d *Delegated) NewSub(name string) (*Sub, error) {
	if d.pids < 0 {
		return nil, fmt.Errorf("cgroup: no delegated group for sub-groups: %w", errs.ErrUnsupported)
	}
	if !validName(name) {
		return nil, errs.Invalid("invalid sub-group name %q", name)
	}
	if err := unix.Mkdirat(d.pids, name, 0o755); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return nil, errs.Wrap(errs.CodeConflict, err, "sub-group %s exists", name)
		}
		return nil, fmt.Errorf("cgroup: create sub-group %s: %w", name, err)
	}
	return &Sub{d: d, name: name}, nil
}

// Spawn runs start (which must fork exactly one child, e.g. exec.Cmd.Start)
// so that the child is born inside s: on v1 the calling goroutine is locked
// to its thread, that thread alone is moved into s (writing its tid to
// "tasks"), start runs with cgroupFD -1, and the thread is moved back to the
// group's root; if moving back fails the thread is left locked so the
// runtime discards it when the goroutine exits, and the error is returned
// (if that thread is the process's main thread, the runtime parks it for
// good instead: it is never reused, but s then cannot be removed — see the
// package doc).
// On v2 start is called with an fd of the sub-group's directory, for
// SysProcAttr.UseCgroupFD/CgroupFD (CLONE_INTO_CGROUP); the fd is closed
// when start returns.
//
// Either way the child is in s from its first instruction: writing its pid
// after the fork would race with the child forking first and escaping.
func (s *Sub) Spawn(start func(cgroupFD int) error) error {
	dfd, err := s.open()
	if err != nil {
		return err
	}
	if s.d.version == V2 {
		defer unix.Close(dfd)
		return start(dfd)
	}
	defer unix.Close(dfd)

	runtime.LockOSThread()
	tid := strconv.Itoa(unix.Gettid())
	if err := writeAt(dfd, "tasks", tid); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("cgroup: move thread into %s: %w", s.name, err)
	}
	startErr := start(-1)
	if err := writeAt(s.d.pids, "tasks", tid); err != nil {
		// Left locked on purpose: a thread stuck in the sub-group would
		// put every later child of whatever goroutine ran on it into the
		// wrong group; a goroutine that exits while locked takes its
		// thread with it.
		return errors.Join(startErr, fmt.Errorf("cgroup: move thread back from %s: %w: %w", s.name, ErrThreadStranded, err))
	}
	runtime.UnlockOSThread()
	return startErr
}

// open returns an fd of the sub-group's directory.
func (s *Sub) open() (int, error) {
	fd, err := openAt(s.d.pids, s.name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return -1, fmt.Errorf("cgroup: open sub-group %s: %w", s.name, err)
	}
	return fd, nil
}

// Procs lists the pids in s (in the reader's pid namespace), sorted.
func (s *Sub) Procs() ([]int, error) {
	dfd, err := s.open()
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	return procsAt(dfd, s.name)
}

func procsAt(dfd int, name string) ([]int, error) {
	b, err := readAt(dfd, "cgroup.procs")
	if err != nil {
		return nil, fmt.Errorf("cgroup: procs of %s: %w", name, err)
	}
	p, err := parsePids(b)
	if err != nil {
		return nil, fmt.Errorf("cgroup: procs of %s: %w", name, err)
	}
	slices.Sort(p)
	return slices.Compact(p), nil
}

// Kill stops new forks in s (pids.max=0 on v1), SIGKILLs every process in it
// until it is empty (v2: cgroup.kill), and returns how many it killed.
// Kill must not run concurrently with Spawn on the same s.
func (s *Sub) Kill() (int, error) {
	dfd, err := s.open()
	if err != nil {
		return 0, err
	}
	defer unix.Close(dfd)
	list := func() ([]int, error) { return procsAt(dfd, s.name) }
	if s.d.version == V2 {
		n, done, err := killSubV2(dfd, list)
		if done || err != nil {
			return n, err
		}
		// No cgroup.kill (Linux < 5.14): fall back to the kill loop.
	} else if err := writeAt(dfd, "pids.max", "0"); err != nil {
		// A fork bomb outruns any kill loop unless forks are stopped.
		return 0, fmt.Errorf("cgroup: stop forks in %s: %w", s.name, err)
	}
	n, err := killLoop(list, nil)
	if err != nil {
		return n, fmt.Errorf("cgroup: kill %s: %w", s.name, err)
	}
	return n, nil
}

// killSubV2 kills s through cgroup.kill and waits for it to empty; it
// reports done=false when the kernel has no cgroup.kill. The count is of
// the distinct processes seen in s until it emptied.
func killSubV2(dfd int, list func() ([]int, error)) (n int, done bool, err error) {
	seen := make(map[int]bool)
	self := os.Getpid()
	for i := range killRounds {
		p, err := list()
		if err != nil {
			return len(seen), true, err
		}
		for _, pid := range p {
			if pid != self {
				seen[pid] = true
			}
		}
		if len(p) == 0 {
			return len(seen), true, nil
		}
		if err := writeAt(dfd, "cgroup.kill", "1"); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return 0, false, nil
			}
			return len(seen), true, fmt.Errorf("cgroup: cgroup.kill: %w", err)
		}
		time.Sleep(pause(i))
	}
	return len(seen), true, fmt.Errorf("cgroup: sub-group still populated after %d cgroup.kill rounds", killRounds)
}

// Remove deletes s if it is empty; it reports whether it did.
func (s *Sub) Remove() (bool, error) {
	err := unix.Unlinkat(s.d.pids, s.name, unix.AT_REMOVEDIR)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EBUSY), errors.Is(err, unix.ENOENT):
		return false, nil
	default:
		return false, fmt.Errorf("cgroup: remove sub-group %s: %w", s.name, err)
	}
}

// OOMKills reads the OOM-kill counter of the sandbox's memory group (-1 if
// unavailable). The guest compares it before and after an exec.
func (d *Delegated) OOMKills() int64 {
	if d.memory < 0 {
		return -1
	}
	file := "memory.oom_control"
	if d.version == V2 {
		file = "memory.events"
	}
	b, err := readAt(d.memory, file)
	if err != nil {
		return -1
	}
	v, ok, err := flatKeyed(b, "oom_kill")
	if err != nil || !ok {
		return -1
	}
	return v
}

// openAt opens name relative to dirfd. O_NOFOLLOW: cgroupfs has no
// symlinks, so one would mean we are not on cgroupfs.
func openAt(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
}

func readAt(dirfd int, name string) ([]byte, error) {
	fd, err := openAt(dirfd, name, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return readAllBounded(f, name)
}

func writeAt(dirfd int, name, v string) error {
	fd, err := openAt(dirfd, name, unix.O_WRONLY)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	_, werr := f.WriteString(v)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}
