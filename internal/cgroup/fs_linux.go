//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// maxFileSize bounds every read of a control file. cgroup.procs is the
	// largest: a few bytes per pid, and pids are bounded by pid_max (4M).
	maxFileSize = 32 << 20
	// maxTreeDirs bounds the walk of a group's sub-groups. The guest can
	// create nested sub-groups; a runaway tree must not make the host walk
	// forever.
	maxTreeDirs = 10000
	// killRounds and the pauses between rounds bound every kill loop.
	killRounds = 200
	// rmdirRounds bounds retries of rmdir while exiting tasks detach.
	rmdirRounds = 100
)

// pause returns the sleep before retry round i: short at first (tasks
// usually die within a millisecond of SIGKILL), growing to 20 ms.
func pause(i int) time.Duration {
	d := time.Duration(i+1) * time.Millisecond
	return min(d, 20*time.Millisecond)
}

// readFile reads a control file of at most maxFileSize bytes.
func readFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllBounded(f, p)
}

func readAllBounded(r io.Reader, name string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("read %s: larger than %d bytes", name, maxFileSize)
	}
	return b, nil
}

// writeFile writes v to an existing control file in one write(2), which is
// how cgroupfs expects values.
func writeFile(p, v string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(v)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

func readValue(p string) (int64, error) {
	b, err := readFile(p)
	if err != nil {
		return 0, err
	}
	v, err := parseValue(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

func readKey(p, key string) (int64, error) {
	b, err := readFile(p)
	if err != nil {
		return 0, err
	}
	v, _, err := flatKeyed(b, key)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

// walk returns dir and all its sub-group directories, parents before
// children. A dir that does not exist yields nothing.
func walk(dir string) ([]string, error) {
	var out []string
	queue := []string{dir}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		ents, err := os.ReadDir(d)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed under us, or never created
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			if len(out)+len(queue) >= maxTreeDirs {
				return nil, fmt.Errorf("%s: more than %d sub-groups", dir, maxTreeDirs)
			}
			queue = append(queue, filepath.Join(d, e.Name()))
		}
	}
	return out, nil
}

// treeProcs lists the processes in dir and its sub-groups.
func treeProcs(dir string) ([]int, error) {
	dirs, err := walk(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, d := range dirs {
		b, err := readFile(filepath.Join(d, "cgroup.procs"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		p, err := parsePids(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		out = append(out, p...)
	}
	return out, nil
}

// removeTree removes dir and its sub-groups, deepest first. Missing
// directories are fine; EBUSY (tasks still detaching after SIGKILL) is
// retried for a bounded time.
func removeTree(dir string) error {
	dirs, err := walk(dir)
	if err != nil {
		return err
	}
	for _, d := range slices.Backward(dirs) {
		if err := rmdirRetry(d); err != nil {
			return err
		}
	}
	return nil
}

func rmdirRetry(d string) error {
	var err error
	for i := range rmdirRounds {
		err = unix.Rmdir(d)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(pause(i))
	}
	return fmt.Errorf("rmdir %s: %w", d, err)
}

// signalAll SIGKILLs every process that list reports and returns those it
// signalled. Never the caller itself: during a v1 Spawn the guest's own
// thread is briefly in a sub-group, and a kill loop must not kill the agent.
//
// PID reuse (a listed process exits and an unrelated process gets its pid
// before our kill) is closed with pidfds: a pidfd is opened for each listed
// pid, the group is listed again, and only pidfds whose pid is still listed
// are signalled. A pidfd opened on a reused pid points at the newcomer,
// which is then not in the second list; one opened on the right process
// keeps pointing at it even if the pid is reused later.
func signalAll(list func() ([]int, error)) ([]int, error) {
	pids, err := list()
	if err != nil || len(pids) == 0 {
		return nil, err
	}
	self := os.Getpid()
	fds := make(map[int]int, len(pids))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	noPidfd := false
	for _, pid := range pids {
		if pid <= 0 || pid == self {
			continue
		}
		if _, dup := fds[pid]; dup {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case err == nil:
			fds[pid] = fd
		case errors.Is(err, unix.ESRCH):
			// Already gone.
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// Pre-5.3 kernel or a seccomp filter: fall back to kill(2).
			noPidfd = true
		default:
			return nil, fmt.Errorf("pidfd_open %d: %w", pid, err)
		}
	}
	var done []int
	if noPidfd {
		for _, pid := range pids {
			// kill(2) with pid <= 0 signals process groups or every
			// process we may signal: never let such a value through.
			if pid <= 0 || pid == self || slices.Contains(done, pid) {
				continue
			}
			if unix.Kill(pid, unix.SIGKILL) == nil {
				done = append(done, pid)
			}
		}
		return done, nil
	}
	again, err := list()
	if err != nil {
		return nil, err
	}
	for pid, fd := range fds {
		if !slices.Contains(again, pid) {
			continue
		}
		err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		if err == nil {
			done = append(done, pid)
		} else if !errors.Is(err, unix.ESRCH) {
			return done, fmt.Errorf("pidfd_send_signal %d: %w", pid, err)
		}
	}
	return done, nil
}

// killLoop SIGKILLs every listed process until list reports none (besides
// the caller), within killRounds rounds, and returns how many distinct
// processes it signalled. around, if not nil, wraps each round's kill (the
// v1 freezer freezes before and thaws after it).
func killLoop(list func() ([]int, error), around func(kill func() error) error) (int, error) {
	self := os.Getpid()
	others := func() ([]int, error) {
		p, err := list()
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(p, func(pid int) bool { return pid == self }), nil
	}
	seen := make(map[int]bool)
	kill := func() error {
		done, err := signalAll(others)
		for _, pid := range done {
			seen[pid] = true
		}
		return err
	}
	if around == nil {
		around = func(k func() error) error { return k() }
	}
	for i := range killRounds {
		p, err := others()
		if err != nil {
			return len(seen), err
		}
		if len(p) == 0 {
			return len(seen), nil
		}
		if err := around(kill); err != nil {
			return len(seen), err
		}
		time.Sleep(pause(i))
	}
	p, err := others()
	if err == nil && len(p) > 0 {
		err = fmt.Errorf("%d processes still alive after %d kill rounds", len(p), killRounds)
	}
	return len(seen), err
}
