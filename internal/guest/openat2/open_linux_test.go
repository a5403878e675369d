//go:build linux

package openat2

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Open switches to the walk after Emulate: RESOLVE_IN_ROOT, which the
// kernel accepts and the walk refuses, tells which one answered.
func TestOpenFollowsEmulate(t *testing.T) {
	if _, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH}); err != nil {
		t.Skipf("the kernel has no openat2: %v", err)
	}
	_, root := openat2Tree(t)
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT}
	fd, err := Open(root, "a", how)
	if err != nil {
		t.Fatalf("kernel openat2: %v", err)
	}
	unix.Close(fd)
	if Emulated() {
		t.Fatal("emulated before Emulate")
	}
	Emulate()
	t.Cleanup(func() { emulate.Store(false) })
	if !Emulated() {
		t.Fatal("not emulated after Emulate")
	}
	if fd, err := Open(root, "a", how); err != unix.EINVAL {
		if err == nil {
			unix.Close(fd)
		}
		t.Fatalf("after Emulate: %v, want the walk's EINVAL", err)
	}
}
