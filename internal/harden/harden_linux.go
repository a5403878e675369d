//go:build linux

package harden

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// SetNoNewPrivs sets PR_SET_NO_NEW_PRIVS on every thread.
//
// With no_new_privs an execve can never raise privileges: setuid/setgid bits
// and file capabilities are ignored (the classic setuid-binary escalation,
// e.g. CVE-2021-4034 pkexec). It is also what lets an unprivileged domain
// install seccomp and Landlock.
func SetNoNewPrivs() error {
	if err := allThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	return nil
}

// allThreadsPrctl runs prctl on every thread of the process. The Go runtime
// may run the next fork on any thread, so a per-thread attribute set on one
// thread only would leak unrestricted children.
//
// Through psx: syscall.AllThreadsSyscall when built with CGO_ENABLED=0 (the
// guest binary), libpsx otherwise — a plain `go build` or `go install`
// links cgo wherever a C compiler is found, and AllThreadsSyscall refuses
// to run in a binary with cgo.
func allThreadsPrctl(option int, a2, a3, a4, a5 uintptr) error {
	_, _, e := psx.Syscall6(unix.SYS_PRCTL, uintptr(option), a2, a3, a4, a5, 0)
	return allThreadsErr(e)
}

// allThreadsErr converts the errno of an all-threads system call,
// explaining the one failure that is a build problem rather than a kernel
// refusal.
func allThreadsErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	if errors.Is(e, syscall.ENOTSUP) {
		return fmt.Errorf("per-thread syscall on all threads is not available in this binary: %w", e)
	}
	return e
}
