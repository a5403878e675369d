//go:build linux

package openat2

import (
	"strings"

	"golang.org/x/sys/unix"
)

// maxSymlinks is Linux's limit of symlinks followed in one resolution.
const maxSymlinks = 40

// emulated resolves p relative to dirfd one component at a time
// with openat(O_PATH|O_NOFOLLOW), following ordinary symlinks itself, and
// honours the two resolve flags the agent uses:
//
//   - RESOLVE_NO_MAGICLINKS: a symlink on procfs is followed only if its
//     target is a relative path (/proc/self, /proc/mounts → self/mounts);
//     the magic links of /proc/PID (fd/N, cwd, root, exe, ns/...) have
//     absolute or non-path targets ("socket:[…]") and end the walk with
//     ELOOP, as the kernel does — they would jump to whatever a descriptor
//     of the agent points at (CVE-2024-21626).
//   - RESOLVE_BENEATH: ".." above dirfd, an absolute path or an absolute
//     symlink fail with EXDEV.
//
// Other resolve flags are refused (EINVAL): nothing asks for them. The
// final component is opened with how.Flags plus O_NOFOLLOW; if it turns
// out to be a symlink it is resolved like the others (a swap from file to
// symlink between the check and the open is caught by checking the opened
// descriptor).
func emulated(dirfd int, p string, how *unix.OpenHow) (int, error) {
	if how.Resolve&^(unix.RESOLVE_NO_MAGICLINKS|unix.RESOLVE_BENEATH) != 0 {
		return -1, unix.EINVAL
	}
	beneath := how.Resolve&unix.RESOLVE_BENEATH != 0
	noMagic := how.Resolve&unix.RESOLVE_NO_MAGICLINKS != 0
	if p == "" {
		return -1, unix.ENOENT
	}
	w := &walk{beneath: beneath, noMagic: noMagic}
	var err error
	if strings.HasPrefix(p, "/") {
		if beneath {
			return -1, unix.EXDEV
		}
		w.cur, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		w.cur, err = unix.Openat(dirfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return -1, err
	}
	defer func() {
		if w.cur >= 0 {
			unix.Close(w.cur)
		}
	}()
	w.todo = splitPath(p)
	trailingSlash := strings.HasSuffix(p, "/")
	for len(w.todo) > 0 {
		c := w.todo[0]
		w.todo = w.todo[1:]
		last := len(w.todo) == 0
		switch c {
		case "", ".":
			if last {
				return w.openFinal(".", how, trailingSlash)
			}
			continue
		case "..":
			if beneath && w.depth == 0 {
				return -1, unix.EXDEV
			}
			if err := w.step(".."); err != nil {
				return -1, err
			}
			if w.depth > 0 {
				w.depth--
			}
			if last {
				return w.openFinal(".", how, trailingSlash)
			}
			continue
		}
		if last {
			fd, err := w.openFinal(c, how, trailingSlash)
			if err != errIsSymlink {
				return fd, err
			}
			if err := w.follow(c); err != nil {
				return -1, err
			}
			if len(w.todo) == 0 {
				return w.openFinal(".", how, trailingSlash)
			}
			continue
		}
		fd, err := unix.Openat(w.cur, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			unix.Close(w.cur)
			w.cur = fd
			w.depth++
		case unix.S_IFLNK:
			unix.Close(fd)
			if err := w.follow(c); err != nil {
				return -1, err
			}
		default:
			unix.Close(fd)
			return -1, unix.ENOTDIR
		}
	}
	return w.openFinal(".", how, trailingSlash)
}

// walk is the state of one emulated resolution.
type walk struct {
	cur              int // directory reached so far
	depth            int // directories below the start (for RESOLVE_BENEATH)
	todo             []string
	links            int
	beneath, noMagic bool
}

var errIsSymlink = unix.Errno(0xffff) // internal: the final component is a symlink

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// step moves to the directory name (a single component) of cur.
func (w *walk) step(name string) error {
	fd, err := unix.Openat(w.cur, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	unix.Close(w.cur)
	w.cur = fd
	return nil
}

// follow replaces the symlink name (in cur) by its target's components.
func (w *walk) follow(name string) error {
	w.links++
	if w.links > maxSymlinks {
		return unix.ELOOP
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(w.cur, name, buf)
	if err != nil {
		return err
	}
	target := string(buf[:n])
	if w.noMagic {
		var sf unix.Statfs_t
		if err := unix.Fstatfs(w.cur, &sf); err != nil {
			return err
		}
		if sf.Type == unix.PROC_SUPER_MAGIC && (strings.HasPrefix(target, "/") || strings.Contains(target, ":")) {
			return unix.ELOOP
		}
	}
	if strings.HasPrefix(target, "/") {
		if w.beneath {
			return unix.EXDEV
		}
		fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		unix.Close(w.cur)
		w.cur, w.depth = fd, 0
	}
	w.todo = append(splitPath(target), w.todo...)
	return nil
}

// openFinal opens name in cur with the caller's flags, never following a
// symlink there (errIsSymlink: the caller follows it).
func (w *walk) openFinal(name string, how *unix.OpenHow, dirOnly bool) (int, error) {
	flags := int(how.Flags) | unix.O_NOFOLLOW | unix.O_CLOEXEC
	// A trailing slash follows a final symlink even under O_NOFOLLOW (the
	// kernel's lookup then wants a directory).
	follow := int(how.Flags)&unix.O_NOFOLLOW == 0 || dirOnly
	if dirOnly {
		flags |= unix.O_DIRECTORY
	}
	if name != "." && follow {
		var st unix.Stat_t
		if err := unix.Fstatat(w.cur, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return -1, errIsSymlink
		}
	}
	fd, err := unix.Openat(w.cur, name, flags, uint32(how.Mode))
	if err != nil {
		if (err == unix.ELOOP || err == unix.ENOTDIR) && follow && name != "." {
			// Became a symlink after the check?
			var st unix.Stat_t
			if unix.Fstatat(w.cur, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return -1, errIsSymlink
			}
		}
		return -1, err
	}
	if int(how.Flags)&unix.O_PATH != 0 && follow {
		// O_PATH|O_NOFOLLOW opens a symlink itself rather than failing.
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return -1, errIsSymlink
		}
	}
	return fd, nil
}
