//go:build linux

package harden

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLoopbackUp: in a new network namespace lo starts down; LoopbackUp
// brings it up, and a second call (lo already up) succeeds without
// changing it.
func TestLoopbackUp(t *testing.T) {
	errc := make(chan error, 1)
	up := make(chan [2]bool, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread leaves with the namespace
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		isUp := func() bool {
			fd, _ := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
			defer unix.Close(fd)
			ifr, _ := unix.NewIfreq("lo")
			_ = unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr)
			return ifr.Uint16()&unix.IFF_UP != 0
		}
		before := isUp()
		if err := LoopbackUp(); err != nil {
			errc <- err
			return
		}
		if err := LoopbackUp(); err != nil {
			errc <- err
			return
		}
		up <- [2]bool{before, isUp()}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		if err == unix.EPERM {
			t.Skip("needs CAP_SYS_ADMIN for a network namespace")
		}
		t.Fatal(err)
	}
	if r := <-up; r[0] || !r[1] {
		t.Fatalf("lo up before %v, after %v: want false, true", r[0], r[1])
	}
}
