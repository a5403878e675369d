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
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// extractLayer fills the empty writable layer at layerFD with a capture
// (CaptureFS's stream), owned by the sandbox's uids from base. It runs as
// host root before anything in the sandbox does, so every step refuses
// to be steered: each parent is resolved beneath the layer with no
// symlinks, magic links or mount crossings (openat2), and each leaf is
// made with O_EXCL/O_NOFOLLOW (path traversal, CVE-2018-15664 and tar
// "zip-slip" class — an entry under a symlink it made earlier must not
// land on the host).
func extractLayer(ctx context.Context, layerFD int, r io.Reader, base int) error {
	blobs, _ := r.(runtime.BlobOpener)
	tr := tar.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read snapshot: %w", err)
		}
		if err := extractEntry(layerFD, h, tr, base, blobs); err != nil {
			return err
		}
	}
}

func extractEntry(layerFD int, h *tar.Header, r io.Reader, base int, blobs runtime.BlobOpener) error {
	name := strings.TrimSuffix(h.Name, "/")
	if !validLayerName(name) {
		return errs.Invalid("snapshot entry %q is outside the layer", clipName(h.Name))
	}
	if h.Uid < 0 || h.Uid >= uidsPerSandbox || h.Gid < 0 || h.Gid >= uidsPerSandbox {
		return errs.Invalid("snapshot entry %q has an owner outside the sandbox", clipName(h.Name))
	}
	dir, leaf := path.Split(name)
	pfd := layerFD
	if dir != "" {
		fd, err := unix.Openat2(layerFD, strings.TrimSuffix(dir, "/"), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV})
		if err != nil {
			return fmt.Errorf("snapshot entry %s: parent: %w", clipName(name), err)
		}
		defer unix.Close(fd)
		pfd = fd
	}
	uid, gid := base+h.Uid, base+h.Gid
	mode := uint32(h.Mode & 0o7777)
	switch h.Typeflag {
	case tar.TypeDir:
		if err := unix.Mkdirat(pfd, leaf, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("snapshot entry %s: %w", clipName(name), err)
		}
		fd, err := unix.Openat(pfd, leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("snapshot entry %s: %w", clipName(name), err)
		}
		defer unix.Close(fd)
		return finish(fd, h, uid, gid, mode)
	case tar.TypeReg:
		fd, err := unix.Openat(pfd, leaf, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("snapshot entry %s: %w", clipName(name), err)
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		if key := h.PAXRecords[runtime.BlobKey]; key != "" {
			if err := copyBlob(f, h, key, blobs); err != nil {
				return err
			}
		} else if _, err := io.Copy(f, r); err != nil {
			return fmt.Errorf("snapshot entry %s: %w", clipName(name), err)
		}
		return finish(fd, h, uid, gid, mode)
	case tar.TypeLink:
		return linkEntry(layerFD, pfd, leaf, h)
	case tar.TypeSymlink:
		if err := unix.Symlinkat(h.Linkname, pfd, leaf); err != nil {
			return fmt.Errorf("snapshot entry %s: %w", clipName(name), err)
		}
		return unix.Fchownat(pfd, leaf, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
	case tar.TypeChar, tar.TypeFifo:
		kind := uint32(unix.S_IFIFO)
		if h.Typeflag == tar.TypeChar {
			if h.Devmajor != 0 || h.Devminor != 0 {
				return errs.Invalid("snapshot entry %q is a device", clipName(h.Name))
			}
			kind = unix.S_IFCHR // an overlay whiteout
		}
		if err := unix.Mknodat(pfd, leaf, kind|0o600, 0); err != nil {
			return fmt.Errorf("snapshot entry %s: %w", clipName(name), err)
		}
		fd, err := unix.Openat(pfd, leaf, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH); err != nil {
			return err
		}
		return unix.Fchmodat(pfd, leaf, mode, 0) // a device node or fifo: not followed
	}
	return errs.Invalid("snapshot entry %q has an unsupported type", clipName(h.Name))
}

// copyBlob fills dst with the out-of-band content key names
// (runtime.BlobKey): sendfile, a copy inside the kernel from the store's
// page cache into the layer (copy_file_range refuses to cross
// filesystems), falling back to a plain copy.
func copyBlob(dst *os.File, h *tar.Header, key string, blobs runtime.BlobOpener) error {
	if blobs == nil {
		return errs.Invalid("snapshot entry %q names its content out of band, which this stream cannot open", clipName(h.Name))
	}
	size, err := strconv.ParseInt(h.PAXRecords[runtime.BlobSize], 10, 64)
	if err != nil || size < 0 {
		return errs.Invalid("snapshot entry %q has a bad size", clipName(h.Name))
	}
	src, err := blobs.OpenBlob(key)
	if err != nil {
		return fmt.Errorf("snapshot entry %s: %w", clipName(h.Name), err)
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil || fi.Size() != size {
		return fmt.Errorf("snapshot entry %s: its content is not %d bytes", clipName(h.Name), size)
	}
	var off int64
	for off < size {
		n, err := unix.Sendfile(int(dst.Fd()), int(src.Fd()), &off, int(min(size-off, 1<<30)))
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			if off == 0 && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)) {
				break // no sendfile between these two: copy below
			}
			return fmt.Errorf("snapshot entry %s: %w", clipName(h.Name), err)
		}
		if n == 0 {
			return fmt.Errorf("snapshot entry %s: content ended at %d of %d bytes", clipName(h.Name), off, size)
		}
	}
	if off < size {
		if _, err := io.Copy(dst, io.NewSectionReader(src, off, size-off)); err != nil {
			return fmt.Errorf("snapshot entry %s: %w", clipName(h.Name), err)
		}
	}
	return nil
}

// linkEntry makes leaf in pfd a hard link to the regular file an earlier
// entry made (h.Linkname, relative to the layer like every entry). The
// target is resolved beneath the layer like a parent, and must be a
// regular file: a link never reaches outside the layer, nor makes a
// second name for a directory, device or symlink.
func linkEntry(layerFD, pfd int, leaf string, h *tar.Header) error {
	target := h.Linkname
	if !validLayerName(target) {
		return errs.Invalid("snapshot entry %q links outside the layer", clipName(h.Name))
	}
	tdir, tleaf := path.Split(target)
	tfd := layerFD
	if tdir != "" {
		fd, err := unix.Openat2(layerFD, strings.TrimSuffix(tdir, "/"), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV})
		if err != nil {
			return fmt.Errorf("snapshot entry %s: link target: %w", clipName(h.Name), err)
		}
		defer unix.Close(fd)
		tfd = fd
	}
	var st unix.Stat_t
	if err := unix.Fstatat(tfd, tleaf, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("snapshot entry %s: link target: %w", clipName(h.Name), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return errs.Invalid("snapshot entry %q links to something not a regular file", clipName(h.Name))
	}
	// Flags 0: a target swapped for a symlink meanwhile is linked itself,
	// never followed.
	if err := unix.Linkat(tfd, tleaf, pfd, leaf, 0); err != nil {
		return fmt.Errorf("snapshot entry %s: %w", clipName(h.Name), err)
	}
	return nil
}

// finish sets owner, then mode (chown clears set-id bits), attributes and
// time on a made entry.
func finish(fd int, h *tar.Header, uid, gid int, mode uint32) error {
	if err := unix.Fchown(fd, uid, gid); err != nil {
		return err
	}
	if err := unix.Fchmod(fd, mode); err != nil {
		return err
	}
	for k, v := range h.PAXRecords {
		name, ok := strings.CutPrefix(k, "SCHILY.xattr.")
		if !ok || !strings.HasPrefix(name, "user.") {
			continue // only what a sandbox could set itself
		}
		if err := unix.Fsetxattr(fd, name, []byte(v), 0); err != nil {
			return fmt.Errorf("snapshot entry %s: attribute %s: %w", clipName(h.Name), name, err)
		}
	}
	ts := []unix.Timespec{unix.NsecToTimespec(h.ModTime.UnixNano()), unix.NsecToTimespec(h.ModTime.UnixNano())}
	return unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH)
}

func clipName(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
