//go:build linux

package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/guest/process"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// applyImage makes an image template's WORKDIR and USER the defaults of
// every command (a request's own cwd and user still win).
func applyImage(d *guestapi.ImageDefaults) {
	if d == nil {
		return
	}
	if d.WorkDir != "" {
		process.SetDefaultCwd(d.WorkDir)
	}
	if d.User != nil {
		user.SetImageUser(*d.User)
	}
}

// overlayStack mounts lowers (top first) + layerDir/name/{upper,work} at
// target with the new mount API: one fsconfig call per lower layer
// ("lowerdir+", Linux 6.8+), so an image of up to 127 layers never runs
// into the one-page limit of mount(2)'s option string.
func overlayStack(lowers []string, layerDir, name, target string) error {
	upper := filepath.Join(layerDir, name, "upper")
	work := filepath.Join(layerDir, name, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("layer dir: %w", err)
		}
	}
	fd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen overlay: %w", err)
	}
	defer unix.Close(fd)
	for _, l := range lowers {
		if err := unix.FsconfigSetString(fd, "lowerdir+", l); err != nil {
			if errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("overlay lower layer: %w (image templates need Linux 6.8 or later)", err)
			}
			return fmt.Errorf("overlay lower layer: %w", err)
		}
	}
	if err := unix.FsconfigSetString(fd, "upperdir", upper); err != nil {
		return fmt.Errorf("overlay upperdir: %w", err)
	}
	if err := unix.FsconfigSetString(fd, "workdir", work); err != nil {
		return fmt.Errorf("overlay workdir: %w", err)
	}
	// userxattr: inside a user namespace overlayfs must keep its metadata
	// (opaque dirs, whiteouts it makes) in user.* xattrs.
	if err := unix.FsconfigSetFlag(fd, "userxattr"); err != nil {
		return fmt.Errorf("overlay userxattr: %w", err)
	}
	if err := unix.FsconfigCreate(fd); err != nil {
		return fmt.Errorf("mount overlay %s: %w", name, err)
	}
	mfd, err := unix.Fsmount(fd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID)
	if err != nil {
		return fmt.Errorf("fsmount overlay %s: %w", name, err)
	}
	defer unix.Close(mfd)
	if err := unix.MoveMount(mfd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attach overlay %s: %w", name, err)
	}
	return nil
}
