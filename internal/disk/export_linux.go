//go:build linux

package disk

import "golang.org/x/sys/unix"

// AttachLoop binds image to a free loop device with autoclear (the device
// detaches itself once the filesystem on it is unmounted, or once fd is
// closed if nothing was mounted). The caller closes fd after mounting, or
// calls DetachLoop if mounting failed. It is the loop setup of the XFS
// store, for other image-backed stores (internal/volume).
func AttachLoop(image string) (dev string, fd int, err error) { return attachLoop(image) }

// DetachLoop undoes AttachLoop when mounting failed.
func DetachLoop(fd int) { detachLoop(fd) }

// LoopBacks reports whether loop device dev is backed by the file st
// describes (its device and inode numbers).
func LoopBacks(dev string, st *unix.Stat_t) (bool, error) { return loopBacks(dev, st) }

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	MountPoint string
	Source     string
	FSType     string
	Root       string
}

// Mounts reads /proc/self/mountinfo.
func Mounts() ([]Mount, error) {
	ms, err := readMountinfo()
	if err != nil {
		return nil, err
	}
	out := make([]Mount, len(ms))
	for i, m := range ms {
		out[i] = Mount{MountPoint: m.MountPoint, Source: m.Source, FSType: m.FSType, Root: m.Root}
	}
	return out, nil
}
