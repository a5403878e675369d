//go:build linux

package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// openRegular opens p (following symlinks) for reading, only if it is a
// regular file. The type is checked on an O_PATH descriptor, which opens
// nothing: a FIFO would block a plain open until a writer came, and opening
// a device can have side effects (a tty, a tape rewinding). The file is
// then reopened through that very descriptor, so what is read is what was
// checked, with O_NONBLOCK|O_NOCTTY as a second guard.
func openRegular(p string) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	pfd, err := openAt(unix.AT_FDCWD, p, unix.O_PATH, 0, 0)
	if err != nil {
		return nil, st, fileErr(p, err)
	}
	defer unix.Close(pfd)
	if err := guardProc(pfd, p); err != nil {
		return nil, st, err
	}
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil, st, fileErr(p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, st, notRegular(p, st.Mode)
	}
	const flags = unix.O_RDONLY | unix.O_NOCTTY | unix.O_NONBLOCK | unix.O_CLOEXEC
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), flags, 0)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		// No /proc (another backend): open by path; the check below
		// still refuses anything but the regular file we saw.
		fd, err = openAt(unix.AT_FDCWD, p, flags, 0, 0)
	}
	if err != nil {
		return nil, st, fileErr(p, err)
	}
	var st2 unix.Stat_t
	if err := unix.Fstat(fd, &st2); err != nil {
		unix.Close(fd)
		return nil, st, fileErr(p, err)
	}
	if st2.Mode&unix.S_IFMT != unix.S_IFREG || st2.Ino != st.Ino || st2.Dev != st.Dev {
		unix.Close(fd)
		return nil, st, errs.New(errs.CodeConflict, "%s changed while it was being opened", clip(p))
	}
	return os.NewFile(uintptr(fd), p), st2, nil
}

func notRegular(p string, mode uint32) error {
	if mode&unix.S_IFMT == unix.S_IFDIR {
		return errs.Invalid("%s is a directory (list it, or download it as an archive)", clip(p))
	}
	return errs.Invalid("%s is %s, not a regular file; only regular files can be read", clip(p), kindOf(mode))
}

func (f *Service) read(ctx context.Context, id user.ID, req guestapi.ReadRequest, a *rpc.Answer) error {
	p, err := cleanPath(req.Path)
	if err != nil {
		return err
	}
	if req.Offset < 0 || req.Suffix < 0 {
		return errs.Invalid("offset and suffix must not be negative")
	}
	file, st, err := openRegular(p)
	if err != nil {
		return err
	}
	defer file.Close()
	if st.Size == 0 && pseudoFS(int(file.Fd())) {
		return readPseudo(a, file, p, &st, req)
	}
	off, n := req.Offset, req.Length
	if req.Suffix > 0 {
		off = max(st.Size-req.Suffix, 0)
		n = st.Size - off
	}
	if off > st.Size {
		return &guestapi.RangeError{Size: st.Size, Err: errs.Invalid("offset %d is past the end of %s (%d bytes)", off, clip(p), st.Size)}
	}
	if n <= 0 || n > st.Size-off {
		n = st.Size - off
	}
	if err := a.Head(readInfo(&st, off, n)); err != nil {
		return nil // the host is gone
	}
	if err := sendFile(a.F, file, off, n); err != nil {
		f.logf("read %s: %v", clip(p), err)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errs.New(errs.CodeConflict, "%s shrank while it was read", clip(p))
		}
		return fileErr(p, err)
	}
	return a.End(guestapi.Empty{})
}

func readInfo(st *unix.Stat_t, off, n int64) guestapi.ReadInfo {
	return guestapi.ReadInfo{Size: st.Size, Offset: off, Length: n, Mode: modeString(st.Mode),
		MTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC()}
}

// maxPseudoRead bounds a read of a /proc or /sys file, whose size is
// unknown (stat reports 0).
const maxPseudoRead = 16 << 20

// readPseudo streams a /proc or /sys file to its end (its length is known
// only then).
func readPseudo(a *rpc.Answer, file *os.File, p string, st *unix.Stat_t, req guestapi.ReadRequest) error {
	if req.Suffix > 0 {
		return errs.Invalid("%s has no known size; a suffix range cannot be read", clip(p))
	}
	limit := int64(maxPseudoRead)
	if req.Length > 0 {
		limit = min(req.Length, limit)
	}
	info := readInfo(st, req.Offset, -1)
	info.Size = -1
	if err := a.Head(info); err != nil {
		return nil
	}
	buf := make([]byte, guestapi.FrameHeaderLen+64<<10)
	off, done := req.Offset, int64(0)
	for done < limit {
		k, err := file.ReadAt(buf[guestapi.FrameHeaderLen:guestapi.FrameHeaderLen+min(int64(len(buf)-guestapi.FrameHeaderLen), limit-done)], off)
		if k > 0 {
			if a.F.SendOwned(guestapi.FrameData, buf[:guestapi.FrameHeaderLen+k]) != nil {
				return nil
			}
			off += int64(k)
			done += int64(k)
		}
		if err != nil {
			break // the end, or a read error: what was read is the content
		}
	}
	return a.End(guestapi.Empty{})
}

// sendFile sends n bytes of file from off as data frames of up to a
// megabyte, each read into the buffer that is then written whole.
func sendFile(fw *guestapi.FrameWriter, file *os.File, off, n int64) error {
	const hl = guestapi.FrameHeaderLen
	buf := make([]byte, hl+min(n, guestapi.CopyBufferSize))
	var done int64
	for done < n {
		k := min(int64(len(buf)-hl), n-done)
		m, err := file.ReadAt(buf[hl:hl+k], off+done)
		if m > 0 {
			if werr := fw.SendOwned(guestapi.FrameData, buf[:hl+m]); werr != nil {
				return werr
			}
			done += int64(m)
		}
		if err == io.EOF && done < n {
			return io.ErrUnexpectedEOF // the file shrank
		}
		if err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

func (f *Service) write(ctx context.Context, id user.ID, req guestapi.WriteRequest, body io.Reader) (guestapi.FileInfo, error) {
	return writeFile(id, req, body)
}

// writeFile writes body to req.Path atomically: a temporary file in the
// same directory, renamed over the target only once every byte is on disk.
// A disk that fills, a cap that is reached or a client that goes away
// mid-upload leaves the old file (or no file) at the path, never a
// truncated one looking complete.
func writeFile(id user.ID, req guestapi.WriteRequest, body io.Reader) (guestapi.FileInfo, error) {
	p, err := cleanPath(req.Path)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	var mode uint32
	if req.Mode != "" {
		if mode, err = guestapi.ParseMode(req.Mode); err != nil {
			return guestapi.FileInfo{}, err
		}
	}
	meta := metaChange{}
	if len(req.Metadata) > 0 || req.ReplaceMetadata {
		meta = metaChange{ns: metaNamespace(req.MetadataNamespace), kv: req.Metadata, replace: true}
		if err := guestapi.ValidMetadata(meta.ns, meta.kv); err != nil {
			return guestapi.FileInfo{}, err
		}
	}
	if meta.owner, err = ownerOf(id, req.Owner); err != nil {
		return guestapi.FileInfo{}, err
	}
	if req.Parents {
		if err := mkdirAll(path.Dir(p), 0o755, meta.owner); err != nil {
			return guestapi.FileInfo{}, err
		}
	}
	return replaceFile(id, p, req.Mode != "", mode, meta, func(tmp *os.File) (int64, error) {
		return copyIn(tmp, body, req.MaxBytes, p)
	}, nil)
}

// metaChange is what a replacement does to the file's metadata: the new
// file keeps the old one's attributes, and with replace the namespace ns
// becomes exactly kv.
type metaChange struct {
	ns      string
	kv      map[string]string
	replace bool
	owner   *user.ID // the new file's owner (WriteRequest.Owner); nil: as above
}

// replaceFile creates a temporary file next to p, fills it with fill and
// renames it over p. An existing p keeps its mode (without setuid/setgid)
// unless setMode, its user.* attributes as meta says, and — when the
// caller is root — its owner. check, if set, runs just before the rename
// (edit uses it to detect a concurrent change).
func replaceFile(id user.ID, p string, setMode bool, mode uint32, meta metaChange, fill func(*os.File) (int64, error), check func(dirfd int, base string) error) (guestapi.FileInfo, error) {
	dirfd, base, err := openParent(p)
	if err != nil {
		if errs.CodeOf(err) == errs.CodeNotFound {
			return guestapi.FileInfo{}, errs.NotFound("%s: the parent directory does not exist (set parents to create it)", clip(p))
		}
		return guestapi.FileInfo{}, err
	}
	dirfd, base, err = resolveFinal(dirfd, base, p)
	defer unix.Close(dirfd)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	// /proc and /sys hold kernel knobs, not files: Landlock refuses writes
	// there anyway (core_pattern, sysrq-trigger); say so plainly.
	if pseudoFS(dirfd) {
		return guestapi.FileInfo{}, errs.New(errs.CodeForbidden, "%s is in /proc or /sys, a read-only area for the files API", clip(p))
	}
	var old unix.Stat_t
	exists := false
	switch err := unix.Fstatat(dirfd, base, &old, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		exists = true
		if old.Mode&unix.S_IFMT != unix.S_IFREG {
			if old.Mode&unix.S_IFMT == unix.S_IFDIR {
				return guestapi.FileInfo{}, errs.Invalid("%s is a directory", clip(p))
			}
			return guestapi.FileInfo{}, errs.Invalid("%s is %s; only regular files can be written", clip(p), kindOf(old.Mode))
		}
	case err != unix.ENOENT:
		return guestapi.FileInfo{}, fileErr(p, err)
	}
	perm := uint32(0o644)
	if exists {
		perm = old.Mode & 0o1777
	}
	if setMode {
		perm = mode
	}

	tmpName, tmp, err := createTemp(dirfd, base, p, !exists)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	done := false
	defer func() {
		tmp.Close()
		if !done {
			_ = unix.Unlinkat(dirfd, tmpName, 0)
		}
	}()
	if _, err := fill(tmp); err != nil {
		return guestapi.FileInfo{}, err
	}
	fd := int(tmp.Fd())
	if exists {
		skip := ""
		if meta.replace {
			skip = meta.ns
		}
		copyXattrs(dirfd, base, fd, skip)
	}
	if meta.replace {
		if err := writeMetadata(fd, p, meta.ns, meta.kv); err != nil {
			return guestapi.FileInfo{}, err
		}
	}
	if err := unix.Fchmod(fd, perm); err != nil {
		return guestapi.FileInfo{}, fileErr(p, err)
	}
	if exists && id.UID == 0 && (old.Uid != 0 || old.Gid != 0) && meta.owner == nil {
		if err := unix.Fchown(fd, int(old.Uid), int(old.Gid)); err != nil {
			return guestapi.FileInfo{}, fileErr(p, err)
		}
	}
	if meta.owner != nil {
		if err := unix.Fchown(fd, int(meta.owner.UID), int(meta.owner.GID)); err != nil {
			return guestapi.FileInfo{}, fileErr(p, err)
		}
	}
	// Data before name: after a crash the path holds the old or the new
	// content, never an empty file.
	if err := unix.Fsync(fd); err != nil {
		return guestapi.FileInfo{}, writeErr(p, 0, err)
	}
	if check != nil {
		if err := check(dirfd, base); err != nil {
			return guestapi.FileInfo{}, err
		}
	}
	if err := unix.Renameat(dirfd, tmpName, dirfd, base); err != nil {
		return guestapi.FileInfo{}, fileErr(p, err)
	}
	done = true
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return guestapi.FileInfo{}, fileErr(p, err)
	}
	fi := infoOf(p, &st, "")
	if meta.replace {
		if fi.Metadata, err = attrsOf(fd).metadata(meta.ns); err != nil {
			return fi, metaErr(p, err)
		}
	}
	return fi, nil
}

// createTemp makes a new, empty, private file next to base; fresh says
// base does not exist yet (the name tells watchers, see tempName).
func createTemp(dirfd int, base, p string, fresh bool) (string, *os.File, error) {
	for tries := 0; ; tries++ {
		name := tempName(base, fresh)
		fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST && tries < 8 {
			continue
		}
		if err != nil {
			return "", nil, fileErr(p, err)
		}
		return name, os.NewFile(uintptr(fd), name), nil
	}
}

// errTooBig marks a body over its cap.
var errTooBig = errors.New("over the cap")

// copyIn copies body to tmp in large chunks, at most max bytes (0: no cap).
func copyIn(tmp *os.File, body io.Reader, max int64, p string) (int64, error) {
	buf := make([]byte, guestapi.CopyBufferSize)
	var n int64
	for {
		k, rerr := body.Read(buf)
		if k > 0 {
			if max > 0 && n+int64(k) > max {
				return n, writeErr(p, n, errTooBig, max)
			}
			if _, err := tmp.Write(buf[:k]); err != nil {
				return n, writeErr(p, n, err)
			}
			n += int64(k)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, writeErr(p, n, rerr)
		}
	}
}

// writeErr words a failed upload; the target is unchanged in every case.
func writeErr(p string, n int64, err error, limit ...int64) error {
	q := clip(p)
	switch {
	case errors.Is(err, errTooBig):
		return errs.New(errs.CodeTooLarge, "%s: the upload exceeds the limit of %d bytes; the file was not changed", q, limit[0])
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return errs.Wrap(errs.CodeTooLarge, err, "%s: the sandbox's disk is full (after %d bytes); the file was not changed", q, n)
	case errors.Is(err, unix.EFBIG):
		return errs.Wrap(errs.CodeTooLarge, err, "%s: file too large; the file was not changed", q)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fileErr(p, pe.Err)
	}
	return errs.Wrap(errs.CodeInvalid, err, "%s: the upload was interrupted after %d bytes; the file was not changed", q, n)
}

func (f *Service) edit(ctx context.Context, id user.ID, r guestapi.EditRequest) (guestapi.EditResult, error) {
	p, err := cleanPath(r.Path)
	if err != nil {
		return guestapi.EditResult{}, err
	}
	lineMode := r.StartLine > 0
	if !lineMode && r.OldString == "" {
		return guestapi.EditResult{}, errs.Invalid("give old_string (and new_string), or start_line, end_line and content")
	}
	if lineMode && (r.OldString != "" || r.NewString != "" || r.ReplaceAll) {
		return guestapi.EditResult{}, errs.Invalid("old_string/new_string and start_line/end_line are alternatives; give one")
	}
	file, st, err := openRegular(p)
	if err != nil {
		return guestapi.EditResult{}, err
	}
	if st.Size > guestapi.MaxEditBytes {
		file.Close()
		return guestapi.EditResult{}, errs.New(errs.CodeTooLarge, "%s is over %d bytes; edit it with a command instead", clip(p), guestapi.MaxEditBytes)
	}
	data, err := io.ReadAll(io.LimitReader(file, guestapi.MaxEditBytes+1))
	file.Close()
	if err != nil {
		return guestapi.EditResult{}, fileErr(p, err)
	}
	var out []byte
	n := 1
	if lineMode {
		out, err = replaceLines(data, r.StartLine, r.EndLine, r.Content, p)
	} else {
		out, n, err = replaceString(data, r.OldString, r.NewString, r.ReplaceAll, p)
	}
	if err != nil {
		return guestapi.EditResult{}, err
	}
	if len(out) > guestapi.MaxEditBytes {
		return guestapi.EditResult{}, errs.New(errs.CodeTooLarge, "the edited file would be over %d bytes", guestapi.MaxEditBytes)
	}
	// Refuse to clobber a change made since the read (a workload writing
	// the file meanwhile): same inode, size and mtime, or conflict.
	unchanged := func(dirfd int, base string) error {
		var now unix.Stat_t
		if err := unix.Fstatat(dirfd, base, &now, 0); err != nil {
			return fileErr(p, err)
		}
		if now.Ino != st.Ino || now.Dev != st.Dev || now.Size != st.Size || now.Mtim != st.Mtim {
			return errs.New(errs.CodeConflict, "%s changed while it was being edited; read it again", clip(p))
		}
		return nil
	}
	fi, err := replaceFile(id, p, false, 0, metaChange{}, func(tmp *os.File) (int64, error) {
		k, err := tmp.Write(out)
		if err != nil {
			return int64(k), writeErr(p, int64(k), err)
		}
		return int64(k), nil
	}, unchanged)
	if err != nil {
		return guestapi.EditResult{}, err
	}
	return guestapi.EditResult{Replacements: n, File: fi}, nil
}

// replaceString replaces old by new: exactly once, or (all) every time.
func replaceString(data []byte, old, new string, all bool, p string) ([]byte, int, error) {
	count := bytes.Count(data, []byte(old))
	switch {
	case count == 0:
		return nil, 0, errs.NotFound("old_string does not occur in %s", clip(p))
	case count > 1 && !all:
		return nil, 0, errs.New(errs.CodeConflict, "old_string occurs %d times in %s; it must occur exactly once (add context to make it unique, or set replace_all)", count, clip(p))
	}
	return bytes.ReplaceAll(data, []byte(old), []byte(new)), count, nil
}

// replaceLines replaces lines start..end (from 1, inclusive) by content;
// end = start-1 inserts before start. A content that does not end in a
// newline gets one, unless it replaces the file's unterminated last line.
func replaceLines(data []byte, start, end int, content, p string) ([]byte, error) {
	if end < start-1 {
		return nil, errs.Invalid("end_line %d is before start_line %d", end, start)
	}
	// offsets[i] is where line i+1 starts; a final offset marks the end.
	offsets := []int{0}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			offsets = append(offsets, i+1)
		}
	}
	lines := len(offsets)
	if len(data) == 0 {
		lines = 0
	}
	if start > lines+1 {
		return nil, errs.Invalid("start_line %d is past the end of %s (%d lines)", start, clip(p), lines)
	}
	if end > lines {
		return nil, errs.Invalid("end_line %d is past the end of %s (%d lines)", end, clip(p), lines)
	}
	lineStart := func(n int) int { // byte offset of line n (1-based), or len(data)
		if n-1 < len(offsets) && n-1 < lines {
			return offsets[n-1]
		}
		return len(data)
	}
	from := lineStart(start)
	to := lineStart(end + 1)
	c := content
	// The range covers the file's last line, which had no newline.
	lastUnterminated := end >= start && end == lines && data[len(data)-1] != '\n'
	if c != "" && c[len(c)-1] != '\n' && !lastUnterminated {
		c += "\n"
	}
	if from == len(data) && len(data) > 0 && data[len(data)-1] != '\n' && c != "" {
		// Appending after an unterminated last line: end it first.
		c = "\n" + c
	}
	out := make([]byte, 0, len(data)-(to-from)+len(c))
	out = append(out, data[:from]...)
	out = append(out, c...)
	out = append(out, data[to:]...)
	return out, nil
}
