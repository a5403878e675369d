package layers

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

const (
	maxXattrs     = 64
	maxXattrValue = 64 << 10
	maxLinkTarget = 4095
	maxID         = 1<<32 - 2 // (uid_t)-1 means "unchanged" to chown
)

const (
	kindDir byte = iota + 1
	kindFile
	kindOther
	kindWhiteout
)

type dirTime struct {
	path         string
	atime, mtime time.Time
}

type extractor struct {
	ctx      context.Context
	root     int
	lim      Limits
	st       Stats
	seen     map[string]byte // explicit entries of this layer
	opaque   map[string]bool
	dirTimes []dirTime
	cacheDir string
	cacheFd  int
	buf      []byte
}

// Extract unpacks the uncompressed tar stream r into dir, an existing
// empty directory, in overlayfs lower-layer form (see the package doc).
// It must run as root to give files their owners. On error dir holds a
// partial tree that the caller removes; nothing outside dir is touched.
//
// Hardening (CVE-2018-15664, CVE-2019-14271, "zip slip" class): every
// parent directory is opened with openat2 RESOLVE_BENEATH|
// RESOLVE_NO_SYMLINKS relative to dir, and every leaf is created by
// name in that directory with O_EXCL/O_NOFOLLOW, so no entry can be
// written through a symlink, a hardlink or a ".." — not even one that a
// previous entry of the same layer planted.
func Extract(ctx context.Context, r io.Reader, dir string, lim Limits) (Stats, error) {
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stats{}, errs.Wrap(errs.CodeInternal, err, "cannot open the layer directory")
	}
	x := &extractor{
		ctx: ctx, root: root, lim: lim.norm(),
		seen: make(map[string]byte), opaque: make(map[string]bool),
		cacheFd: -1, buf: make([]byte, 256<<10),
	}
	defer x.close()
	if err := x.run(tar.NewReader(r)); err != nil {
		return x.st, err
	}
	return x.st, x.finish()
}

func (x *extractor) close() {
	if x.cacheFd >= 0 {
		unix.Close(x.cacheFd)
	}
	unix.Close(x.root)
}

func (x *extractor) run(tr *tar.Reader) error {
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readError(err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if err := x.ctx.Err(); err != nil {
			return err
		}
		x.st.Entries++
		if x.st.Entries > x.lim.MaxEntries {
			return refuse(errs.CodeTooLarge, ErrTooMany, "", "more than "+itoa(x.lim.MaxEntries))
		}
		if err := x.entry(tr, hdr); err != nil {
			return err
		}
	}
}

// readError classifies an error from the tar reader: the underlying
// stream's own errors (digest mismatch, size limit, cancellation) pass
// through; anything else means a malformed archive.
func readError(err error) error {
	var e *errs.Error
	if errors.As(err, &e) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return refuse(errs.CodeInvalid, ErrBadArchive, "", err.Error())
}

func (x *extractor) entry(tr *tar.Reader, hdr *tar.Header) error {
	name, ok := CleanName(hdr.Name)
	if !ok {
		return refuse(errs.CodeInvalid, ErrUnsafePath, hdr.Name, "")
	}
	if hasMetaComponent(name) {
		return nil // aufs bookkeeping, meaningless to overlayfs
	}
	if hdr.Uid < 0 || hdr.Gid < 0 || int64(hdr.Uid) > maxID || int64(hdr.Gid) > maxID {
		return refuse(errs.CodeInvalid, ErrBadArchive, name, "owner out of range")
	}
	xattrs, err := entryXattrs(name, hdr)
	if err != nil {
		return err
	}
	if name == "" {
		if hdr.Typeflag != tar.TypeDir {
			return refuse(errs.CodeInvalid, ErrEntryType, hdr.Name, "the layer root must be a directory")
		}
		if x.seen[""] != 0 {
			return refuse(errs.CodeInvalid, ErrDuplicate, "/", "")
		}
		x.seen[""] = kindDir
		return x.setDirMeta("", x.root, ".", hdr, xattrs)
	}
	dir, base := splitPath(name)
	if strings.HasPrefix(base, whiteoutPrefix) {
		return x.whiteout(dir, base, hdr)
	}
	if x.seen[name] != 0 {
		return refuse(errs.CodeInvalid, ErrDuplicate, name, "")
	}
	pfd, err := x.openDir(dir)
	if err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return x.mkdir(pfd, name, base, hdr, xattrs)
	case tar.TypeReg, tar.TypeRegA:
		return x.file(tr, pfd, name, base, hdr, xattrs)
	case tar.TypeSymlink:
		return x.symlink(pfd, name, base, hdr)
	case tar.TypeLink:
		return x.hardlink(pfd, name, base, hdr)
	case tar.TypeFifo:
		return x.fifo(pfd, name, base, hdr)
	case tar.TypeChar, tar.TypeBlock:
		// Device nodes would give the sandbox (whose root owns the layer
		// through the id-mapped mount) raw access to host devices.
		return refuse(errs.CodeInvalid, ErrDevice, name, "")
	default:
		return refuse(errs.CodeInvalid, ErrEntryType, name, "type "+quote(string(hdr.Typeflag)))
	}
}

func hasMetaComponent(name string) bool {
	for _, c := range strings.Split(name, "/") {
		if strings.HasPrefix(c, whiteoutMetaPre) && c != whiteoutOpaque {
			return true
		}
	}
	return false
}

// whiteout stores ".wh.NAME" as a 0/0 character device at NAME and
// ".wh..wh..opq" as an opaque mark on its directory.
func (x *extractor) whiteout(dir, base string, hdr *tar.Header) error {
	if base == whiteoutOpaque {
		if x.opaque[dir] {
			return refuse(errs.CodeInvalid, ErrDuplicate, hdr.Name, "")
		}
		if _, err := x.openDir(dir); err != nil {
			return err
		}
		x.opaque[dir] = true
		return nil
	}
	target := base[len(whiteoutPrefix):]
	if target == "" || target == "." || target == ".." {
		return refuse(errs.CodeInvalid, ErrUnsafePath, hdr.Name, "")
	}
	full := joinPath(dir, target)
	if x.seen[full] != 0 {
		return refuse(errs.CodeInvalid, ErrDuplicate, full, "whiteout of an entry of the same layer")
	}
	pfd, err := x.openDir(dir)
	if err != nil {
		return err
	}
	if err := unix.Mknodat(pfd, target, unix.S_IFCHR, 0); err != nil {
		return x.createError(full, err)
	}
	x.seen[full] = kindWhiteout
	return nil
}

func (x *extractor) mkdir(pfd int, name, base string, hdr *tar.Header, xattrs map[string]string) error {
	if err := unix.Mkdirat(pfd, base, 0o700); err != nil {
		if !errors.Is(err, unix.EEXIST) {
			return x.createError(name, err)
		}
		// A directory made implicitly for an earlier child gets its
		// metadata now; anything else is a duplicate.
		var st unix.Stat_t
		if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return refuse(errs.CodeInvalid, ErrDuplicate, name, "")
		}
	}
	x.seen[name] = kindDir
	return x.setDirMeta(name, pfd, base, hdr, xattrs)
}

func (x *extractor) setDirMeta(name string, pfd int, base string, hdr *tar.Header, xattrs map[string]string) error {
	fd, err := unix.Openat(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return x.createError(name, err)
	}
	defer unix.Close(fd)
	if err := setMeta(fd, hdr, xattrs); err != nil {
		return x.createError(name, err)
	}
	x.dirTimes = append(x.dirTimes, dirTime{name, hdr.AccessTime, hdr.ModTime})
	return nil
}

func (x *extractor) file(tr *tar.Reader, pfd int, name, base string, hdr *tar.Header, xattrs map[string]string) error {
	if hdr.Size < 0 || hdr.Size > x.lim.MaxBytes-x.st.Bytes {
		return refuse(errs.CodeTooLarge, ErrTooLarge, name, "over "+itoa64(x.lim.MaxBytes)+" bytes")
	}
	fd, err := unix.Openat(pfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return x.createError(name, err)
	}
	x.seen[name] = kindFile
	f := fdWriter(fd)
	n, err := io.CopyBuffer(f, io.LimitReader(tr, hdr.Size), x.buf)
	if err == nil && n != hdr.Size {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		unix.Close(fd)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return refuse(errs.CodeInvalid, ErrBadArchive, name, "truncated")
		}
		return readOrWriteError(name, err)
	}
	x.st.Bytes += n
	err = setMeta(fd, hdr, xattrs)
	if err == nil {
		err = unix.Futimes(fd, tvs(hdr))
	}
	unix.Close(fd)
	if err != nil {
		return x.createError(name, err)
	}
	return nil
}

func (x *extractor) symlink(pfd int, name, base string, hdr *tar.Header) error {
	if hdr.Linkname == "" || len(hdr.Linkname) > maxLinkTarget || strings.IndexByte(hdr.Linkname, 0) >= 0 {
		return refuse(errs.CodeInvalid, ErrBadArchive, name, "bad symlink target")
	}
	// The target is stored as-is: it is resolved only inside the sandbox's
	// own root, and never by this extractor.
	if err := unix.Symlinkat(hdr.Linkname, pfd, base); err != nil {
		return x.createError(name, err)
	}
	x.seen[name] = kindOther
	if err := unix.Fchownat(pfd, base, hdr.Uid, hdr.Gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return x.createError(name, err)
	}
	return x.setTimes(pfd, name, base, hdr)
}

// hardlink links to an earlier regular file of this layer only: a link to
// a path outside the layer or to a lower layer's file would let the
// sandbox reach (and, once it owns the link, chmod) host files
// (CVE-2021-30465 / tar hardlink-escape class).
func (x *extractor) hardlink(pfd int, name, base string, hdr *tar.Header) error {
	t, ok := CleanName(hdr.Linkname)
	if !ok || t == "" || x.seen[t] != kindFile {
		return refuse(errs.CodeInvalid, ErrHardlink, name, "to "+quote(hdr.Linkname))
	}
	tdir, tbase := splitPath(t)
	tfd, err := x.openDirUncached(tdir)
	if err != nil {
		return err
	}
	err = unix.Linkat(tfd, tbase, pfd, base, 0) // flags 0: never follows a symlink
	if tfd != x.root {
		unix.Close(tfd)
	}
	if err != nil {
		return x.createError(name, err)
	}
	x.seen[name] = kindFile
	return nil
}

func (x *extractor) fifo(pfd int, name, base string, hdr *tar.Header) error {
	if err := unix.Mknodat(pfd, base, unix.S_IFIFO|0o600, 0); err != nil {
		return x.createError(name, err)
	}
	x.seen[name] = kindOther
	fd, err := unix.Openat(pfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return x.createError(name, err)
	}
	defer unix.Close(fd)
	// An O_PATH descriptor cannot fchown/fchmod: go through its magic link,
	// which names exactly this inode.
	p := "/proc/self/fd/" + itoa(fd)
	if err := unix.Chown(p, hdr.Uid, hdr.Gid); err != nil {
		return x.createError(name, err)
	}
	if err := unix.Chmod(p, uint32(hdr.Mode)&0o7777); err != nil {
		return x.createError(name, err)
	}
	return x.setTimes(pfd, name, base, hdr)
}

// setTimes sets an entry's times without following it.
func (x *extractor) setTimes(pfd int, name, base string, hdr *tar.Header) error {
	ts := []unix.Timespec{unix.NsecToTimespec(hdr.AccessTime.UnixNano()), unix.NsecToTimespec(hdr.ModTime.UnixNano())}
	if hdr.AccessTime.IsZero() {
		ts[0] = ts[1]
	}
	if err := unix.UtimesNanoAt(pfd, base, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return x.createError(name, err)
	}
	return nil
}

// openDir returns a descriptor on the layer directory dir, creating
// missing components (0755, root) as a tar without parent entries needs.
// The descriptor is cached; callers do not close it.
func (x *extractor) openDir(dir string) (int, error) {
	if dir == "" {
		return x.root, nil
	}
	if dir == x.cacheDir && x.cacheFd >= 0 {
		return x.cacheFd, nil
	}
	fd, err := x.openDirUncached(dir)
	if err != nil {
		return -1, err
	}
	if x.cacheFd >= 0 {
		unix.Close(x.cacheFd)
	}
	x.cacheDir, x.cacheFd = dir, fd
	return fd, nil
}

const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

func (x *extractor) openDirUncached(dir string) (int, error) {
	if dir == "" {
		return x.root, nil
	}
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveFlags}
	fd, err := unix.Openat2(x.root, dir, how)
	if err == nil {
		return fd, nil
	}
	if !errors.Is(err, unix.ENOENT) {
		return -1, x.resolveError(dir, err)
	}
	// Create the missing components one by one, each relative to the
	// previous descriptor.
	cur := x.root
	closeCur := func() {
		if cur != x.root {
			unix.Close(cur)
		}
	}
	for _, c := range strings.Split(dir, "/") {
		if err := unix.Mkdirat(cur, c, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			closeCur()
			return -1, x.createError(dir, err)
		}
		next, err := unix.Openat2(cur, c, how)
		closeCur()
		if err != nil {
			return -1, x.resolveError(dir, err)
		}
		cur = next
	}
	return cur, nil
}

func (x *extractor) resolveError(p string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return refuse(errs.CodeInvalid, ErrSymlinkPath, p, "")
	case errors.Is(err, unix.ENOTDIR):
		return refuse(errs.CodeInvalid, ErrBadArchive, p, "a parent is not a directory")
	}
	return x.createError(p, err)
}

func (x *extractor) createError(name string, err error) error {
	switch {
	case errors.Is(err, unix.EEXIST):
		return refuse(errs.CodeInvalid, ErrDuplicate, name, "")
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return errs.Wrap(errs.CodeLimit, err, "layer refused: the server's disk is full")
	case errors.Is(err, unix.ENOTDIR):
		return refuse(errs.CodeInvalid, ErrBadArchive, name, "a parent is not a directory")
	}
	return errs.Wrap(errs.CodeInternal, err, "cannot unpack layer entry %s", quote(name))
}

// finish marks opaque directories and restores directory times (creating
// children changed them).
func (x *extractor) finish() error {
	for dir := range x.opaque {
		fd, err := x.openDirUncached(dir)
		if err != nil {
			return err
		}
		err = markOpaque(fd)
		if fd != x.root {
			unix.Close(fd)
		}
		if err != nil {
			return x.createError(dir, err)
		}
	}
	for i := len(x.dirTimes) - 1; i >= 0; i-- {
		d := x.dirTimes[i]
		fd, err := x.openDirUncached(d.path)
		if err != nil {
			return err
		}
		ts := []unix.Timeval{unix.NsecToTimeval(d.atime.UnixNano()), unix.NsecToTimeval(d.mtime.UnixNano())}
		if d.atime.IsZero() {
			ts[0] = ts[1]
		}
		err = unix.Utimes("/proc/self/fd/"+itoa(fd), ts)
		if fd != x.root {
			unix.Close(fd)
		}
		if err != nil {
			return x.createError(d.path, err)
		}
	}
	return nil
}

// Overlay xattr names (see the package doc for why both).
const (
	xattrOpaqueUser    = "user.overlay.opaque"
	xattrOpaqueTrusted = "trusted.overlay.opaque"
)

func markOpaque(fd int) error {
	p := "/proc/self/fd/" + itoa(fd)
	if err := unix.Setxattr(p, xattrOpaqueUser, []byte("y"), 0); err != nil {
		return err
	}
	return unix.Setxattr(p, xattrOpaqueTrusted, []byte("y"), 0)
}

// setMeta sets owner, then mode (chown clears set-id bits), then xattrs.
// Set-id bits are kept: they are inert under the sandbox's no_new_privs
// and its nosuid lower mounts (docs/security.md).
func setMeta(fd int, hdr *tar.Header, xattrs map[string]string) error {
	if err := unix.Fchown(fd, hdr.Uid, hdr.Gid); err != nil {
		return err
	}
	if err := unix.Fchmod(fd, uint32(hdr.Mode)&0o7777); err != nil {
		return err
	}
	for k, v := range xattrs {
		if err := unix.Fsetxattr(fd, k, []byte(v), 0); err != nil {
			return err
		}
	}
	return nil
}

// entryXattrs returns the xattrs kept from an entry: user.* only. An
// overlayfs attribute in a layer (overlay.opaque, .redirect, .metacopy,
// .origin ...) would let the image rewrite how the sandbox's overlay
// resolves paths (overlay metadata injection), so it is refused; other
// namespaces (security.*, trusted.*, system.*) are dropped: capabilities
// are useless under the empty bounding set and ACLs are not id-mapped.
func entryXattrs(name string, hdr *tar.Header) (map[string]string, error) {
	var out map[string]string
	for k, v := range hdr.PAXRecords {
		key, ok := strings.CutPrefix(k, "SCHILY.xattr.")
		if !ok {
			continue
		}
		if strings.HasPrefix(key, "user.overlay.") || strings.HasPrefix(key, "trusted.overlay.") {
			return nil, refuse(errs.CodeInvalid, ErrOverlayXattr, name, quote(key))
		}
		if !strings.HasPrefix(key, "user.") || hdr.Typeflag == tar.TypeSymlink {
			continue
		}
		if len(out) >= maxXattrs || len(v) > maxXattrValue {
			return nil, refuse(errs.CodeTooLarge, ErrTooLarge, name, "extended attributes")
		}
		if out == nil {
			out = make(map[string]string)
		}
		out[key] = v
	}
	return out, nil
}

func tvs(hdr *tar.Header) []unix.Timeval {
	m := unix.NsecToTimeval(hdr.ModTime.UnixNano())
	a := m
	if !hdr.AccessTime.IsZero() {
		a = unix.NsecToTimeval(hdr.AccessTime.UnixNano())
	}
	return []unix.Timeval{a, m}
}

type fdWriter int

func (f fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(int(f), p[n:])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return n, err
		}
		n += m
	}
	return n, nil
}

func joinPath(dir, base string) string {
	if dir == "" {
		return base
	}
	return dir + "/" + base
}
