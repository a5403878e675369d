//go:build linux

package agent

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// mountVolumes moves each volume the host staged onto its path in the
// new root, before /proc and /dev are mounted and before Landlock, so a
// new top-level directory is covered by the write rules like any other.
// The root's contents come from the template and from snapshots the
// sandbox itself wrote, so the mount point is resolved beneath the root
// with no symlinks or magic links at all (a planted "/data -> /proc/..."
// or "-> host path" symlink must not aim the mount; CVE-2021-30465
// runc mount-target symlink race class).
func mountVolumes(root string, under func(string) string, vols []guestapi.Volume) error {
	if len(vols) == 0 {
		return nil
	}
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("volumes: open root: %w", err)
	}
	defer unix.Close(rfd)
	for _, v := range vols {
		if err := mountVolume(rfd, under(v.Stage), v.Path); err != nil {
			return fmt.Errorf("volume at %s: %w", v.Path, err)
		}
	}
	return nil
}

const volResolve = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

func mountVolume(rfd int, stage, p string) error {
	rel := strings.TrimPrefix(path.Clean("/"+p), "/")
	if rel == "" {
		return errors.New("not the root")
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		dir := strings.Join(parts[:i], "/")
		if dir == "" {
			dir = "."
		}
		pfd, err := unix.Openat2(rfd, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: volResolve})
		if err != nil {
			return fmt.Errorf("/%s: %w (a symlink on the way is refused)", dir, err)
		}
		err = unix.Mkdirat(pfd, parts[i], 0o755)
		unix.Close(pfd)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("mkdir: %w", err)
		}
	}
	tfd, err := unix.Openat2(rfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: volResolve})
	if err != nil {
		return fmt.Errorf("mount point: %w (must be a directory, reached without symlinks)", err)
	}
	defer unix.Close(tfd)
	if err := unix.MoveMount(unix.AT_FDCWD, stage, tfd, "", unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move mount: %w", err)
	}
	return nil
}
