//go:build linux

package files

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

func (f *Service) archive(ctx context.Context, id user.ID, req guestapi.ArchiveRequest, ans *rpc.Answer) error {
	p, err := cleanPath(req.Path)
	if err != nil {
		return err
	}
	// Open first, so a missing path is an ordinary error answer.
	pfd, err := openAt(unix.AT_FDCWD, p, unix.O_PATH, 0, 0)
	if err != nil {
		return fileErr(p, err)
	}
	defer unix.Close(pfd)
	if err := guardProc(pfd, p); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fileErr(p, err)
	}
	dirfd := -1
	var single *os.File
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if dirfd, err = openDir(p); err != nil {
			return err
		}
		defer unix.Close(dirfd)
	case unix.S_IFREG:
		if single, st, err = openRegular(p); err != nil {
			return err
		}
		defer single.Close()
	default:
		return notRegular(p, st.Mode)
	}
	if err := ans.Head(guestapi.Empty{}); err != nil {
		return nil
	}
	// Data frames of up to 256 KiB: the buffer fills and goes out whole.
	bw := bufio.NewWriterSize(guestapi.DataWriter{F: ans.F}, 256<<10)
	var out io.Writer = bw
	var gz *gzip.Writer
	if req.Gzip {
		gz, _ = gzip.NewWriterLevel(bw, gzip.BestSpeed)
		out = gz
	}
	a := &archiver{ctx: ctx, tw: tar.NewWriter(out), links: map[[2]uint64]string{}, buf: make([]byte, guestapi.CopyBufferSize)}
	if dirfd >= 0 {
		err = a.dir(dirfd, "", p, 0)
	} else {
		err = a.contents(single, path.Base(p), &st)
	}
	if err == nil {
		err = a.tw.Close()
	}
	if err == nil && gz != nil {
		err = gz.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		// The stream ends with the error: the host sees an incomplete
		// archive as an error, never as a shorter archive.
		f.logf("archive %s: %v", clip(p), err)
		if errs.CodeOf(err) != errs.CodeInternal {
			return err
		}
		return errs.Wrap(errs.CodeInternal, err, "%s: the archive could not be completed", clip(p))
	}
	return ans.End(guestapi.Empty{})
}

// archiver writes a directory tree as tar. Symlinks are stored as links
// (never followed), files seen before under another name as hardlinks;
// sockets, FIFOs and devices are left out, as are entries the user cannot
// read and other mounts below the top.
type archiver struct {
	ctx   context.Context
	tw    *tar.Writer
	links map[[2]uint64]string
	buf   []byte
	dev   uint64
}

const maxArchiveDepth = 256

func (a *archiver) dir(fd int, rel, p string, depth int) error {
	if depth > maxArchiveDepth {
		return errs.Invalid("%s: deeper than %d levels", clip(p), maxArchiveDepth)
	}
	if err := a.ctx.Err(); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if depth == 0 {
		a.dev = st.Dev
	} else if st.Dev != a.dev {
		return nil
	}
	if rel != "" {
		if err := a.tw.WriteHeader(header(rel+"/", tar.TypeDir, &st, 0, "")); err != nil {
			return err
		}
	}
	names, _, err := readNames(fd)
	if err != nil {
		return err
	}
	for _, name := range names {
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		cp := path.Join(p, name)
		var cst unix.Stat_t
		if err := unix.Fstatat(fd, name, &cst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone meanwhile
		}
		switch cst.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			cfd, err := openAt(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, 0)
			if err != nil {
				continue // unreadable: left out
			}
			if guardProc(cfd, cp) != nil {
				unix.Close(cfd)
				continue
			}
			err = a.dir(cfd, crel, cp, depth+1)
			unix.Close(cfd)
			if err != nil {
				return err
			}
		case unix.S_IFLNK:
			if err := a.tw.WriteHeader(header(crel, tar.TypeSymlink, &cst, 0, readlinkAt(fd, name))); err != nil {
				return err
			}
		case unix.S_IFREG:
			if err := a.file(fd, name, crel, &cst); err != nil {
				return err
			}
		}
	}
	return nil
}

// file writes the regular file dirfd/name, as rel.
func (a *archiver) file(dirfd int, name, rel string, st *unix.Stat_t) error {
	key := [2]uint64{st.Dev, st.Ino}
	if st.Nlink > 1 {
		if first, ok := a.links[key]; ok {
			return a.tw.WriteHeader(header(rel, tar.TypeLink, st, 0, first))
		}
	}
	// O_NOFOLLOW|O_NONBLOCK|O_NOCTTY: an entry swapped for a symlink, FIFO
	// or device since the lstat is neither followed nor blocked on.
	rfd, err := openAt(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_NONBLOCK, 0, 0)
	if err != nil {
		return nil // unreadable or swapped: left out
	}
	file := os.NewFile(uintptr(rfd), rel)
	defer file.Close()
	var now unix.Stat_t
	if err := unix.Fstat(rfd, &now); err != nil || now.Mode&unix.S_IFMT != unix.S_IFREG || now.Ino != st.Ino {
		return nil
	}
	if st.Nlink > 1 && len(a.links) < 1<<20 {
		a.links[key] = rel
	}
	return a.contents(file, rel, &now)
}

// contents writes an open regular file as rel: exactly the size in the
// header, so a file that grows is cut and one that shrinks is padded with
// zeros, and the archive stays well-formed.
func (a *archiver) contents(file *os.File, rel string, st *unix.Stat_t) error {
	if err := a.tw.WriteHeader(header(rel, tar.TypeReg, st, st.Size, "")); err != nil {
		return err
	}
	var done int64
	for done < st.Size {
		if err := a.ctx.Err(); err != nil {
			return err
		}
		k := min(int64(len(a.buf)), st.Size-done)
		m, err := file.ReadAt(a.buf[:k], done)
		if m > 0 {
			if _, err := a.tw.Write(a.buf[:m]); err != nil {
				return err
			}
			done += int64(m)
		}
		if err == io.EOF {
			clear(a.buf)
			for done < st.Size {
				k := min(int64(len(a.buf)), st.Size-done)
				if _, err := a.tw.Write(a.buf[:k]); err != nil {
					return err
				}
				done += k
			}
			break
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func header(name string, typ byte, st *unix.Stat_t, size int64, link string) *tar.Header {
	return &tar.Header{
		Typeflag: typ,
		Name:     name,
		Linkname: link,
		Size:     size,
		Mode:     int64(st.Mode & 0o7777),
		Uid:      int(st.Uid),
		Gid:      int(st.Gid),
		ModTime:  time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
		Format:   tar.FormatPAX,
	}
}

func (f *Service) extract(ctx context.Context, id user.ID, req guestapi.ExtractRequest, body io.Reader) (guestapi.ExtractResult, error) {
	return extractArchive(ctx, req, body)
}

// extractArchive unpacks body (tar, or gzip'd tar) into req.Path. A target
// that does not exist yet is built under a temporary name and renamed into
// place only if the whole archive is accepted; into an existing directory,
// entries before a refused one stay.
func extractArchive(ctx context.Context, req guestapi.ExtractRequest, body io.Reader) (guestapi.ExtractResult, error) {
	p, err := cleanPath(req.Path)
	if err != nil {
		return guestapi.ExtractResult{}, err
	}
	if p == "/" {
		return guestapi.ExtractResult{}, errs.Invalid("extract into a directory below /")
	}
	res := guestapi.ExtractResult{Path: p}
	fd, err := openDir(p)
	if err == nil {
		defer unix.Close(fd)
		x := newExtractor(ctx, fd, req)
		err := x.run(body)
		x.fill(&res)
		return res, err
	}
	if errs.CodeOf(err) != errs.CodeNotFound {
		return res, err
	}
	// New target: parents as needed, then a private staging directory.
	if err := mkdirAll(path.Dir(p), 0o755, nil); err != nil {
		return res, err
	}
	dirfd, base, err := openParent(p)
	if err != nil {
		return res, err
	}
	defer unix.Close(dirfd)
	stage, sfd, err := createTempDir(dirfd, base, p)
	if err != nil {
		return res, err
	}
	x := newExtractor(ctx, sfd, req)
	err = x.run(body)
	x.fill(&res)
	if err == nil {
		_ = unix.Fchmod(sfd, 0o755)
		err = unix.Renameat2(dirfd, stage, dirfd, base, unix.RENAME_NOREPLACE)
		if err != nil {
			err = fileErr(p, err)
		}
	}
	unix.Close(sfd)
	if err != nil {
		rm := &remover{ctx: context.WithoutCancel(ctx), dev: devOf(dirfd)}
		_ = rm.tree(dirfd, stage, path.Join(path.Dir(p), stage), 0)
		return res, err
	}
	return res, nil
}

func devOf(fd int) uint64 {
	var st unix.Stat_t
	_ = unix.Fstat(fd, &st)
	return st.Dev
}

func createTempDir(dirfd int, base, p string) (string, int, error) {
	for tries := 0; ; tries++ {
		name := tempName(base, true) // renamed with RENAME_NOREPLACE: always new
		err := unix.Mkdirat(dirfd, name, 0o700)
		if err == unix.EEXIST && tries < 8 {
			continue
		}
		if err != nil {
			return "", -1, fileErr(p, err)
		}
		fd, err := openAt(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, 0)
		if err != nil {
			_ = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
			return "", -1, fileErr(p, err)
		}
		return name, fd, nil
	}
}

// tarName validates an archive member name (or hardlink target) and
// returns it relative and clean. Absolute names and ".." are refused
// outright (the zip-slip / tar-slip escape, e.g. CVE-2018-1002200,
// CVE-2007-4131), as are names no filesystem here could hold.
func tarName(name string) (string, error) {
	if name == "" {
		return "", errs.Invalid("archive entry with an empty name")
	}
	if strings.IndexByte(name, 0) >= 0 {
		return "", errs.Invalid("archive entry %q: name contains a NUL byte", clip(name))
	}
	if len(name) > guestapi.MaxPathLen {
		return "", errs.Invalid("archive entry name longer than %d bytes", guestapi.MaxPathLen)
	}
	if strings.HasPrefix(name, "/") {
		return "", errs.Invalid("archive entry %q: absolute names are refused", clip(name))
	}
	var parts []string
	for _, c := range strings.Split(name, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return "", errs.Invalid("archive entry %q: \"..\" components are refused", clip(name))
		}
		if len(c) > guestapi.MaxNameLen {
			return "", errs.Invalid("archive entry %q: a name is longer than %d bytes", clip(name), guestapi.MaxNameLen)
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return ".", nil
	}
	return strings.Join(parts, "/"), nil
}
