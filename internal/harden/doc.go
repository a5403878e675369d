// Package harden applies the in-kernel restrictions that every sandbox
// workload runs under: no_new_privs, a seccomp deny-list, Landlock filesystem
// rules and capability limits.
//
// The guest agent (PID 1 of a sandbox) calls these on itself once its mounts
// are in place; every process it then spawns inherits them. All functions
// apply to every thread of the calling process (through psx:
// syscall.AllThreadsSyscall in a CGO_ENABLED=0 binary, libpsx in one built
// with cgo), because Go may run the next fork on any thread.
//
// The seccomp program is written here rather than with
// github.com/elastic/go-seccomp-bpf: under a default-allow policy that library
// lets syscalls of a foreign architecture (i386 via int 0x80) fall through to
// the default action, and its argument compares use all 64 bits, so an
// ioctl(TIOCSTI) with garbage in the upper half would pass. Both are classic
// deny-list bypasses.
//
// docs/security-layers.md lists every restriction and the attack it stops.
// Off Linux every function returns an error wrapping errs.ErrUnsupported.
package harden
