//go:build linux

package files

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// File metadata as extended attributes user.<namespace>.<key> (see
// guestapi.MetadataRequest). Only the user.* namespace is ever read,
// copied or written: trusted.* and security.* hold what the kernel trusts
// (security.capability grants file capabilities — a file carrying them
// would be a privilege escalation for whoever can run it).

const userPrefix = "user."

// overlayPrefix is overlayfs's own (opaque directories, redirects): never
// copied nor exposed.
const overlayPrefix = "user.overlay."

// maxXattrList is the kernel's bound on a listxattr answer (XATTR_LIST_MAX).
const maxXattrList = 64 << 10

// attrs are the attributes of one file: an open descriptor (fd >= 0), or
// dirfd/name reached through this process's own descriptor — an O_PATH
// descriptor cannot be passed to fgetxattr — and never followed (the l*
// calls).
type attrs struct {
	fd     int
	path   string
	follow bool // path is a descriptor's own magic link: follow it
}

func attrsAt(dirfd int, name string) attrs {
	return attrs{fd: -1, path: "/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + name}
}

func attrsOf(fd int) attrs { return attrs{fd: fd} }

// attrsOfPath is the file an O_PATH descriptor holds, through its link.
func attrsOfPath(pfd int) attrs {
	return attrs{fd: -1, path: "/proc/self/fd/" + strconv.Itoa(pfd), follow: true}
}

func (a attrs) list(buf []byte) (int, error) {
	switch {
	case a.fd >= 0:
		return unix.Flistxattr(a.fd, buf)
	case a.follow:
		return unix.Listxattr(a.path, buf)
	}
	return unix.Llistxattr(a.path, buf)
}

func (a attrs) get(name string, buf []byte) (int, error) {
	switch {
	case a.fd >= 0:
		return unix.Fgetxattr(a.fd, name, buf)
	case a.follow:
		return unix.Getxattr(a.path, name, buf)
	}
	return unix.Lgetxattr(a.path, name, buf)
}

// names returns the user.* attribute names (overlayfs's own excepted).
func (a attrs) names() ([]string, error) {
	buf := make([]byte, 4096)
	for {
		n, err := a.list(buf)
		if err == unix.ERANGE && len(buf) < maxXattrList {
			buf = make([]byte, maxXattrList)
			continue
		}
		if err != nil {
			return nil, err
		}
		var out []string
		for _, name := range strings.Split(string(buf[:n]), "\x00") {
			if strings.HasPrefix(name, userPrefix) && !strings.HasPrefix(name, overlayPrefix) {
				out = append(out, name)
			}
		}
		return out, nil
	}
}

// metadata returns namespace ns of the file's metadata (nil if none, or
// if the filesystem keeps no attributes there: a symlink, /proc).
func (a attrs) metadata(ns string) (map[string]string, error) {
	names, err := a.names()
	if err != nil {
		if noXattrs(err) {
			return nil, nil
		}
		return nil, err
	}
	prefix := userPrefix + ns + "."
	var out map[string]string
	buf := make([]byte, guestapi.MaxMetadataValueBytes)
	for _, name := range names {
		key, ok := strings.CutPrefix(name, prefix)
		if !ok || key == "" {
			continue
		}
		if len(out) >= guestapi.MaxMetadataKeys {
			break // set from inside past the bounds: the first ones
		}
		n, err := a.get(name, buf)
		if err == unix.ERANGE || err == unix.ENODATA {
			continue // over MaxMetadataValueBytes (set from inside), or removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]string{}
		}
		// Values set from inside may be any bytes; JSON carries text.
		out[key] = strings.ToValidUTF8(string(buf[:n]), "\uFFFD")
	}
	return out, nil
}

func noXattrs(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EPERM)
}

// writeMetadata makes the namespace ns of the open file fd's metadata
// exactly kv.
func writeMetadata(fd int, p, ns string, kv map[string]string) error {
	if err := guestapi.ValidMetadata(ns, kv); err != nil {
		return err
	}
	names, err := attrsOf(fd).names()
	if err != nil {
		if len(kv) == 0 && noXattrs(err) {
			return nil // nothing to clear where nothing can be kept
		}
		return metaErr(p, err)
	}
	prefix := userPrefix + ns + "."
	for _, name := range names {
		if key, ok := strings.CutPrefix(name, prefix); ok {
			if _, keep := kv[key]; !keep {
				if err := unix.Fremovexattr(fd, name); err != nil && err != unix.ENODATA {
					return metaErr(p, err)
				}
			}
		}
	}
	for k, v := range kv {
		if err := unix.Fsetxattr(fd, prefix+k, []byte(v), 0); err != nil {
			return metaErr(p, err)
		}
	}
	return nil
}

// copyXattrs copies the user.* attributes of dirfd/name (the file being
// replaced) onto fd, except those of namespace skip ("": none skipped).
// Best effort: what cannot be read is not copied.
func copyXattrs(dirfd int, name string, fd int, skip string) {
	src := attrsAt(dirfd, name)
	names, err := src.names()
	if err != nil {
		return
	}
	prefix := userPrefix + skip + "."
	buf := make([]byte, 64<<10)
	for _, n := range names {
		if skip != "" && strings.HasPrefix(n, prefix) {
			continue
		}
		k, err := src.get(n, buf)
		if err != nil {
			continue
		}
		_ = unix.Fsetxattr(fd, n, buf[:k], 0)
	}
}

// metaErr words a failure to keep metadata.
func metaErr(p string, err error) error {
	q := clip(p)
	switch {
	case errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.EOPNOTSUPP):
		return errs.Wrap(errs.CodeUnsupported, err, "%s: this filesystem keeps no extended attributes, so no metadata", q)
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.E2BIG), errors.Is(err, unix.EDQUOT):
		return errs.Wrap(errs.CodeTooLarge, err, "%s: no room for the metadata on the sandbox's filesystem", q)
	}
	return fileErr(p, err)
}

// metadataOf fills fi's metadata of namespace ns ("": none asked).
func metadataOf(fi *guestapi.FileInfo, a attrs, ns string) error {
	if ns == "" {
		return nil
	}
	m, err := a.metadata(ns)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOENT) {
		return nil // unreadable to this user, or gone: reported without
	}
	if err != nil {
		return metaErr(fi.Path, err)
	}
	fi.Metadata = m
	return nil
}

// askedNamespace validates the namespace a stat or list asks for.
func askedNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	return guestapi.ValidMetadataNamespace(ns)
}

func (f *Service) setMetadata(ctx context.Context, id user.ID, r guestapi.MetadataRequest) (guestapi.FileInfo, error) {
	p, err := cleanPath(r.Path)
	if err != nil {
		return guestapi.FileInfo{}, err
	}
	ns := metaNamespace(r.Namespace)
	if err := guestapi.ValidMetadata(ns, r.Metadata); err != nil {
		return guestapi.FileInfo{}, err
	}
	// A regular file or a directory, the target of a symlink: opened
	// without side effects (O_NONBLOCK|O_NOCTTY), checked as what it is.
	pfd, err := openAt(unix.AT_FDCWD, p, unix.O_PATH, 0, 0)
	if err != nil {
		return guestapi.FileInfo{}, fileErr(p, err)
	}
	defer unix.Close(pfd)
	if err := guardProc(pfd, p); err != nil {
		return guestapi.FileInfo{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return guestapi.FileInfo{}, fileErr(p, err)
	}
	var fd int
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		file, _, err := openRegular(p)
		if err != nil {
			return guestapi.FileInfo{}, err
		}
		defer file.Close()
		fd = int(file.Fd())
	case unix.S_IFDIR:
		if fd, err = openDir(p); err != nil {
			return guestapi.FileInfo{}, err
		}
		defer unix.Close(fd)
	default:
		return guestapi.FileInfo{}, errs.Invalid("%s is %s; metadata is kept on regular files and directories", clip(p), kindOf(st.Mode))
	}
	if err := writeMetadata(fd, p, ns, r.Metadata); err != nil {
		return guestapi.FileInfo{}, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return guestapi.FileInfo{}, fileErr(p, err)
	}
	fi := infoOf(p, &st, "")
	m, err := attrsOf(fd).metadata(ns)
	if err != nil {
		return guestapi.FileInfo{}, metaErr(p, err)
	}
	fi.Metadata = m
	return fi, nil
}

func metaNamespace(ns string) string {
	if ns == "" {
		return guestapi.DefaultMetadataNamespace
	}
	return ns
}
