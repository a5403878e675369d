//go:build linux

package harden

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"

	"github.com/paddockhq/paddock/internal/errs"
)

// Securebits (linux/securebits.h); x/sys/unix does not export them.
const (
	secbitNoroot                  = 1 << 0
	secbitNorootLocked            = 1 << 1
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCaps                = 1 << 4
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
)

// lockedSecurebits is the "pure capabilities" mode: uid 0 gets no implicit
// capabilities on execve (NOROOT), the ambient set cannot be refilled, and
// the setuid fixup (caps dropped on leaving uid 0) and keep-caps off are
// locked so no later prctl can undo any of it.
const lockedSecurebits = secbitNoroot | secbitNorootLocked |
	secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked |
	secbitNoSetuidFixupLocked | secbitKeepCapsLocked

// maxCap bounds the bounding-set loop: capability sets are 64-bit masks in
// the kernel, so no capability number can reach 64.
const maxCap = 64

// LimitCaps leaves exactly keep in the permitted and effective sets of every
// thread and clears the inheritable set, in one all-threads capset.
//
// What a later execve grants is fixed by PrepareExecThread on the thread
// that forks: LimitCaps alone does not empty the bounding set, because that
// is one prctl per capability and, on every thread, one stop-the-world per
// capability — milliseconds per sandbox start.
func LimitCaps(keep []Cap) error {
	var mask uint64
	for _, c := range keep {
		if c >= maxCap {
			return errs.Invalid("capability %d out of range", c)
		}
		mask |= 1 << c
	}

	// Inheritable is cleared too: with a file's inheritable bits it would
	// hand capabilities across execve despite the empty bounding set.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := [2]unix.CapUserData{
		{Effective: uint32(mask), Permitted: uint32(mask)},
		{Effective: uint32(mask >> 32), Permitted: uint32(mask >> 32)},
	}
	_, _, e := psx.Syscall3(unix.SYS_CAPSET,
		uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	if err := allThreadsErr(e); err != nil {
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("capset %#x: keep set is not within the permitted set: %w", mask, err)
		}
		return fmt.Errorf("capset %#x: %w", mask, err)
	}
	return nil
}

// PrepareExecThread makes the calling thread fit to fork workloads: it
// empties the thread's bounding set, sets SECBIT_NOROOT,
// SECBIT_NO_CAP_AMBIENT_RAISE, the setuid fixup and keep-caps off, all
// locked, and clears the ambient set, so that whatever it execs — as uid 0,
// setuid, or with file capabilities — gets CapEff 0. The caller must hold
// runtime.LockOSThread for as long as it forks from this thread, and must
// call it before LimitCaps drops CAP_SETPCAP.
func PrepareExecThread() error {
	// Empty the bounding set: without it, execve of a file-capability binary
	// (or of anything as uid 0) regains capabilities — the route of
	// container escapes such as CVE-2022-0492 (cgroup release_agent).
	for c := 0; c < maxCap; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("read bounding set bit %d: %w", c, err)
		}
		if in == 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("drop capability %d from bounding set: %w", c, err)
		}
	}
	cur, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("read securebits: %w", err)
	}
	want := (uintptr(cur) | lockedSecurebits) &^ secbitKeepCaps
	if want != uintptr(cur) {
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, want, 0, 0, 0); err != nil {
			return fmt.Errorf("set securebits %#x: %w", want, err)
		}
	}
	// Ambient capabilities survive execve of ordinary binaries; clear them.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return nil
}
