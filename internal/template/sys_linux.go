//go:build linux

package template

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

func supported() error { return nil }

// noFollowFlags make an open refuse a final symlink and not block on a FIFO.
const noFollowFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// openNoFollow opens path for reading without following a final symlink
// (a symlink swapped in after Lstat must not redirect the copy to another
// file) and without blocking should it be a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|noFollowFlags, 0)
}

// exchange atomically swaps two directory entries (renameat2
// RENAME_EXCHANGE), so a template name never points at nothing.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if err != nil {
		return &os.LinkError{Op: "renameat2", Old: a, New: b, Err: err}
	}
	return nil
}

// exchangeUnsupported reports whether the filesystem lacks RENAME_EXCHANGE.
func exchangeUnsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}

// lockFile takes an exclusive flock on path (created if missing), waiting
// for it. Each call opens its own file description, so the lock excludes
// other goroutines of this process as well as other processes.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("flock %s: %w", path, err)
	}
	return f, nil
}

// tryLockDir takes an exclusive flock on directory path without waiting.
// locked is false when another holder has it.
func tryLockDir(path string) (f *os.File, locked bool, err error) {
	f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, false, err
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("flock %s: %w", path, err)
	}
	return f, true, nil
}

// builderProcAttr confines the mmdebstrap process tree. As root it becomes
// PID 1 of a new PID namespace, so killing it kills every descendant
// (maintainer scripts cannot outlive a cancelled build), and it gets a
// private mount namespace, so a mount it leaves behind (/proc, /dev in the
// chroot) can never be followed by our RemoveAll into the host's /dev.
// Pdeathsig covers our own crash.
func builderProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 {
		a.Cloneflags = syscall.CLONE_NEWPID
		a.Unshareflags = syscall.CLONE_NEWNS
	}
	return a
}

// killTree kills the builder's process group (and, through its PID
// namespace, everything below it).
func killTree(p *os.Process) error {
	if p == nil {
		return nil
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	return p.Kill()
}

// fileOwner returns the numeric owner of fi.
func fileOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

func readMountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMountInfo))
	if err != nil {
		return nil, err
	}
	return parseMountPoints(string(data)), nil
}

// removeTree removes path recursively, refusing when anything is mounted
// at or below it: RemoveAll would descend into the mount and delete the
// files of whatever is mounted there (a bind of the host's /dev left by a
// killed bootstrap would lose the host its device nodes).
func removeTree(path string) error {
	resolved, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	mps, err := readMountPoints()
	if err != nil {
		return fmt.Errorf("checking mounts before removing %s: %w", path, err)
	}
	if m := mountsUnder(mps, resolved); len(m) > 0 {
		return fmt.Errorf("refusing to remove %s: %d mount(s) at or below it (%s)", path, len(m), m[0])
	}
	return os.RemoveAll(path)
}
