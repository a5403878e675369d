//go:build linux

package openat2

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// emulate is set once, at the agent's start inside gVisor.
var emulate atomic.Bool

// Emulate makes Open resolve in user space from now on. The gVisor agent
// calls it before it serves: gVisor answers openat2 with ENOSYS, and
// falling back only on that answer would make a native sandbox's
// resolution depend on what its seccomp filter says.
func Emulate() { emulate.Store(true) }

// Emulated reports whether Open resolves in user space.
func Emulated() bool { return emulate.Load() }

// Open is openat2(2): the kernel's, or the user-space walk after Emulate.
// Both honour RESOLVE_NO_MAGICLINKS and RESOLVE_BENEATH, which keep a
// workload's symlinks from steering the agent to one of its own
// descriptors or out of a directory (CVE-2024-21626, path traversal);
// the walk refuses any other resolve flag with EINVAL.
func Open(dirfd int, p string, how *unix.OpenHow) (int, error) {
	if emulate.Load() {
		return emulated(dirfd, p, how)
	}
	return unix.Openat2(dirfd, p, how)
}
