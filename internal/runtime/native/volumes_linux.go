//go:build linux

package native

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// Volumes (docs/state.md): each volume's data directory is cloned as a
// detached mount, id-mapped to the sandbox's user namespace (a file the
// volume stores as uid 1000 is uid 1000 in every sandbox, whatever host
// uids the sandbox got), nosuid and nodev (a set-uid binary or device
// node another sandbox planted in a shared volume means nothing), and
// read-only if asked; then attached at a staging point inside the guest's
// mount namespace, from where the guest moves it onto its path in the new
// root before it hardens itself (internal/guest/agent/volumes_linux.go).

// volumeSetupError turns the guest's refusal of a volume's mount point
// (a symlink on the way, a file in place of the directory: the sandbox's
// own tree, which the server cannot check beforehand) into the caller's
// invalid_argument; other errors pass through.
func volumeSetupError(err error) error {
	msg := err.Error()
	i := strings.Index(msg, "guest setup failed: volume at ")
	if i < 0 {
		return err
	}
	return errs.Wrap(errs.CodeInvalid, err, "%s", strings.TrimPrefix(msg[i:], "guest setup failed: "))
}

// MountsVolumes implements runtime.VolumeMounter.
func (b *Backend) MountsVolumes() bool { return true }

// stageVolumes stages inst's volumes and lists them in gc.
func (b *Backend) stageVolumes(inst *instance, gc *guestapi.Config) error {
	if len(inst.vols) == 0 {
		return nil
	}
	mnt := filepath.Join(b.sbDir(inst.id), "mnt")
	if err := os.Mkdir(filepath.Join(mnt, "vol"), 0o755); err != nil {
		return err
	}
	userns, err := unix.Open("/proc/"+strconv.Itoa(inst.pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(userns)
	var trees []int
	defer func() {
		for _, fd := range trees {
			unix.Close(fd)
		}
	}()
	var stages []string
	for i, v := range inst.vols {
		stage := filepath.Join(mnt, "vol", strconv.Itoa(i))
		if err := os.Mkdir(stage, 0o755); err != nil {
			return err
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, v.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return fmt.Errorf("volume %s: open_tree: %w", v.Name, err)
		}
		trees = append(trees, fd)
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV,
			Userns_fd: uint64(userns)}
		if v.ReadOnly {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
			return fmt.Errorf("volume %s: id-map: %w", v.Name, err)
		}
		stages = append(stages, stage)
		gc.Volumes = append(gc.Volumes, guestapi.Volume{Path: v.Path, Stage: "vol/" + strconv.Itoa(i)})
	}
	return inMountNS(inst.pid, func() error {
		return moveTrees(trees, func(i int) string { return stages[i] },
			func(i int, err error) error { return fmt.Errorf("volume %s: attach: %w", inst.vols[i].Name, err) })
	})
}
