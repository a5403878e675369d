//go:build linux

package native

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/guestbin"
)

// sealedGuest copies the guest binary — the embedded one, else this very
// binary (embedded reports which) — into a sealed memfd. Sandboxes exec
// the guest from it, so /proc/1/exe inside a sandbox is a file that cannot
// be written, shrunk or grown by anyone, and no host binary on disk is
// reachable from inside (CVE-2019-5736).
func sealedGuest() (f *os.File, embedded bool, err error) {
	var src io.Reader
	if b := guestbin.Guest(); b != nil {
		src, embedded = bytes.NewReader(b), true
	} else {
		self, err := os.Open("/proc/self/exe")
		if err != nil {
			return nil, false, err
		}
		defer self.Close()
		src = self
	}
	fd, err := unix.MemfdCreate("paddock-guest", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, false, fmt.Errorf("memfd_create: %w", err)
	}
	f = os.NewFile(uintptr(fd), "paddock-guest")
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("copy guest: %w", err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("seal: %w", err)
	}
	return f, embedded, nil
}
