//go:build linux

package gvisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Volumes on gVisor (docs/gvisor.md, "Volumes"): each volume's data
// directory (a directory of its loop-mounted ext4 image, so the image's
// size is the quota: ENOSPC inside past it) is bound, nosuid and nodev and
// read-only if asked, at DATA/gvisor/sandboxes/ID/vols/N in runsc's private
// mount namespace, and that bind is a bind mount of the OCI spec: the
// gofer serves it, and the sentry resolves every path in it — a symlink
// stored in a volume is followed inside the sandbox's own tree, never on
// the host. gVisor's --overlay2 overlays either the root or every bind
// writable in the spec, so a sandbox with volumes overlays only its root
// and has its template's other trees bound inside the root on the host
// (rootfs.Nested) instead of as mounts of the spec: the volumes are then
// the only writable binds, and their writes reach the volume.

// MountsVolumes implements runtime.VolumeMounter.
func (b *Backend) MountsVolumes() bool { return true }

// errVolumeCheckpoint is why a sandbox with volumes is never checkpointed.
func errVolumeCheckpoint() error {
	return errs.New(errs.CodeUnsupported, "a gVisor sandbox with volumes cannot be checkpointed (hibernate, memory snapshot, fork with memory): "+
		"its memory holds the volume's open files and cached contents, which live on and change outside the image, so a restore could not be faithful; "+
		"create it without volumes, or keep its state in the volume and start a new sandbox on it")
}

// withVolumes adds cfg's volumes to inst and rfs.
func (b *Backend) withVolumes(inst *instance, rfs *rootfs, vols []runtime.VolumeMount) error {
	if len(vols) == 0 {
		return nil
	}
	dir := filepath.Join(b.sbDir(inst.id), "vols")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("sandbox directory: %w", err)
	}
	rfs.Nested = true
	for i, v := range vols {
		at := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(at, 0o700); err != nil {
			return fmt.Errorf("sandbox directory: %w", err)
		}
		rfs.Volumes = append(rfs.Volumes, volumeBind{Name: v.Name, Path: v.Path, Source: v.Source, At: at, ReadOnly: v.ReadOnly})
	}
	inst.rec.Volumes = len(vols)
	return nil
}

// bindVolume binds v's data directory at v.At: not recursive (nothing is
// mounted under it), nosuid, nodev, read-only if asked.
func bindVolume(v volumeBind) error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, v.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(fd)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if v.ReadOnly {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, v.At, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// bindNested binds template tree src read-only at rel inside the mounted
// root target, making the directories on the way (in the host overlay's
// upper, which only ever holds mount points) and following no symlink.
func bindNested(src, target, rel string) error {
	dfd, err := unix.Open(target, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	for _, c := range strings.Split(strings.Trim(filepath.Clean("/"+rel), "/"), "/") {
		if c == "" || c == "." || c == ".." {
			unix.Close(dfd)
			return fmt.Errorf("bad tree path %q", rel)
		}
		if err := unix.Mkdirat(dfd, c, 0o755); err != nil && err != unix.EEXIST {
			unix.Close(dfd)
			return fmt.Errorf("mkdir %s: %w", c, err)
		}
		next, err := unix.Openat(dfd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dfd)
		if err != nil {
			return fmt.Errorf("open %s: %w", c, err)
		}
		dfd = next
	}
	defer unix.Close(dfd)
	fd, err := cloneReadOnly(src) // launch_linux.go
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.MoveMount(fd, "", dfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
