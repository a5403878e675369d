//go:build linux

package code

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/user"
)

// defaultStateRoot holds one private directory per user's supervisor.
// /run is root's (0755): a workload running as user cannot plant anything
// on the path.
const defaultStateRoot = "/run/paddock-code"

// privateDir makes a new directory under root for id's kernels: their
// connection files (which hold the key that lets anyone run code in the
// kernel) and bash cells. It is 0700 and owned by id, so that other users'
// workloads cannot read a key (root's workloads have no CAP_DAC_OVERRIDE).
//
// The agent keeps CAP_CHOWN and CAP_FOWNER, so a path a workload prepared
// could turn a chown into a gift of someone else's file (the symlink race
// of privileged helpers): root is opened without following a symlink, the
// directory is made under a random name that nobody can have prepared,
// and it is chowned through its descriptor.
func privateDir(root string, id user.ID) (string, error) {
	if err := os.Mkdir(root, 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", errs.Wrap(errs.CodeInternal, err, "cannot make the code state directory")
	}
	rfd, err := unix.Open(root, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", errs.Wrap(errs.CodeInternal, err, "cannot open the code state directory")
	}
	defer unix.Close(rfd)
	if err := unix.Fchmod(rfd, 0o711); err != nil {
		return "", errs.Wrap(errs.CodeInternal, err, "cannot protect the code state directory")
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errs.Wrap(errs.CodeInternal, err, "random name")
	}
	name := id.Name + "-" + hex.EncodeToString(b[:])
	if err := unix.Mkdirat(rfd, name, 0o700); err != nil {
		return "", errs.Wrap(errs.CodeInternal, err, "cannot make the code state directory")
	}
	dfd, err := unix.Openat(rfd, name, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", errs.Wrap(errs.CodeInternal, err, "cannot open the code state directory")
	}
	defer unix.Close(dfd)
	if err := unix.Fchown(dfd, int(id.UID), int(id.GID)); err != nil {
		return "", errs.Wrap(errs.CodeInternal, err, "cannot give the code state directory to %s", id.Name)
	}
	if err := unix.Fchmod(dfd, 0o700); err != nil {
		return "", errs.Wrap(errs.CodeInternal, err, "cannot protect the code state directory")
	}
	return path.Join(root, name), nil
}

// searchable checks that id may enter dir: every directory on the way
// grants it search permission by its mode bits. The spawner opens the
// working directory as the agent, which may go anywhere; the kernel's own
// chdir then fails with a bare "permission denied". Workloads have no
// capabilities, so root is checked like anyone (ACLs are not read: a
// directory they open is still refused at the kernel's start).
func searchable(dir string, id user.ID) error {
	if !path.IsAbs(dir) {
		return errs.Invalid("cwd must be an absolute path")
	}
	dir = path.Clean(dir)
	p := "/"
	for _, part := range append([]string{""}, strings.Split(strings.TrimPrefix(dir, "/"), "/")...) {
		p = path.Join(p, part)
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			return errs.Invalid("cwd %q is not a directory in the sandbox", clip(dir))
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return errs.Invalid("cwd %q is not a directory in the sandbox", clip(dir))
		}
		var bit uint32
		switch {
		case st.Uid == id.UID:
			bit = 0o100
		case st.Gid == id.GID:
			bit = 0o010
		default:
			bit = 0o001
		}
		if st.Mode&bit == 0 {
			return errs.Invalid("cwd %q is not accessible to the sandbox user %s (%s is not searchable by it)", clip(dir), id.Name, clip(p))
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
