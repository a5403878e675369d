//go:build linux

package files

import (
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/openat2"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// Path resolution for the files API.
//
// Paths resolve from the sandbox's root (this process's root), following
// ordinary symlinks — they cannot leave the sandbox. Magic links (the
// /proc/PID/fd/N and /proc/PID/root kind) are never followed
// (RESOLVE_NO_MAGICLINKS): they jump to whatever the descriptor points at
// without regard to the root, and the agent holds descriptors on host
// objects (its cgroup directories, its listening socket) — the route the
// runc /proc/self/fd escape took (CVE-2024-21626). Operations about a link
// itself (remove, move, lstat) work on the parent directory's descriptor
// and the final name, and never follow it.

// openAt is openat2 with RESOLVE_NO_MAGICLINKS added to resolve.
func openAt(dirfd int, p string, flags int, mode uint32, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags) | unix.O_CLOEXEC, Mode: uint64(mode), Resolve: resolve | unix.RESOLVE_NO_MAGICLINKS}
	for tries := 0; ; tries++ {
		fd, err := openat2.Open(dirfd, p, &how) // the kernel's, or the walk inside gVisor
		if err == nil {
			return fd, nil
		}
		// EAGAIN: a concurrent rename raced a RESOLVE_BENEATH walk.
		if err == unix.EINTR || (err == unix.EAGAIN && tries < 128) {
			continue
		}
		return -1, err
	}
}

// guardProc refuses descriptors on the agent's own /proc entries. Acting
// with the agent's credentials, a caller could otherwise read the agent's
// memory, environment or descriptor table (/proc/1/mem, /proc/1/environ,
// /proc/1/fd), which workloads cannot: the agent is non-dumpable to them.
func guardProc(fd int, p string) error {
	var sf unix.Statfs_t
	if err := unix.Fstatfs(fd, &sf); err != nil {
		return fileErr(p, err)
	}
	if sf.Type != unix.PROC_SUPER_MAGIC {
		return nil
	}
	link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return errs.Wrap(errs.CodeForbidden, err, "%s: cannot be accessed through the files API", clip(p))
	}
	rest, ok := strings.CutPrefix(link, "/proc/")
	if !ok {
		return nil
	}
	first, _, _ := strings.Cut(rest, "/")
	if isAgentPid(first) {
		return errs.New(errs.CodeForbidden, "%s: the sandbox agent's own /proc entries are not accessible", clip(p))
	}
	return nil
}

func isAgentPid(s string) bool {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return false
	}
	if n == os.Getpid() {
		return true
	}
	// A thread of ours (/proc/TID works for threads though it is not listed).
	var st unix.Stat_t
	return unix.Stat("/proc/self/task/"+s, &st) == nil
}

// openDir opens the directory p (following symlinks) for reading entries.
func openDir(p string) (int, error) {
	fd, err := openAt(unix.AT_FDCWD, p, unix.O_RDONLY|unix.O_DIRECTORY, 0, 0)
	if err != nil {
		return -1, fileErr(p, err)
	}
	if err := guardProc(fd, p); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// openParent opens the directory holding p (following symlinks on the
// way) and returns it with p's final name.
func openParent(p string) (dirfd int, base string, err error) {
	if p == "/" {
		return -1, "", errs.Invalid("/ has no parent directory; name a path under it")
	}
	dir, base := path.Split(p)
	fd, err := openAt(unix.AT_FDCWD, dir, unix.O_PATH|unix.O_DIRECTORY, 0, 0)
	if err != nil {
		return -1, "", fileErr(strings.TrimSuffix(dir, "/"), err)
	}
	if err := guardProc(fd, p); err != nil {
		unix.Close(fd)
		return -1, "", err
	}
	return fd, base, nil
}

// lstatAt describes dirfd/name (whose path is p) without following it.
func lstatAt(dirfd int, name, p string) (guestapi.FileInfo, unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return guestapi.FileInfo{}, st, fileErr(p, err)
	}
	target := ""
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		target = readlinkAt(dirfd, name)
	}
	return infoNamed(p, name, &st, target), st, nil
}

func readlinkAt(dirfd int, name string) string {
	buf := make([]byte, guestapi.MaxPathLen+1)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil || n < 0 {
		return ""
	}
	return string(buf[:n])
}

// infoOf builds the FileInfo of p.
func infoOf(p string, st *unix.Stat_t, target string) guestapi.FileInfo {
	return infoNamed(p, path.Base(p), st, target)
}

// infoNamed is infoOf when the caller has the name at hand.
func infoNamed(p, name string, st *unix.Stat_t, target string) guestapi.FileInfo {
	return guestapi.FileInfo{
		Name:   name,
		Path:   p,
		Type:   typeOf(st.Mode),
		Size:   st.Size,
		Mode:   modeString(st.Mode),
		MTime:  time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(),
		Target: target,
		UID:    int(st.Uid),
		GID:    int(st.Gid),
	}
}

// modeStrings caches the octal text of every permission value (4096 of
// them), so a large listing allocates none.
var modeStrings = func() (t [0o10000]string) {
	for m := range t {
		b := []byte{'0', '0', '0', '0'}
		for i, v := 3, m; i >= 0; i, v = i-1, v>>3 {
			b[i] = byte('0' + v&7)
		}
		t[m] = string(b)
	}
	return t
}()

func modeString(m uint32) string { return modeStrings[m&0o7777] }

func typeOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return guestapi.TypeFile
	case unix.S_IFDIR:
		return guestapi.TypeDir
	case unix.S_IFLNK:
		return guestapi.TypeSymlink
	}
	return guestapi.TypeOther
}

// kindOf names a non-regular file type for error messages.
func kindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	}
	return "a regular file"
}

// maxDirNames bounds the names read from one directory (they are sorted,
// so they are all held at once).
const maxDirNames = 1 << 20

// readNames returns the sorted entry names of the directory open at fd
// (the descriptor stays open), and whether the directory had more than
// maxDirNames.
func readNames(fd int) (names []string, more bool, err error) {
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		if len(names) > maxDirNames {
			names = names[:maxDirNames]
			more = true
			break
		}
	}
	sort.Strings(names)
	return names, more, nil
}

// mkdirAll makes p and missing parents; the last directory gets mode,
// parents 0755 (both exactly: no umask).
// mkdirAll makes p and its missing parents (0755, p itself mode); with
// owner, the directories it makes are given to that user.
func mkdirAll(p string, mode uint32, owner *user.ID) error {
	fd, err := openAt(unix.AT_FDCWD, "/", unix.O_PATH|unix.O_DIRECTORY, 0, 0)
	if err != nil {
		return fileErr("/", err)
	}
	defer func() { unix.Close(fd) }()
	comps := strings.Split(strings.Trim(p, "/"), "/")
	cur := ""
	for i, c := range comps {
		if c == "" {
			continue
		}
		cur += "/" + c
		m := uint32(0o755)
		if i == len(comps)-1 {
			m = mode
		}
		created := false
		if err := unix.Mkdirat(fd, c, m); err == nil {
			created = true
		} else if err != unix.EEXIST {
			return fileErr(cur, err)
		}
		nfd, err := openAt(fd, c, unix.O_RDONLY|unix.O_DIRECTORY, 0, 0)
		if err != nil {
			if err == unix.ENOTDIR {
				return errs.New(errs.CodeConflict, "%s exists and is not a directory", clip(cur))
			}
			return fileErr(cur, err)
		}
		if created {
			_ = unix.Fchmod(nfd, m)
			if owner != nil {
				if err := unix.Fchown(nfd, int(owner.UID), int(owner.GID)); err != nil {
					unix.Close(nfd)
					return fileErr(cur, err)
				}
			}
		}
		if err := guardProc(nfd, cur); err != nil {
			unix.Close(nfd)
			return err
		}
		unix.Close(fd)
		fd = nfd
	}
	return nil
}

// resolveFinal follows a symlink in the final component of dirfd/base (at
// most 40 times, as the kernel does) so a write through a link writes its
// target, as cp and shells do. It returns the directory and name to
// create; the caller closes the returned descriptor (which may be dirfd).
func resolveFinal(dirfd int, base, p string) (int, string, error) {
	for hops := 0; ; hops++ {
		var st unix.Stat_t
		err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.ENOENT || (err == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK) {
			return dirfd, base, nil
		}
		if err != nil {
			return dirfd, base, fileErr(p, err)
		}
		if hops >= 40 {
			return dirfd, base, errs.Invalid("%s: too many levels of symbolic links", clip(p))
		}
		t := readlinkAt(dirfd, base)
		t = strings.TrimRight(t, "/")
		if t == "" {
			return dirfd, base, errs.Invalid("%s: symbolic link with an unusable target", clip(p))
		}
		dir, nb := path.Split(t)
		if nb == "." || nb == ".." {
			return dirfd, base, errs.Invalid("%s: symbolic link to a directory", clip(p))
		}
		if dir == "" {
			dir = "."
		}
		// Absolute targets restart at the sandbox's root (dirfd is then
		// ignored); relative ones continue from the link's directory.
		nfd, err := openAt(dirfd, dir, unix.O_PATH|unix.O_DIRECTORY, 0, 0)
		if err != nil {
			return dirfd, base, fileErr(p, err)
		}
		if err := guardProc(nfd, p); err != nil {
			unix.Close(nfd)
			return dirfd, base, err
		}
		unix.Close(dirfd)
		dirfd, base = nfd, nb
	}
}

// realPath names the directory open at fd, for messages ("" if unknown).
func realPath(fd int) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return ""
	}
	return p
}

// ownerOf is a request's Owner: nil for none. Giving files away is root's
// (a write as root then chown, as E2B's envd does); the sandbox's users can
// already act as root, so it widens nothing.
func ownerOf(id user.ID, name string) (*user.ID, error) {
	if name == "" {
		return nil, nil
	}
	if id.UID != 0 {
		return nil, errs.Invalid("owner is for writes as root (the writer %s cannot give files away)", id.Name)
	}
	o, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	return &o, nil
}
