//go:build linux

package native

import (
	"fmt"
	"os/exec"
	goruntime "runtime"

	"golang.org/x/sys/unix"
)

// Securebits (linux/securebits.h); x/sys/unix does not name them.
const secbitKeepCaps = 1 << 4

// startAsOwner starts cmd (which clones a new user namespace) from a
// thread whose credentials are the sandbox's host uid and gid, so the
// kernel records that uid as the namespace's owner.
//
// Shared kernel counters (the ucounts class: /proc/sys/user/max_inotify_*,
// max_fanotify_*, max_*_namespaces, ...): a charge made inside a user
// namespace is also made on the namespace's owner in the parent. Owned by
// host root, every sandbox drew on root's 128 inotify instances, and one
// sandbox exhausting them gave EMFILE to root and to every other sandbox.
// Owned by its own uid, each sandbox draws on a budget of its own.
//
// Only this thread changes: the raw setres[ug]id calls are per thread
// (syscall.Setuid would change every thread of the server), the thread
// keeps its capabilities (SECBIT_KEEP_CAPS, then the effective set raised
// again), which Go's parent side needs to write the multi-range uid_map,
// and the thread is never unlocked, so the runtime discards it when the
// goroutine ends and no other goroutine ever runs with these credentials
// (the runtime also creates no threads from a locked one). KEEP_CAPS is
// cleared by execve, so nothing of it reaches the guest.
//
// With netns >= 0 the thread first joins that network namespace, and the
// child (cloned from this thread, without CLONE_NEWNET) starts in it.
func startAsOwner(cmd *exec.Cmd, uid, gid, netns int) error {
	done := make(chan error, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread is tainted
		if netns >= 0 {
			if err := unix.Setns(netns, unix.CLONE_NEWNET); err != nil {
				done <- fmt.Errorf("join the prepared network namespace: %w", err)
				return
			}
		}
		if err := becomeOwner(uid, gid); err != nil {
			done <- fmt.Errorf("owner credentials: %w", err)
			return
		}
		done <- cmd.Start()
	}()
	return <-done
}

// becomeOwner switches the calling thread to uid/gid keeping every
// capability it had.
func becomeOwner(uid, gid int) error {
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbitKeepCaps, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setresgid: %w", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setresuid: %w", e)
	}
	// Leaving uid 0 emptied the effective set (KEEP_CAPS kept the
	// permitted one): raise it again.
	for i := range caps {
		caps[i].Effective = caps[i].Permitted
	}
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
