//go:build linux

package disk

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func loopImage(t *testing.T) (string, *unix.Stat_t) {
	t.Helper()
	requireRoot(t)
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop devices: %v", err)
	}
	img := filepath.Join(t.TempDir(), "img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var st unix.Stat_t
	if err := unix.Stat(img, &st); err != nil {
		t.Fatal(err)
	}
	return img, &st
}

// Both ways of configuring a loop device attach the image with autoclear,
// so closing the last fd of an unmounted device detaches it.
func TestAttachLoop(t *testing.T) {
	img, st := loopImage(t)
	for _, legacy := range []bool{false, true} {
		var dev string
		var fd int
		if legacy {
			imgFd, err := unix.Open(img, unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := unix.Open("/dev/loop-control", unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			n, err := unix.IoctlRetInt(ctl, unix.LOOP_CTL_GET_FREE)
			unix.Close(ctl)
			if err != nil {
				t.Fatal(err)
			}
			dev = "/dev/loop" + strconv.Itoa(n)
			fd, err = unix.Open(dev, unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			info := unix.LoopInfo64{Flags: unix.LO_FLAGS_AUTOCLEAR}
			err = configureLoopLegacy(fd, imgFd, &info)
			unix.Close(imgFd)
			if err != nil {
				unix.Close(fd)
				t.Fatal(err)
			}
		} else {
			var err error
			dev, fd, err = attachLoop(img)
			if err != nil {
				t.Fatal(err)
			}
		}
		info, err := unix.IoctlLoopGetStatus64(fd)
		if err != nil {
			t.Fatal(err)
		}
		if info.Flags&unix.LO_FLAGS_AUTOCLEAR == 0 {
			t.Errorf("legacy=%v: autoclear not set (flags %#x)", legacy, info.Flags)
		}
		if ok, err := loopBacks(dev, st); err != nil || !ok {
			t.Errorf("legacy=%v: loopBacks = %v, %v", legacy, ok, err)
		}
		unix.Close(fd)
		waitFor(t, "autoclear to detach "+dev, func() bool { return len(loopDevsFor(img)) == 0 })
	}
}
