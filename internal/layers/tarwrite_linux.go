package layers

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

// TarOptions configure WriteTar.
type TarOptions struct {
	// IDBase is subtracted from every owner: an overlay upper directory
	// written by a sandbox whose root is host uid IDBase holds files owned
	// by IDBase+n; the layer records n. Owners outside
	// [IDBase, IDBase+IDRange) are refused.
	IDBase, IDRange int
}

// WriteTar writes the tree at dir — a store layer or an overlay upper
// directory — as a canonical OCI layer tar: entries in lexical order,
// numeric owners only, PAX times, 0/0 character devices as ".wh." files
// and opaque directories (user.overlay.opaque or trusted.overlay.opaque)
// followed by ".wh..wh..opq". The same tree always gives the same bytes,
// so a layer the builder made keeps its diff id through the store.
// Other device nodes are refused; sockets are left out.
func WriteTar(w io.Writer, dir string, o TarOptions) error {
	tw := tar.NewWriter(w)
	links := map[[2]uint64]string{}
	buf := make([]byte, 256<<10)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if rel == "." {
			if isOpaque(p) {
				return writeMarker(tw, whiteoutOpaque)
			}
			return nil
		}
		if base := filepath.Base(rel); strings.HasPrefix(base, whiteoutPrefix) {
			// Such a name in a tree would read back as a whiteout.
			return refuse(errs.CodeInvalid, ErrEntryType, name, "a file name starting with .wh. cannot be stored in a layer")
		}
		hdr := &tar.Header{
			Name:    name,
			Mode:    int64(st.Mode & 0o7777),
			ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
			Format:  tar.FormatPAX,
		}
		if hdr.Uid, err = shiftID(int(st.Uid), o); err == nil {
			hdr.Gid, err = shiftID(int(st.Gid), o)
		}
		if err != nil {
			return refuse(errs.CodeInvalid, ErrBadArchive, name, err.Error())
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
			if err := addXattrs(hdr, p); err != nil {
				return err
			}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if isOpaque(p) {
				return writeMarker(tw, name+"/"+whiteoutOpaque)
			}
			return nil
		case unix.S_IFCHR:
			if st.Rdev != 0 {
				return refuse(errs.CodeInvalid, ErrDevice, name, "")
			}
			dirName, base := splitPath(name)
			return writeMarker(tw, joinPath(dirName, whiteoutPrefix+base))
		case unix.S_IFBLK:
			return refuse(errs.CodeInvalid, ErrDevice, name, "")
		case unix.S_IFSOCK:
			return nil
		case unix.S_IFIFO:
			hdr.Typeflag = tar.TypeFifo
			return tw.WriteHeader(hdr)
		case unix.S_IFLNK:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, target, 0o777
			return tw.WriteHeader(hdr)
		case unix.S_IFREG:
			key := [2]uint64{st.Dev, st.Ino}
			if st.Nlink > 1 {
				if first, ok := links[key]; ok {
					hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
					return tw.WriteHeader(hdr)
				}
				links[key] = name
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size
			if err := addXattrs(hdr, p); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			n, err := io.CopyBuffer(tw, io.LimitReader(f, st.Size), buf)
			if err == nil && n != st.Size {
				err = fmt.Errorf("%s changed while it was read", name)
			}
			return err
		}
		return nil
	})
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return err
		}
		return errs.Wrap(errs.CodeInternal, err, "cannot write a layer archive")
	}
	return tw.Close()
}

func shiftID(id int, o TarOptions) (int, error) {
	if o.IDRange == 0 {
		return id, nil
	}
	if id < o.IDBase || id >= o.IDBase+o.IDRange {
		return 0, fmt.Errorf("owner %d is outside the sandbox's id range", id)
	}
	return id - o.IDBase, nil
}

func writeMarker(tw *tar.Writer, name string) error {
	return tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0), Format: tar.FormatPAX})
}

func isOpaque(p string) bool {
	buf := make([]byte, 4)
	for _, x := range []string{xattrOpaqueUser, xattrOpaqueTrusted} {
		if n, err := unix.Lgetxattr(p, x, buf); err == nil && n == 1 && buf[0] == 'y' {
			return true
		}
	}
	return false
}

// addXattrs records a file's user.* xattrs, leaving out overlayfs' own
// (user.overlay.origin, .impure, ... in an upper directory).
func addXattrs(hdr *tar.Header, p string) error {
	sz, err := unix.Llistxattr(p, nil)
	if err != nil || sz == 0 {
		return nil
	}
	list := make([]byte, sz)
	if sz, err = unix.Llistxattr(p, list); err != nil {
		return nil
	}
	var keys []string
	for _, k := range strings.Split(string(list[:sz]), "\x00") {
		if strings.HasPrefix(k, "user.") && !strings.HasPrefix(k, "user.overlay.") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		val := make([]byte, maxXattrValue)
		n, err := unix.Lgetxattr(p, k, val)
		if err != nil {
			continue
		}
		if hdr.PAXRecords == nil {
			hdr.PAXRecords = map[string]string{}
		}
		hdr.PAXRecords["SCHILY.xattr."+k] = string(val[:n])
	}
	return nil
}
