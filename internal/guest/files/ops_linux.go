//go:build linux

package files

import (
	"context"
	"path"
	goruntime "runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

func (f *Service) stat(ctx context.Context, id user.ID, r guestapi.StatRequest) (guestapi.FileInfo, error) {
	p, err := cleanPath(r.Path)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	if err := askedNamespace(r.Metadata); err != nil {
		return guestapi.FileInfo{}, err
	}
	if r.Follow || p == "/" {
		fd, err := openAt(unix.AT_FDCWD, p, unix.O_PATH, 0, 0)
		if err != nil {
			return guestapi.FileInfo{}, fileErr(p, err)
		}
		defer unix.Close(fd)
		if err := guardProc(fd, p); err != nil {
			return guestapi.FileInfo{}, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return guestapi.FileInfo{}, fileErr(p, err)
		}
		fi := infoOf(p, &st, "")
		return fi, metadataOf(&fi, attrsOfPath(fd), r.Metadata)
	}
	dirfd, base, err := openParent(p)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	defer unix.Close(dirfd)
	fi, _, err := lstatAt(dirfd, base, p)
	if err != nil {
		return fi, err
	}
	return fi, metadataOf(&fi, attrsAt(dirfd, base), r.Metadata)
}

// sendList answers with a hand-encoded listing (see guestapi.AppendJSON)
// in data frames, its size in the head, so the host can pass it on
// without decoding.
func (f *Service) sendList(ctx context.Context, id user.ID, req guestapi.ListRequest, a *rpc.Answer) error {
	res, err := f.list(ctx, id, req)
	if err != nil {
		return err
	}
	const hl = guestapi.FrameHeaderLen
	b := res.AppendJSON(make([]byte, hl, hl+160*len(res.Entries)+64))
	if err := a.Head(guestapi.ListInfo{Entries: len(res.Entries), Truncated: res.Truncated}); err != nil {
		return nil
	}
	// In place: each frame's header overwrites the end of the previous
	// frame's payload, already sent.
	for off := 0; off < len(b)-hl; off += guestapi.MaxFrame {
		end := min(off+hl+guestapi.MaxFrame, len(b))
		if err := a.F.SendOwned(guestapi.FrameData, b[off:end]); err != nil {
			return nil
		}
	}
	return a.End(guestapi.Empty{})
}

func (f *Service) list(ctx context.Context, id user.ID, r guestapi.ListRequest) (guestapi.ListResult, error) {
	p, err := cleanPath(r.Path)
	if err != nil {
		return guestapi.ListResult{}, err
	}
	if err := askedNamespace(r.Metadata); err != nil {
		return guestapi.ListResult{}, err
	}
	depth := clampInt(r.Depth, 1, 1, guestapi.MaxListDepth)
	limit := clampInt(r.Limit, guestapi.DefaultListLimit, 1, guestapi.MaxListLimit)
	fd, err := openDir(p)
	if err != nil {
		return guestapi.ListResult{}, err
	}
	l := &lister{ctx: ctx, id: id, depth: depth, limit: limit, ns: r.Metadata, res: guestapi.ListResult{Path: p, Entries: []guestapi.FileInfo{}}}
	err = l.walk(fd, p, 1)
	unix.Close(fd)
	if err != nil {
		return guestapi.ListResult{}, err
	}
	return l.res, nil
}

type lister struct {
	ctx          context.Context
	id           user.ID
	depth, limit int
	ns           string // metadata namespace to report ("": none)
	res          guestapi.ListResult
}

// walk lists the directory open at fd: depth first, each directory's
// entries by name, a subdirectory's entries right after it.
func (l *lister) walk(fd int, dir string, level int) error {
	names, more, err := readNames(fd)
	if err != nil {
		return fileErr(dir, err)
	}
	if more {
		l.res.Truncated = true
	}
	// Only what can still be listed is examined (one more, to know whether
	// the listing is truncated).
	if room := l.limit - len(l.res.Entries) + 1; len(names) > room {
		names = names[:room]
	}
	if need := len(l.res.Entries) + len(names); cap(l.res.Entries) < need {
		l.res.Entries = append(make([]guestapi.FileInfo, 0, need), l.res.Entries...)
	}
	stats := statAll(l.id, fd, names)
	for i, name := range names {
		if err := l.ctx.Err(); err != nil {
			return errs.Wrap(errs.CodeTimeout, err, "listing cancelled")
		}
		sr := &stats[i]
		if sr.err != nil {
			continue // removed meanwhile
		}
		if len(l.res.Entries) >= l.limit {
			l.res.Truncated = true
			return nil
		}
		p := dir + "/" + name
		if dir == "/" {
			p = "/" + name
		}
		fi := infoNamed(p, name, &sr.st, sr.target)
		_ = metadataOf(&fi, attrsAt(fd, name), l.ns) // per entry, best effort
		l.res.Entries = append(l.res.Entries, fi)
		if level >= l.depth || sr.st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		// O_NOFOLLOW: a directory swapped for a symlink since the lstat is
		// not entered.
		cfd, err := openAt(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, 0)
		if err != nil {
			continue // unreadable (permissions) or gone: listed, not entered
		}
		if guardProc(cfd, p) != nil {
			unix.Close(cfd)
			continue
		}
		err = l.walk(cfd, p, level+1)
		unix.Close(cfd)
		if err != nil {
			return err
		}
	}
	return nil
}

type statResult struct {
	st     unix.Stat_t
	target string
	err    error
}

// parallelStat is the directory size from which entries are examined by
// several threads: lstat is a system call per entry, and on a large
// directory those dominate a listing.
const parallelStat = 2048

// statAll lstats names in dirfd (and reads the symlinks among them), in
// parallel for large directories. Each helper acts as id, as the caller
// does.
func statAll(id user.ID, dirfd int, names []string) []statResult {
	res := make([]statResult, len(names))
	work := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := &res[i]
			r.err = unix.Fstatat(dirfd, names[i], &r.st, unix.AT_SYMLINK_NOFOLLOW)
			if r.err == nil && r.st.Mode&unix.S_IFMT == unix.S_IFLNK {
				r.target = readlinkAt(dirfd, names[i])
			}
		}
	}
	workers := min(goruntime.GOMAXPROCS(0), 4)
	if len(names) < parallelStat || workers < 2 {
		work(0, len(names))
		return res
	}
	chunk := (len(names) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(names))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := asUser(id, func() error { work(lo, hi); return nil })
			if err != nil {
				for i := lo; i < hi; i++ {
					res[i].err = err
				}
			}
		}()
	}
	work(0, min(chunk, len(names)))
	wg.Wait()
	return res
}

func clampInt(v, def, lo, hi int) int {
	if v == 0 {
		v = def
	}
	if v < lo {
		v = lo
	}
	if v > hi {
		v = hi
	}
	return v
}

func (f *Service) mkdir(ctx context.Context, id user.ID, r guestapi.MkdirRequest) (guestapi.FileInfo, error) {
	p, err := cleanPath(r.Path)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	mode := uint32(0o755)
	if r.Mode != "" {
		if mode, err = guestapi.ParseMode(r.Mode); err != nil {
			return guestapi.FileInfo{}, err
		}
	}
	owner, err := ownerOf(id, r.Owner)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	if r.Parents {
		if err := mkdirAll(p, mode, owner); err != nil {
			return guestapi.FileInfo{}, err
		}
	} else {
		dirfd, base, err := openParent(p)
		if err != nil {
			if errs.CodeOf(err) == errs.CodeNotFound {
				return guestapi.FileInfo{}, errs.NotFound("%s: the parent directory does not exist (set parents to create it)", clip(p))
			}
			return guestapi.FileInfo{}, err
		}
		defer unix.Close(dirfd)
		if err := unix.Mkdirat(dirfd, base, mode); err != nil {
			return guestapi.FileInfo{}, fileErr(p, err)
		}
		// Exactly mode (no umask); O_NOFOLLOW so a symlink swapped in
		// meanwhile is not chmod'ed through.
		if fd, err := openAt(dirfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, 0); err == nil {
			_ = unix.Fchmod(fd, mode)
			if owner != nil {
				err = unix.Fchown(fd, int(owner.UID), int(owner.GID))
			}
			unix.Close(fd)
			if err != nil {
				return guestapi.FileInfo{}, fileErr(p, err)
			}
		}
	}
	return f.stat(ctx, id, guestapi.StatRequest{Path: p})
}

func (f *Service) move(ctx context.Context, id user.ID, r guestapi.MoveRequest) (guestapi.FileInfo, error) {
	from, err := cleanPath(r.From)
	if err != nil {
		return guestapi.FileInfo{}, errs.Invalid("from: %s", errs.Public(err))
	}
	to, err := cleanPath(r.To)
	if err != nil {
		return guestapi.FileInfo{}, errs.Invalid("to: %s", errs.Public(err))
	}
	if from == "/" || to == "/" {
		return guestapi.FileInfo{}, errs.Invalid("cannot move / or move onto /")
	}
	if to == from {
		return guestapi.FileInfo{}, errs.Invalid("from and to are the same path")
	}
	if strings.HasPrefix(to, from+"/") {
		return guestapi.FileInfo{}, errs.Invalid("cannot move %s into itself", clip(from))
	}
	if r.Parents {
		if err := mkdirAll(path.Dir(to), 0o755, nil); err != nil {
			return guestapi.FileInfo{}, err
		}
	}
	ofd, obase, err := openParent(from)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	defer unix.Close(ofd)
	nfd, nbase, err := openParent(to)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	defer unix.Close(nfd)
	var flags uint
	if !r.Overwrite {
		flags = unix.RENAME_NOREPLACE
	}
	// renameat2 acts on the names: a symlink is moved, not its target.
	if err := unix.Renameat2(ofd, obase, nfd, nbase, flags); err != nil {
		switch err {
		case unix.EEXIST:
			if !r.Overwrite {
				return guestapi.FileInfo{}, errs.Wrap(errs.CodeConflict, err, "%s already exists (set overwrite to replace it)", clip(to))
			}
			return guestapi.FileInfo{}, errs.Wrap(errs.CodeConflict, err, "%s is a directory that is not empty", clip(to))
		case unix.ENOTEMPTY:
			return guestapi.FileInfo{}, errs.Wrap(errs.CodeConflict, err, "%s is a directory that is not empty", clip(to))
		case unix.EXDEV:
			return guestapi.FileInfo{}, errs.Wrap(errs.CodeInvalid, err, "%s and %s are on different filesystems; copy and remove instead", clip(from), clip(to))
		case unix.ENOENT:
			return guestapi.FileInfo{}, fileErr(from, err)
		case unix.EINVAL:
			return guestapi.FileInfo{}, errs.Wrap(errs.CodeInvalid, err, "cannot move %s to %s (into itself?)", clip(from), clip(to))
		}
		return guestapi.FileInfo{}, fileErr(to, err)
	}
	fi, _, err := lstatAt(nfd, nbase, to)
	return fi, err
}

// maxRemoveDepth bounds recursion (each level holds a descriptor).
const maxRemoveDepth = 256

func (f *Service) remove(ctx context.Context, id user.ID, r guestapi.RemoveRequest) (guestapi.RemoveResult, error) {
	p, err := cleanPath(r.Path)
	if err != nil {
		return guestapi.RemoveResult{}, err
	}
	if p == "/" {
		return guestapi.RemoveResult{}, errs.Invalid("refusing to remove /")
	}
	dirfd, base, err := openParent(p)
	if err != nil {
		return guestapi.RemoveResult{}, err
	}
	defer unix.Close(dirfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return guestapi.RemoveResult{}, fileErr(p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dirfd, base, 0); err != nil {
			return guestapi.RemoveResult{}, fileErr(p, err)
		}
		return guestapi.RemoveResult{Removed: 1}, nil
	}
	if !r.Recursive {
		if err := unix.Unlinkat(dirfd, base, unix.AT_REMOVEDIR); err != nil {
			if err == unix.ENOTEMPTY || err == unix.EEXIST {
				return guestapi.RemoveResult{}, errs.Wrap(errs.CodeConflict, err, "%s is a directory that is not empty (set recursive to remove it all)", clip(p))
			}
			return guestapi.RemoveResult{}, fileErr(p, err)
		}
		return guestapi.RemoveResult{Removed: 1}, nil
	}
	rm := &remover{ctx: ctx, dev: st.Dev}
	err = rm.tree(dirfd, base, p, 0)
	return guestapi.RemoveResult{Removed: rm.n}, err
}

type remover struct {
	ctx context.Context
	dev uint64
	n   int64
}

// tree removes the directory parent/name and everything in it. It never
// follows a symlink (entries are unlinked by name; directories are entered
// with O_NOFOLLOW) and never crosses into another mount.
func (rm *remover) tree(parent int, name, p string, depth int) error {
	if depth > maxRemoveDepth {
		return errs.Invalid("%s: directory tree deeper than %d levels", clip(p), maxRemoveDepth)
	}
	if err := rm.ctx.Err(); err != nil {
		return errs.Wrap(errs.CodeTimeout, err, "removal cancelled")
	}
	fd, err := openAt(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, 0)
	if err == unix.ELOOP || err == unix.ENOTDIR {
		// Swapped for a symlink or file meanwhile: remove that name.
		if err := unix.Unlinkat(parent, name, 0); err != nil && err != unix.ENOENT {
			return fileErr(p, err)
		}
		rm.n++
		return nil
	}
	if err != nil {
		return fileErr(p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fileErr(p, err)
	}
	if st.Dev != rm.dev {
		return errs.Invalid("%s is a mount point; refusing to remove across it", clip(p))
	}
	if err := guardProc(fd, p); err != nil {
		return err
	}
	for {
		names, more, err := readNames(fd)
		if err != nil {
			return fileErr(p, err)
		}
		for _, n := range names {
			cp := path.Join(p, n)
			var cst unix.Stat_t
			if err := unix.Fstatat(fd, n, &cst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if err == unix.ENOENT {
					continue
				}
				return fileErr(cp, err)
			}
			if cst.Mode&unix.S_IFMT == unix.S_IFDIR {
				if err := rm.tree(fd, n, cp, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := unix.Unlinkat(fd, n, 0); err != nil && err != unix.ENOENT {
				return fileErr(cp, err)
			}
			rm.n++
		}
		if !more {
			break
		}
		if _, err := unix.Seek(fd, 0, 0); err != nil {
			return fileErr(p, err)
		}
	}
	if err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return fileErr(p, err)
	}
	rm.n++
	return nil
}
