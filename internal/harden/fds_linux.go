package harden

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseOnExecAll marks every descriptor from 3 up close-on-exec.
//
// Leaked descriptors (CVE-2024-21626 class, issue 14): a parent that
// leaves descriptors open — a shell's `exec 7>>file`, a CI runner, a
// supervisor — hands them to the server, Go's spawner passes every
// descriptor not marked close-on-exec to every child, and so they reached
// each guest and each workload of every tenant: a root-only host file to
// append to, a host socket to connect to, a host directory to fchdir
// into. The server calls this first thing at start and before it spawns
// a guest; the guest at start and before every workload it spawns, so a
// child gets exactly 0, 1 and 2 plus the files it is handed (Go's
// spawner dup2s those into place, which clears the flag on the copy).
func CloseOnExecAll() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil || !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	// Before Linux 5.11: each open descriptor by hand.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd) // the directory's own descriptor too: harmless
		}
	}
	return nil
}
