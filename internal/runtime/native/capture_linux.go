//go:build linux

package native

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// The writable layer holds one directory per overlay of the sandbox
// ("root" for /, "o<N>" for the template's further overlays), each with
// the overlay's upper and work directories. A capture is the upper trees
// only: work is overlayfs's scratch space and is made anew by the guest.
var layerTopRE = regexp.MustCompile(`^(root|o[0-9]{1,2})$`)

// Bounds of a capture walk, so a hostile tree cannot exhaust the server.
const (
	maxCaptureDepth = 256      // nested directories (each holds an fd while walked)
	maxXattrBytes   = 64 << 10 // one entry's user.* attributes
)

// layerState is an instance's hold on its writable layer.
type layerState struct {
	f       *os.File            // O_PATH on the layer's root; nil after a restart
	restore runtime.LayerSource // what the layer starts with (Config.Layer)
}

// RestoresFS implements runtime.FSRestorer.
func (b *Backend) RestoresFS() bool { return true }

// prepareLayer runs once the writable layer exists and before the guest
// reads its config: it keeps a descriptor on the layer (for CaptureFS) and
// fills it from inst.restore, if set. layerFD is the O_PATH descriptor
// opened in the sandbox's mount namespace.
func (b *Backend) prepareLayer(ctx context.Context, inst *instance, layerFD int) error {
	fd, err := unix.FcntlInt(uintptr(layerFD), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return fmt.Errorf("keep layer: %w", err)
	}
	inst.ls.f = os.NewFile(uintptr(fd), "layer")
	if inst.ls.restore == nil {
		return nil
	}
	start := time.Now()
	rc, err := inst.ls.restore(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := extractLayer(ctx, fd, rc, inst.uid); err != nil {
		if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
			return errs.Wrap(errs.CodeInvalid, err, "the snapshot does not fit in the sandbox's disk")
		}
		return fmt.Errorf("restore layer: %w", err)
	}
	inst.ph.note("restore " + time.Since(start).Round(time.Microsecond).String())
	return nil
}

// reopenLayer gives a reattached instance back its descriptor on the
// writable layer, so that it can be captured (snapshot, fork) as before
// the restart. A disk-store layer is a host directory, opened by its
// path. A tmpfs layer lives only in the sandbox's mount namespace,
// detached from every path by its pivot_root: the agent holds a
// descriptor on it for this (guestapi.Ready.LayerFD), copied here with
// pidfd_getfd. What the agent hands over is checked to be a directory on
// a tmpfs owned by the sandbox's root — the layer's shape — and a capture
// reads beneath it only what the sandbox itself could: an agent that
// lies gains nothing.
func (b *Backend) reopenLayer(inst *instance) error {
	var fd int
	if b.o.Disk != nil {
		l, err := b.o.Disk.Get(inst.id)
		if err != nil {
			return err
		}
		if fd, err = unix.Open(l.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
			return err
		}
	} else {
		if inst.guestLayer <= 0 {
			return errors.New("its agent holds no descriptor on the layer (started by an older server)")
		}
		var err error
		if fd, err = unix.PidfdGetfd(inst.pidfd, inst.guestLayer, 0); err != nil {
			return fmt.Errorf("copy the agent's layer descriptor: %w", err)
		}
		var fs unix.Statfs_t
		var st unix.Stat_t
		if err := unix.Fstatfs(fd, &fs); err != nil || fs.Type != unix.TMPFS_MAGIC {
			unix.Close(fd)
			return errors.New("the agent's layer descriptor is not on a tmpfs")
		}
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != inst.uid {
			unix.Close(fd)
			return errors.New("the agent's layer descriptor is not the sandbox's layer")
		}
	}
	inst.ls.f = os.NewFile(uintptr(fd), "layer")
	return nil
}

// closeLayer drops the descriptor prepareLayer kept (it pins the layer's
// tmpfs in memory).
func (i *instance) closeLayer() {
	if i.ls.f != nil {
		i.ls.f.Close()
		i.ls.f = nil
	}
}

// CaptureFS implements runtime.FSCapturer. The caller has frozen the
// sandbox, so nothing changes the tree while it is read; the walk still
// goes only through directory descriptors with O_NOFOLLOW (symlink
// traversal, CVE-2018-15664 class: a file swapped for a link must never
// make the server read a host file).
func (i *instance) CaptureFS(ctx context.Context, w io.Writer) error {
	if i.ls.f == nil {
		return errs.New(errs.CodeUnsupported, "this sandbox's files cannot be captured (snapshot, fork): it was reattached after a server restart and its writable layer could not be reached again (its agent predates this server, or did not hand it over); sandboxes created since can be")
	}
	root := int(i.ls.f.Fd())
	tw := tar.NewWriter(w)
	names, err := readNames(root)
	if err != nil {
		return err
	}
	c := &capture{ctx: ctx, tw: tw, base: uint32(i.uid), links: map[fileID]string{}}
	for _, top := range names {
		if !layerTopRE.MatchString(top) {
			continue
		}
		up, err := unix.Openat2(root, top+"/upper", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV})
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open layer %s: %w", top, err)
		}
		err = c.header(root, top, top+"/")
		if err == nil {
			err = c.dirEntry(up, top+"/upper/")
		}
		if err == nil {
			err = c.walk(up, top+"/upper/", 1)
		}
		unix.Close(up)
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

type capture struct {
	ctx  context.Context
	tw   *tar.Writer
	base uint32
	// links names the first entry of each regular file with more than one
	// link: its other names are captured as hard links to it (a tar
	// TypeLink, no content), so a restore links them again and the
	// content is stored and counted once.
	links map[fileID]string
}

// fileID is an inode of the layer.
type fileID struct{ dev, ino uint64 }

func readNames(fd int) ([]string, error) {
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), "dir")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// rel maps a host uid of the layer to the sandbox's own numbering.
func (c *capture) rel(id uint32) int {
	if id < c.base || id-c.base >= uidsPerSandbox {
		return 65534 // not the sandbox's: nobody
	}
	return int(id - c.base)
}

// header writes the directory entry name (relative to the layer) for the
// directory top in dir fd.
func (c *capture) header(dirfd int, leaf, name string) error {
	fd, err := unix.Openat(dirfd, leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return c.dirEntry(fd, name)
}

func (c *capture) dirEntry(fd int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	h := c.hdr(&st, name, tar.TypeDir)
	if err := c.xattrs(fd, h); err != nil {
		return err
	}
	return c.tw.WriteHeader(h)
}

func (c *capture) hdr(st *unix.Stat_t, name string, typ byte) *tar.Header {
	return &tar.Header{Typeflag: typ, Name: name, Mode: int64(st.Mode & 0o7777), Uid: c.rel(st.Uid), Gid: c.rel(st.Gid),
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec), Format: tar.FormatPAX}
}

// xattrs copies fd's user.* attributes (overlayfs keeps its opaque marks
// there when mounted with userxattr) into h.
func (c *capture) xattrs(fd int, h *tar.Header) error {
	buf := make([]byte, 4096)
	n, err := unix.Flistxattr(fd, buf)
	if errors.Is(err, unix.ERANGE) {
		buf = make([]byte, maxXattrBytes)
		n, err = unix.Flistxattr(fd, buf)
	}
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		return fmt.Errorf("%s: list attributes: %w", h.Name, err)
	}
	total := 0
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if !strings.HasPrefix(name, "user.") {
			continue
		}
		val := make([]byte, maxXattrBytes)
		m, err := unix.Fgetxattr(fd, name, val)
		if err != nil {
			continue // removed meanwhile, or too large: not ours to keep
		}
		if total += len(name) + m; total > maxXattrBytes {
			return fmt.Errorf("%s: extended attributes over %d bytes", h.Name, maxXattrBytes)
		}
		if h.PAXRecords == nil {
			h.PAXRecords = map[string]string{}
		}
		h.PAXRecords["SCHILY.xattr."+name] = string(val[:m])
	}
	return nil
}

func (c *capture) walk(dirfd int, prefix string, depth int) error {
	if depth > maxCaptureDepth {
		return errs.Invalid("the sandbox's files nest deeper than %d directories", maxCaptureDepth)
	}
	names, err := readNames(dirfd)
	if err != nil {
		return fmt.Errorf("read %s: %w", prefix, err)
	}
	for _, n := range names {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if err := c.entry(dirfd, n, prefix+n, depth); err != nil {
			return err
		}
	}
	return nil
}

func (c *capture) entry(dirfd int, leaf, name string, depth int) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, leaf, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("stat %s: %w", name, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fd, err := unix.Openat(dirfd, leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		defer unix.Close(fd)
		if err := c.dirEntry(fd, name+"/"); err != nil {
			return err
		}
		return c.walk(fd, name+"/", depth+1)
	case unix.S_IFREG:
		if st.Nlink > 1 {
			id := fileID{uint64(st.Dev), st.Ino}
			if first, ok := c.links[id]; ok {
				h := c.hdr(&st, name, tar.TypeLink)
				h.Linkname = first
				return c.tw.WriteHeader(h)
			}
			c.links[id] = name
		}
		fd, err := unix.Openat(dirfd, leaf, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		h := c.hdr(&st, name, tar.TypeReg)
		h.Size = st.Size
		if err := c.xattrs(fd, h); err != nil {
			return err
		}
		if err := c.tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.CopyN(c.tw, f, st.Size); err != nil {
			return fmt.Errorf("read %s: %w", name, err) // shorter than its stat: not frozen?
		}
		return nil
	case unix.S_IFLNK:
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dirfd, leaf, buf)
		if err != nil {
			return fmt.Errorf("read link %s: %w", name, err)
		}
		h := c.hdr(&st, name, tar.TypeSymlink)
		h.Linkname = string(buf[:n])
		return c.tw.WriteHeader(h)
	case unix.S_IFCHR:
		if st.Rdev != 0 {
			return nil // only overlay whiteouts (0/0) can exist in a layer
		}
		return c.tw.WriteHeader(c.hdr(&st, name, tar.TypeChar))
	case unix.S_IFIFO:
		return c.tw.WriteHeader(c.hdr(&st, name, tar.TypeFifo))
	}
	return nil // sockets: not files anyone can restore
}

// validLayerName reports whether name (a capture entry, without a
// trailing slash) names something inside a layer's upper tree, or the
// tree's own directories.
func validLayerName(name string) bool {
	if name == "" || strings.ContainsRune(name, 0) || !path.IsAbs("/"+name) || path.Clean(name) != name || !isLocal(name) {
		return false
	}
	top, rest, _ := strings.Cut(name, "/")
	if !layerTopRE.MatchString(top) {
		return false
	}
	return rest == "" || rest == "upper" || strings.HasPrefix(rest, "upper/")
}

func isLocal(name string) bool {
	for _, el := range strings.Split(name, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}
