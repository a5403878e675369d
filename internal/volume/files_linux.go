//go:build linux

package volume

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/wire"
)

// The files of a volume, read and written by the server without a
// sandbox. The server is host root here and the tree is written by
// sandboxes, so every path is resolved beneath the volume's data
// directory with openat2: RESOLVE_IN_ROOT makes a symlink (absolute or
// full of "..") resolve as if the volume were "/", NO_MAGICLINKS refuses
// /proc-style links and NO_XDEV refuses crossing into another mount
// (path traversal / symlink-race class, CVE-2018-15664). Leaves are
// opened, made and removed with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW.

const resolve = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// FS is one volume's tree, opened for one files call.
type FS struct {
	root int // O_PATH on the data directory
}

// OpenFS opens the tree at dir (a DataDir).
func OpenFS(dir string) (*FS, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open volume: %w", err)
	}
	return &FS{root: fd}, nil
}

// Close releases the tree.
func (f *FS) Close() error { return unix.Close(f.root) }

func (f *FS) open(rel string, flags uint64) (int, error) {
	if rel == "" {
		rel = "."
	}
	fd, err := unix.Openat2(f.root, rel, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolve})
	for errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
		fd, err = unix.Openat2(f.root, rel, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolve})
	}
	return fd, err
}

// parent opens rel's parent directory and returns it with rel's leaf.
func (f *FS) parent(rel string) (int, string, error) {
	if rel == "" {
		return -1, "", errs.Invalid("the volume's root cannot be the target of this call")
	}
	dir, leaf := path.Split(rel)
	fd, err := f.open(strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return -1, "", fileErr(dir, err)
	}
	return fd, leaf, nil
}

// fileErr maps an errno to the files API's codes.
func fileErr(p string, err error) error {
	shown := "/" + strings.TrimSuffix(p, "/")
	if len(shown) > 256 {
		shown = shown[:256] + "…"
	}
	switch {
	case errors.Is(err, unix.ENOENT):
		return errs.NotFound("%s: no such file or directory", shown)
	case errors.Is(err, unix.ENOTDIR):
		return errs.Invalid("%s: not a directory", shown)
	case errors.Is(err, unix.EISDIR):
		return errs.Invalid("%s: is a directory", shown)
	case errors.Is(err, unix.EEXIST):
		return errs.New(errs.CodeConflict, "%s: exists", shown)
	case errors.Is(err, unix.ENOTEMPTY):
		return errs.New(errs.CodeConflict, "%s: directory not empty (remove it with recursive)", shown)
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return errs.New(errs.CodeLimit, "the volume is full")
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return errs.Invalid("%s: a symlink or mount on the way is not followed here", shown)
	case errors.Is(err, unix.ENAMETOOLONG):
		return errs.Invalid("%s: name too long", shown)
	}
	return errs.Wrap(errs.CodeInternal, err, "the volume's file could not be reached")
}

func info(rel string, st *unix.Stat_t, target string) wire.FileInfo {
	typ := wire.TypeOther
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		typ = wire.TypeFile
	case unix.S_IFDIR:
		typ = wire.TypeDir
	case unix.S_IFLNK:
		typ = wire.TypeSymlink
	}
	return wire.FileInfo{Name: path.Base("/" + rel), Path: "/" + rel, Type: typ, Size: st.Size,
		Mode: fmt.Sprintf("%04o", st.Mode&0o7777), MTime: time.Unix(st.Mtim.Unix()).UTC(), Target: target,
		UID: int(st.Uid), GID: int(st.Gid)}
}

// Stat describes rel (a symlink as itself).
func (f *FS) Stat(rel string) (wire.FileInfo, error) {
	if rel == "" {
		var st unix.Stat_t
		if err := unix.Fstatat(f.root, "", &st, unix.AT_EMPTY_PATH); err != nil {
			return wire.FileInfo{}, fileErr(rel, err)
		}
		return info(rel, &st, ""), nil
	}
	pfd, leaf, err := f.parent(rel)
	if err != nil {
		return wire.FileInfo{}, err
	}
	defer unix.Close(pfd)
	return statAt(pfd, leaf, rel)
}

func statAt(pfd int, leaf, rel string) (wire.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, leaf, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return wire.FileInfo{}, fileErr(rel, err)
	}
	target := ""
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		buf := make([]byte, maxPath)
		if n, err := unix.Readlinkat(pfd, leaf, buf); err == nil {
			target = string(buf[:n])
		}
	}
	return info(rel, &st, target), nil
}

// Read opens regular file rel for reading.
func (f *FS) Read(rel string) (*os.File, wire.FileInfo, error) {
	fd, err := f.open(rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		return nil, wire.FileInfo{}, fileErr(rel, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, wire.FileInfo{}, fileErr(rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, wire.FileInfo{}, errs.Invalid("/%s: not a regular file", rel)
	}
	return os.NewFile(uintptr(fd), "volume-file"), info(rel, &st, ""), nil
}

// Write replaces regular file rel with at most max bytes of r (a
// temporary file renamed into place: readers see the old or the new
// content, never half), making missing parent directories. New entries
// are owned by uid/gid (sandbox-relative: the mount id-maps them).
func (f *FS) Write(rel string, r io.Reader, max int64, mode uint32, uid, gid int) (wire.FileInfo, error) {
	if rel == "" {
		return wire.FileInfo{}, errs.Invalid("a file path is needed")
	}
	if dir := path.Dir(rel); dir != "." {
		if _, err := f.Mkdir(dir, true, 0o755, uid, gid); err != nil {
			return wire.FileInfo{}, err
		}
	}
	pfd, leaf, err := f.parent(rel)
	if err != nil {
		return wire.FileInfo{}, err
	}
	defer unix.Close(pfd)
	tmp := ".paddock-write-" + leafHash(leaf)
	fd, err := unix.Openat(pfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode&0o777)
	if err != nil {
		return wire.FileInfo{}, fileErr(rel, err)
	}
	file := os.NewFile(uintptr(fd), "volume-write")
	ok := false
	defer func() {
		file.Close()
		if !ok {
			_ = unix.Unlinkat(pfd, tmp, 0)
		}
	}()
	n, err := io.Copy(file, io.LimitReader(r, max+1))
	if err != nil {
		var en unix.Errno
		if errors.As(err, &en) {
			return wire.FileInfo{}, fileErr(rel, err)
		}
		return wire.FileInfo{}, errs.Wrap(errs.CodeInvalid, err, "the upload was cut short")
	}
	if n > max {
		return wire.FileInfo{}, errs.New(errs.CodeTooLarge, "the file is larger than %d bytes", max)
	}
	if err := unix.Fchown(fd, uid, gid); err != nil {
		return wire.FileInfo{}, fileErr(rel, err)
	}
	if err := unix.Fchmod(fd, mode&0o777); err != nil {
		return wire.FileInfo{}, fileErr(rel, err)
	}
	if err := file.Sync(); err != nil {
		return wire.FileInfo{}, fileErr(rel, err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, leaf, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return wire.FileInfo{}, errs.Invalid("/%s: is a directory", rel)
	}
	if err := unix.Renameat(pfd, tmp, pfd, leaf); err != nil {
		return wire.FileInfo{}, fileErr(rel, err)
	}
	ok = true
	return statAt(pfd, leaf, rel)
}

func leafHash(leaf string) string {
	var h uint32 = 2166136261
	for i := 0; i < len(leaf); i++ {
		h = (h ^ uint32(leaf[i])) * 16777619
	}
	return fmt.Sprintf("%08x-%d", h, time.Now().UnixNano())
}

// Mkdir makes directory rel (with parents: each missing one, as mkdir
// -p; an existing directory is then fine).
func (f *FS) Mkdir(rel string, parents bool, mode uint32, uid, gid int) (wire.FileInfo, error) {
	if rel == "" {
		if parents {
			return f.Stat("")
		}
		return wire.FileInfo{}, errs.New(errs.CodeConflict, "/: exists")
	}
	parts := strings.Split(rel, "/")
	start := len(parts) - 1
	if parents {
		start = 0
	}
	for i := start; i < len(parts); i++ {
		sub := strings.Join(parts[:i+1], "/")
		pfd, leaf, err := f.parent(sub)
		if err != nil {
			return wire.FileInfo{}, err
		}
		err = unix.Mkdirat(pfd, leaf, mode&0o777)
		if err == nil {
			if dfd, err := unix.Openat(pfd, leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
				_ = unix.Fchown(dfd, uid, gid)
				_ = unix.Fchmod(dfd, mode&0o777)
				unix.Close(dfd)
			}
		} else if errors.Is(err, unix.EEXIST) && parents {
			// fine if it is a directory (checked by the next parent())
		} else {
			unix.Close(pfd)
			return wire.FileInfo{}, fileErr(sub, err)
		}
		unix.Close(pfd)
	}
	fi, err := f.Stat(rel)
	if err == nil && fi.Type != wire.TypeDir {
		return fi, errs.New(errs.CodeConflict, "/%s: exists and is not a directory", rel)
	}
	return fi, err
}

// List lists directory rel (one level), at most limit entries.
func (f *FS) List(rel string, limit int) (wire.ListResult, error) {
	if limit <= 0 || limit > MaxList {
		limit = MaxList
	}
	fd, err := f.open(rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return wire.ListResult{}, fileErr(rel, err)
	}
	dir := os.NewFile(uintptr(fd), "volume-dir")
	defer dir.Close()
	res := wire.ListResult{Path: "/" + rel, Entries: []wire.FileInfo{}}
	for {
		names, err := dir.Readdirnames(256)
		for _, n := range names {
			if len(res.Entries) >= limit {
				res.Truncated = true
				return res, nil
			}
			fi, err := statAt(fd, n, path.Join(rel, n))
			if err == nil {
				res.Entries = append(res.Entries, fi)
			}
		}
		if err == io.EOF || len(names) == 0 {
			return res, nil
		}
		if err != nil {
			return res, fileErr(rel, err)
		}
	}
}

// Remove removes rel (a directory's tree only with recursive) and
// counts the entries removed. Symlinks are removed, never followed.
func (f *FS) Remove(rel string, recursive bool) (int64, error) {
	pfd, leaf, err := f.parent(rel)
	if err != nil {
		return 0, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, leaf, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, fileErr(rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 1, fileErrIf(rel, unix.Unlinkat(pfd, leaf, 0))
	}
	if !recursive {
		return 1, fileErrIf(rel, unix.Unlinkat(pfd, leaf, unix.AT_REMOVEDIR))
	}
	n, err := removeTree(pfd, leaf, 0)
	if err != nil {
		return n, fileErr(rel, err)
	}
	return n, nil
}

func fileErrIf(rel string, err error) error {
	if err != nil {
		return fileErr(rel, err)
	}
	return nil
}

// removeTree removes directory leaf of pfd and everything under it,
// through descriptors only, at most maxDepth deep.
func removeTree(pfd int, leaf string, depth int) (int64, error) {
	if depth > maxDepth {
		return 0, unix.ENAMETOOLONG
	}
	fd, err := unix.Openat(pfd, leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	dir := os.NewFile(uintptr(fd), "volume-rm")
	var n int64
	for {
		names, rerr := dir.Readdirnames(256)
		for _, name := range names {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				dir.Close()
				return n, err
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				m, err := removeTree(fd, name, depth+1)
				n += m
				if err != nil {
					dir.Close()
					return n, err
				}
				continue
			}
			if err := unix.Unlinkat(fd, name, 0); err != nil {
				dir.Close()
				return n, err
			}
			n++
		}
		if rerr != nil || len(names) == 0 {
			break
		}
	}
	dir.Close()
	if err := unix.Unlinkat(pfd, leaf, unix.AT_REMOVEDIR); err != nil {
		return n, err
	}
	return n + 1, nil
}
