//go:build linux

package disk

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

const (
	// removeFdDepth is how many ancestor directories removeTree keeps open.
	// Deeper trees are walked back up through "..", so memory and fds stay
	// bounded however deep a sandbox nests directories.
	removeFdDepth = 64
	direntBufSize = 32 << 10
)

// mountIdent identifies the mount a removal must stay on.
type mountIdent struct {
	dev   uint64 // st_dev
	mntID uint64 // statx STATX_MNT_ID; 0 if the kernel lacks it
}

type fileIdent struct {
	mountIdent
	ino uint64
}

func identOf(fd int) (fileIdent, error) {
	var stx unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_TYPE|unix.STATX_MNT_ID, &stx)
	if err != nil {
		return fileIdent{}, fmt.Errorf("statx: %w", err)
	}
	id := fileIdent{ino: stx.Ino}
	id.dev = unix.Mkdev(stx.Dev_major, stx.Dev_minor)
	if stx.Mask&unix.STATX_MNT_ID != 0 {
		id.mntID = stx.Mnt_id
	}
	return id, nil
}

// sameMount: st_dev alone misses a bind mount of the same filesystem, so
// the mount id is compared too where the kernel reports one (5.8+).
func (m mountIdent) sameMount(o mountIdent) bool {
	return m.dev == o.dev && (m.mntID == 0 || o.mntID == 0 || m.mntID == o.mntID)
}

// openDirAt opens a directory without following a symlink in its last
// component (a planted symlink fails with ELOOP/ENOTDIR instead).
func openDirAt(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// errCrossMount reports a mount point found inside a layer.
var errCrossMount = errors.New("refusing to cross a mount point")

// removeTree deletes parent/name and everything below it, working only
// through directory fds (openat/unlinkat), so that a sandbox cannot redirect
// the removal: symlinks are unlinked, never followed (the symlink-race
// class of CVE-2018-15664 and the classic "rm -rf follows a planted link"
// attack), and the walk never descends into another mount (a bind mount
// planted inside the layer would otherwise make us delete its target). A
// missing parent/name is not an error. want is the mount the tree must be
// on.
//
// Memory is bounded: one getdents buffer plus at most removeFdDepth open
// directories, each with a resume offset.
func removeTree(parent int, name string, want mountIdent) error {
	fd, err := openDirAt(parent, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return ignoreENOENT(unix.Unlinkat(parent, name, 0))
	case err != nil:
		return fmt.Errorf("open %s: %w", name, err)
	}
	root, err := identOf(fd)
	if err != nil {
		unix.Close(fd)
		return err
	}
	if !root.sameMount(want) {
		unix.Close(fd)
		return fmt.Errorf("%s: %w", name, errCrossMount)
	}
	if err := emptyDir(fd, root, want); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	if err := ignoreENOENT(unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)); err != nil {
		return fmt.Errorf("rmdir %s: %w", name, err)
	}
	return nil
}

// level is one open directory of the walk.
type level struct {
	fd    int
	pos   int64 // offset of the first entry not yet removed
	dirty bool  // this pass over the directory met an entry
}

// emptyDir removes everything below the directory open at fd (and closes
// fd). root identifies that directory.
func emptyDir(fd int, root fileIdent, want mountIdent) error {
	stack := []level{{fd: fd}}
	defer func() {
		for _, l := range stack {
			unix.Close(l.fd)
		}
	}()
	// hidden counts ancestors of stack[0] that are no longer open.
	hidden := 0
	buf := make([]byte, direntBufSize)

	for {
		top := &stack[len(stack)-1]
		if _, err := unix.Seek(top.fd, top.pos, 0); err != nil {
			return fmt.Errorf("seek: %w", err)
		}
		n, err := unix.Getdents(top.fd, buf)
		if err != nil {
			return fmt.Errorf("getdents: %w", err)
		}
		if n == 0 {
			// This directory is empty; go back to its parent, which rereads
			// from the entry naming it and removes it.
			if len(stack) > 1 {
				unix.Close(top.fd)
				stack = stack[:len(stack)-1]
				continue
			}
			if hidden == 0 {
				if !top.dirty {
					return nil // a whole pass found the layer directory empty
				}
				// Some filesystems (tmpfs before 6.6) number entries by
				// index, so offsets shift as entries go: make sure with a
				// fresh pass from the start.
				*top = level{fd: top.fd}
				continue
			}
			up, err := ascend(top.fd, root, want)
			if err != nil {
				return err
			}
			unix.Close(top.fd)
			stack[0] = level{fd: up.fd}
			hidden--
			if up.atRoot {
				hidden = 0
			}
			if hidden == 0 && !up.atRoot {
				return errors.New("directory tree changed during removal")
			}
			continue
		}

		child := -1
		for off := 0; off < n; {
			d, reclen, ok := parseDirent(buf[off:n])
			if !ok {
				return errors.New("malformed directory entry")
			}
			off += reclen
			if d.Name == "." || d.Name == ".." {
				top.pos = d.Off
				continue
			}
			top.dirty = true
			fd, err := removeEntry(top.fd, d, root, want)
			if err != nil {
				return err
			}
			if fd >= 0 {
				child = fd // top.pos stays at this entry: reread it on return
				break
			}
			top.pos = d.Off
		}
		if child < 0 {
			continue
		}
		stack = append(stack, level{fd: child})
		if len(stack) > removeFdDepth {
			unix.Close(stack[0].fd)
			stack = append(stack[:0], stack[1:]...)
			hidden++
		}
	}
}

// removeEntry unlinks d inside dirfd, or, for a non-empty directory, opens
// it and returns its fd for the caller to descend into (-1 otherwise).
func removeEntry(dirfd int, d dirent, root fileIdent, want mountIdent) (int, error) {
	typ := d.Type
	if typ == unix.DT_UNKNOWN {
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, d.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return -1, nil
			}
			return -1, fmt.Errorf("stat %q: %w", d.Name, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			typ = unix.DT_DIR
		}
	}
	if typ != unix.DT_DIR {
		err := unix.Unlinkat(dirfd, d.Name, 0)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return -1, nil
		}
		if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
			return -1, fmt.Errorf("unlink %q: %w", d.Name, err)
		}
		// It became a directory since getdents: treat it as one.
	}
	err := unix.Unlinkat(dirfd, d.Name, unix.AT_REMOVEDIR)
	switch {
	case err == nil, errors.Is(err, unix.ENOENT):
		return -1, nil
	case errors.Is(err, unix.EBUSY):
		return -1, fmt.Errorf("%q: %w", d.Name, errCrossMount)
	case errors.Is(err, unix.ENOTDIR):
		// Swapped for a non-directory (a symlink, say): unlink that.
		return -1, ignoreENOENT(unix.Unlinkat(dirfd, d.Name, 0))
	case !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST):
		return -1, fmt.Errorf("rmdir %q: %w", d.Name, err)
	}
	fd, err := openDirAt(dirfd, d.Name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return -1, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		// Swapped for a symlink between rmdir and open: O_NOFOLLOW caught it.
		return -1, ignoreENOENT(unix.Unlinkat(dirfd, d.Name, 0))
	case err != nil:
		return -1, fmt.Errorf("open %q: %w", d.Name, err)
	}
	id, err := identOf(fd)
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	if !id.sameMount(want) {
		unix.Close(fd)
		return -1, fmt.Errorf("%q: %w", d.Name, errCrossMount)
	}
	if id.ino == root.ino {
		unix.Close(fd)
		return -1, errors.New("directory tree changed during removal")
	}
	return fd, nil
}

type ascended struct {
	fd     int
	atRoot bool
}

// ascend opens the parent of the directory at fd, checking that the walk
// stays on the mount and never climbs above the layer directory.
func ascend(fd int, root fileIdent, want mountIdent) (ascended, error) {
	up, err := openDirAt(fd, "..")
	if err != nil {
		return ascended{}, fmt.Errorf("open ..: %w", err)
	}
	id, err := identOf(up)
	if err != nil {
		unix.Close(up)
		return ascended{}, err
	}
	if !id.sameMount(want) {
		unix.Close(up)
		return ascended{}, fmt.Errorf("..: %w", errCrossMount)
	}
	return ascended{fd: up, atRoot: id.ino == root.ino}, nil
}

func ignoreENOENT(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}
