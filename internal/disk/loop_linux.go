//go:build linux

package disk

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// loopAttempts bounds retries when another process grabs the free loop
// device between LOOP_CTL_GET_FREE and our configure call.
const loopAttempts = 16

// attachLoop binds the image file to a free loop device with autoclear, so
// the device detaches itself once the filesystem on it is unmounted (or, if
// mounting never happens, once the returned fd is closed). The caller
// closes the returned fd after mounting.
func attachLoop(image string) (dev string, fd int, err error) {
	// O_NOFOLLOW: a symlink in place of the image must not make us attach
	// (and then format or mount) whatever file it points to.
	img, err := unix.Open(image, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", -1, fmt.Errorf("open image %s: %w", image, err)
	}
	defer unix.Close(img)

	ctl, err := unix.Open("/dev/loop-control", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", -1, fmt.Errorf("open /dev/loop-control: %w", err)
	}
	defer unix.Close(ctl)

	var lastErr error
	for range loopAttempts {
		n, err := unix.IoctlRetInt(ctl, unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return "", -1, fmt.Errorf("LOOP_CTL_GET_FREE: %w", err)
		}
		dev = fmt.Sprintf("/dev/loop%d", n)
		fd, err := unix.Open(dev, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", -1, fmt.Errorf("open %s: %w", dev, err)
		}
		err = configureLoop(fd, img, image)
		if err == nil {
			return dev, fd, nil
		}
		unix.Close(fd)
		if !errors.Is(err, unix.EBUSY) {
			return "", -1, fmt.Errorf("%s: %w", dev, err)
		}
		lastErr = err // lost the race for this device; ask for another
	}
	return "", -1, fmt.Errorf("no free loop device after %d attempts: %w", loopAttempts, lastErr)
}

func configureLoop(fd, img int, name string) error {
	info := unix.LoopInfo64{Flags: unix.LO_FLAGS_AUTOCLEAR}
	copy(info.File_name[:len(info.File_name)-1], name)
	cfg := unix.LoopConfig{Fd: uint32(img), Info: info}
	err := unix.IoctlLoopConfigure(fd, &cfg)
	if err == nil || !(errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTTY)) {
		if err != nil {
			return fmt.Errorf("LOOP_CONFIGURE: %w", err)
		}
		return nil
	}
	return configureLoopLegacy(fd, img, &info)
}

// configureLoopLegacy is for kernels before 5.8, which lack LOOP_CONFIGURE:
// attach, then set the flags.
func configureLoopLegacy(fd, img int, info *unix.LoopInfo64) error {
	if err := unix.IoctlSetInt(fd, unix.LOOP_SET_FD, img); err != nil {
		return fmt.Errorf("LOOP_SET_FD: %w", err)
	}
	if err := unix.IoctlLoopSetStatus64(fd, info); err != nil {
		_ = unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0)
		return fmt.Errorf("LOOP_SET_STATUS64: %w", err)
	}
	return nil
}

// detachLoop undoes attachLoop when mounting failed.
func detachLoop(fd int) {
	_ = unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0)
	unix.Close(fd)
}

// loopBacks reports whether the loop device dev is backed by the file with
// the given device and inode numbers: how a mount found after a crash is
// proved to be ours before it is reused.
func loopBacks(dev string, st *unix.Stat_t) (bool, error) {
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", dev, err)
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	if err != nil {
		return false, fmt.Errorf("%s: LOOP_GET_STATUS64: %w", dev, err)
	}
	return info.Device == uint64(st.Dev) && info.Inode == st.Ino, nil
}
