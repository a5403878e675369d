package ocitest

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// HostTar makes a layer tar of the host directory root (regular files,
// directories and symlinks, under prefix), stopping at about max bytes of
// file content: a realistic tree of real binaries and libraries for
// benchmarks.
func HostTar(t testing.TB, root, prefix string, max int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var total int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || total >= max {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		name := filepath.ToSlash(filepath.Join(prefix, rel))
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		link := ""
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			link, _ = os.Readlink(p)
		case fi.IsDir(), fi.Mode().IsRegular():
		default:
			return nil
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return nil
		}
		h.Name, h.Uname, h.Gname, h.Uid, h.Gid = name, "", "", 0, 0
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			n, err := io.Copy(tw, f)
			f.Close()
			total += n
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	return buf.Bytes()
}
