// Package localtar packs and unpacks directory trees as tar on the
// caller's machine, for paddock cp. Unpacking treats the archive as
// hostile: it comes from a sandbox.
package localtar

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Write writes the tree at root as tar: names relative to root,
// symlinks as symlinks, other special files left out (with a warning).
func Write(w io.Writer, root string, warn io.Writer) error {
	tw := tar.NewWriter(w)
	buf := make([]byte, 1<<20)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		case info.IsDir(), info.Mode().IsRegular():
		default:
			fmt.Fprintf(warn, "paddock: skipping %s (not a file, directory or symlink)\n", p)
			return nil
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = rel
		if info.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uname, hdr.Gname = "", ""
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		file, err := os.Open(p)
		if err != nil {
			return err
		}
		defer file.Close()
		_, err = io.CopyBuffer(tw, io.LimitReader(file, info.Size()), buf)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// Extract unpacks r into dir without ever leaving it: every name
// goes through os.Root, which refuses "..", absolute names and symlinks
// pointing out — the archive comes from a sandbox, whose contents are not
// trusted. Files are created fresh (never written through an existing
// link); devices, FIFOs and setuid/setgid bits are dropped.
func Extract(r io.Reader, dir string, warn io.Writer) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	buf := make([]byte, 1<<20)
	type dirMode struct {
		name string
		mode os.FileMode
	}
	var dirs []dirMode
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if name == "." && hdr.Typeflag == tar.TypeDir {
			continue
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("archive entry %q escapes the destination; refused", hdr.Name)
		}
		mode := os.FileMode(hdr.Mode) & 0o777
		if hdr.Typeflag != tar.TypeDir {
			if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
				return err
			}
			if st, err := root.Lstat(name); err == nil {
				if st.IsDir() {
					return fmt.Errorf("archive entry %q: a directory of that name exists", hdr.Name)
				}
				if err := root.Remove(name); err != nil {
					return err
				}
			}
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return err
			}
			dirs = append(dirs, dirMode{name, mode})
		case tar.TypeReg:
			file, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			_, err = io.CopyBuffer(file, tr, buf)
			if err == nil {
				err = file.Chmod(mode)
			}
			if cerr := file.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			_ = root.Chtimes(name, hdr.ModTime, hdr.ModTime)
		case tar.TypeSymlink:
			if err := root.Symlink(hdr.Linkname, name); err != nil {
				return err
			}
		case tar.TypeLink:
			if err := root.Link(path.Clean(hdr.Linkname), name); err != nil {
				return err
			}
		default:
			fmt.Fprintf(warn, "paddock: skipping %s (type %q)\n", hdr.Name, string(hdr.Typeflag))
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = root.Chmod(dirs[i].name, dirs[i].mode)
	}
	return nil
}
