//go:build linux

package files

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// Archive extraction.
//
// Every name is resolved with openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS)
// relative to the target directory's descriptor, so no entry — through
// "..", an absolute name, or a symlink planted by an earlier entry (the
// symlink-then-file trick, e.g. CVE-2021-32803 in node-tar) — can reach
// anything outside the target: the kernel refuses the walk with EXDEV. Files
// are always created fresh (O_CREAT|O_EXCL|O_NOFOLLOW after unlinking what
// was there), so an entry can never write through an existing symlink or
// hardlink. Refused outright: absolute names, "..", hardlinks whose target
// is outside the archive's tree or not a regular file, device nodes and
// FIFOs. setuid/setgid bits are stripped (and counted). Owners in the
// archive are ignored: everything belongs to the requesting user.

// ratioFloor is the expanded size below which the expansion ratio is not
// checked (small, very compressible archives are fine).
const ratioFloor = 16 << 20

// maxEntryDepth bounds the components of one entry name.
const maxEntryDepth = 512

type extractor struct {
	ctx                  context.Context
	root                 int
	maxBytes, maxEntries int64
	maxRatio             float64

	in      *countingReader
	written int64 // expanded bytes: contents plus 512 per header
	entries int64
	res     guestapi.ExtractResult
	dirs    []dirMeta
	buf     []byte

	cacheRel string // the last parent directory resolved, and its fd
	cacheFD  int
}

type dirMeta struct {
	rel   string
	mode  uint32
	mtime time.Time
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func newExtractor(ctx context.Context, root int, req guestapi.ExtractRequest) *extractor {
	x := &extractor{ctx: ctx, root: root, maxBytes: req.MaxBytes, maxEntries: req.MaxEntries, maxRatio: req.MaxRatio,
		cacheFD: -1}
	if x.maxEntries <= 0 {
		x.maxEntries = guestapi.DefaultMaxEntries
	}
	if x.maxRatio <= 0 {
		x.maxRatio = guestapi.DefaultMaxRatio
	}
	return x
}

func (x *extractor) fill(res *guestapi.ExtractResult) {
	p := res.Path
	*res = x.res
	res.Path = p
}

func (x *extractor) run(body io.Reader) error {
	defer x.dropCache()
	x.in = &countingReader{r: body}
	br := bufio.NewReaderSize(x.in, 256<<10)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return errs.Wrap(errs.CodeInvalid, err, "the upload is not a valid gzip stream")
		}
		defer gz.Close()
		src = gz
	}
	x.buf = make([]byte, guestapi.CopyBufferSize)
	tr := tar.NewReader(src)
	for {
		if err := x.ctx.Err(); err != nil {
			return errs.Wrap(errs.CodeInvalid, err, "the upload was interrupted")
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return x.streamErr(err)
		}
		if err := x.count(1); err != nil {
			return err
		}
		if err := x.account(512); err != nil {
			return err
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	return x.finish()
}

// streamErr words a failure to read the archive itself.
func (x *extractor) streamErr(err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, tar.ErrHeader) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, io.ErrUnexpectedEOF) {
		return errs.Wrap(errs.CodeInvalid, err, "the upload is not a valid tar archive (or was cut short) after %d entries", x.entries)
	}
	return errs.Wrap(errs.CodeInvalid, err, "reading the archive failed after %d entries: %s", x.entries, clip(err.Error()))
}

// count adds n entries (explicit or implied parent directories).
func (x *extractor) count(n int64) error {
	x.entries += n
	if x.entries > x.maxEntries {
		return errs.New(errs.CodeTooLarge, "the archive has more than %d entries", x.maxEntries)
	}
	return nil
}

// account adds n expanded bytes and enforces the byte and ratio limits:
// a gzip (or sparse-file) bomb expands a small upload into gigabytes.
func (x *extractor) account(n int64) error {
	x.written += n
	if x.maxBytes > 0 && x.written > x.maxBytes {
		return errs.New(errs.CodeTooLarge, "the archive expands to more than %d bytes", x.maxBytes)
	}
	if x.written > ratioFloor && float64(x.written) > x.maxRatio*float64(max(x.in.n, 1)) {
		return errs.New(errs.CodeTooLarge, "the archive expands more than %g times its upload size (a compression bomb?); raise max_ratio if it is legitimate", x.maxRatio)
	}
	return nil
}

func (x *extractor) entry(hdr *tar.Header, tr *tar.Reader) error {
	switch hdr.Typeflag {
	case tar.TypeXGlobalHeader:
		return nil
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		// A device node would give the sandbox a door to host devices
		// (mknod of the host disk); FIFOs make later readers hang.
		return errs.Invalid("archive entry %q is a device node or FIFO; these are refused", clip(hdr.Name))
	}
	rel, err := tarName(hdr.Name)
	if err != nil {
		return err
	}
	if strings.Count(rel, "/") >= maxEntryDepth {
		return errs.Invalid("archive entry %q is nested deeper than %d levels", clip(hdr.Name), maxEntryDepth)
	}
	mode := uint32(hdr.Mode) & 0o7777
	if mode&0o6000 != 0 {
		// setuid/setgid binaries are the classic way up from an unpacked
		// archive; no_new_privs makes them inert here, and stripping keeps
		// them inert wherever the files go next.
		mode &^= 0o6000
		x.res.Stripped++
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if rel == "." {
			return nil
		}
		if err := x.mkdirs(rel, hdr.Name); err != nil {
			return err
		}
		x.res.Dirs++
		x.dirs = append(x.dirs, dirMeta{rel: rel, mode: mode, mtime: hdr.ModTime})
		return nil
	case tar.TypeReg, tar.TypeGNUSparse:
		return x.file(rel, hdr, mode, tr)
	case tar.TypeSymlink:
		return x.symlink(rel, hdr)
	case tar.TypeLink:
		return x.hardlink(rel, hdr)
	}
	return errs.Invalid("archive entry %q has an unsupported type %q", clip(hdr.Name), string(hdr.Typeflag))
}

// beneathErr words a resolution error of an entry.
func beneathErr(name string, err error) error {
	switch err {
	case unix.EXDEV:
		return errs.Wrap(errs.CodeInvalid, err, "archive entry %q leads outside the target directory (through a symlink); refused", clip(name))
	case unix.ELOOP:
		return errs.Wrap(errs.CodeInvalid, err, "archive entry %q goes through too many symlinks; refused", clip(name))
	case unix.ENOTDIR:
		return errs.Wrap(errs.CodeInvalid, err, "archive entry %q: a parent is not a directory", clip(name))
	}
	return fileErr(name, err)
}

// openBeneath opens rel (a directory) inside the target.
func (x *extractor) openBeneath(rel string) (int, error) {
	if rel == "" || rel == "." {
		return unix.Dup(x.root)
	}
	return openAt(x.root, rel, unix.O_PATH|unix.O_DIRECTORY, 0, unix.RESOLVE_BENEATH)
}

// mkdirs makes the directory rel and its missing parents inside the
// target.
func (x *extractor) mkdirs(rel, name string) error {
	if fd, err := x.openBeneath(rel); err == nil {
		unix.Close(fd)
		return nil
	} else if err != unix.ENOENT {
		return beneathErr(name, err)
	}
	comps := strings.Split(rel, "/")
	for i := range comps {
		pfd, err := x.openBeneath(strings.Join(comps[:i], "/"))
		if err != nil {
			return beneathErr(name, err)
		}
		err = unix.Mkdirat(pfd, comps[i], 0o755)
		unix.Close(pfd)
		switch {
		case err == nil:
			if i < len(comps)-1 {
				if err := x.count(1); err != nil {
					return err
				}
			}
		case err == unix.EEXIST:
		default:
			return beneathErr(name, err)
		}
	}
	fd, err := x.openBeneath(rel)
	if err != nil {
		return beneathErr(name, err)
	}
	unix.Close(fd)
	return nil
}

// parent returns the directory holding rel (made if missing) and rel's
// final name. The descriptor is cached: do not close it.
func (x *extractor) parent(rel, name string) (int, string, error) {
	dir, base := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return x.root, base, nil
	}
	if x.cacheFD >= 0 && x.cacheRel == dir {
		return x.cacheFD, base, nil
	}
	fd, err := x.openBeneath(dir)
	if err == unix.ENOENT {
		if err := x.mkdirs(dir, name); err != nil {
			return -1, "", err
		}
		fd, err = x.openBeneath(dir)
	}
	if err != nil {
		return -1, "", beneathErr(name, err)
	}
	x.dropCache()
	x.cacheRel, x.cacheFD = dir, fd
	return fd, base, nil
}

func (x *extractor) dropCache() {
	if x.cacheFD >= 0 {
		unix.Close(x.cacheFD)
		x.cacheFD = -1
	}
}

// clear removes a non-directory at pfd/base so a fresh entry can take its
// place; an existing directory is a conflict.
func (x *extractor) clear(pfd int, base, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return nil
		}
		return fileErr(name, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return errs.New(errs.CodeConflict, "archive entry %q: a directory of that name exists", clip(name))
	}
	if err := unix.Unlinkat(pfd, base, 0); err != nil && err != unix.ENOENT {
		return fileErr(name, err)
	}
	return nil
}

func (x *extractor) file(rel string, hdr *tar.Header, mode uint32, tr *tar.Reader) error {
	if rel == "." {
		return errs.Invalid("archive entry %q: a file cannot replace the target directory", clip(hdr.Name))
	}
	pfd, base, err := x.parent(rel, hdr.Name)
	if err != nil {
		return err
	}
	if err := x.clear(pfd, base, hdr.Name); err != nil {
		return err
	}
	// O_EXCL|O_NOFOLLOW: never write through whatever else is there.
	fd, err := unix.Openat(pfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fileErr(hdr.Name, err)
	}
	defer unix.Close(fd)
	for {
		k, rerr := tr.Read(x.buf)
		if k > 0 {
			if err := x.account(int64(k)); err != nil {
				return err
			}
			if err := writeAll(fd, x.buf[:k]); err != nil {
				if err == unix.ENOSPC || err == unix.EDQUOT {
					return errs.Wrap(errs.CodeTooLarge, err, "the sandbox's disk is full (at archive entry %q)", clip(hdr.Name))
				}
				return fileErr(hdr.Name, err)
			}
			x.res.Bytes += int64(k)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return x.streamErr(rerr)
		}
	}
	if err := unix.Fchmod(fd, mode); err != nil {
		return fileErr(hdr.Name, err)
	}
	setMtime(fd, hdr.ModTime)
	x.res.Files++
	return nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (x *extractor) symlink(rel string, hdr *tar.Header) error {
	if rel == "." {
		return errs.Invalid("archive entry %q: a symlink cannot replace the target directory", clip(hdr.Name))
	}
	t := hdr.Linkname
	if t == "" || len(t) > guestapi.MaxPathLen || strings.IndexByte(t, 0) >= 0 {
		return errs.Invalid("archive entry %q: invalid symlink target", clip(hdr.Name))
	}
	// The link itself may point anywhere: it is a name inside the sandbox,
	// and later entries cannot walk through it out of the target.
	pfd, base, err := x.parent(rel, hdr.Name)
	if err != nil {
		return err
	}
	if err := x.clear(pfd, base, hdr.Name); err != nil {
		return err
	}
	if err := unix.Symlinkat(t, pfd, base); err != nil {
		return fileErr(hdr.Name, err)
	}
	x.res.Symlinks++
	return nil
}

func (x *extractor) hardlink(rel string, hdr *tar.Header) error {
	if rel == "." {
		return errs.Invalid("archive entry %q: a hardlink cannot replace the target directory", clip(hdr.Name))
	}
	trel, err := tarName(hdr.Linkname)
	if err != nil || trel == "." {
		// A hardlink to a file outside the tree would make that file
		// writable through the new name.
		return errs.Invalid("archive entry %q: hardlink target %q must be a relative path inside the archive; refused", clip(hdr.Name), clip(hdr.Linkname))
	}
	tdir, tbase := path.Split(trel)
	tfd, err := x.openBeneath(strings.TrimSuffix(tdir, "/"))
	if err != nil {
		return beneathErr(hdr.Name, err)
	}
	defer unix.Close(tfd)
	var st unix.Stat_t
	if err := unix.Fstatat(tfd, tbase, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return errs.Invalid("archive entry %q: hardlink target %q does not exist (yet) in the target", clip(hdr.Name), clip(hdr.Linkname))
		}
		return fileErr(hdr.Name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return errs.Invalid("archive entry %q: hardlink target %q is not a regular file; refused", clip(hdr.Name), clip(hdr.Linkname))
	}
	pfd, base, err := x.parent(rel, hdr.Name)
	if err != nil {
		return err
	}
	if err := x.clear(pfd, base, hdr.Name); err != nil {
		return err
	}
	// No AT_SYMLINK_FOLLOW: the name checked above is what gets linked.
	if err := unix.Linkat(tfd, tbase, pfd, base, 0); err != nil {
		return fileErr(hdr.Name, err)
	}
	x.res.Links++
	return nil
}

// finish applies directory modes and times, deepest first (a read-only
// directory made early would refuse its own entries).
func (x *extractor) finish() error {
	x.dropCache()
	for i := len(x.dirs) - 1; i >= 0; i-- {
		d := x.dirs[i]
		fd, err := openAt(x.root, d.rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, unix.RESOLVE_BENEATH)
		if err != nil {
			continue
		}
		_ = unix.Fchmod(fd, d.mode)
		setMtime(fd, d.mtime)
		unix.Close(fd)
	}
	return nil
}

// setMtime sets the access and modification times of fd to t (best effort).
func setMtime(fd int, t time.Time) {
	if t.IsZero() {
		return
	}
	ts := unix.NsecToTimespec(t.UnixNano())
	_ = unix.UtimesNanoAt(fd, "", []unix.Timespec{ts, ts}, unix.AT_EMPTY_PATH)
}
