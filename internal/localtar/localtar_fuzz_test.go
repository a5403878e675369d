package localtar

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtract: `paddock cp ID:/dir .` unpacks an archive made by a
// sandbox — untrusted — on the caller's machine. Whatever the archive
// holds, nothing is created or changed outside the destination (a sibling
// canary directory stays as it was), and nothing panics.
func FuzzExtract(f *testing.F) {
	mk := func(hdrs ...*tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range hdrs {
			if h.Typeflag == tar.TypeReg || h.Typeflag == 0 {
				h.Size = int64(len(h.Name))
			}
			_ = tw.WriteHeader(h)
			if h.Size > 0 {
				_, _ = tw.Write([]byte(h.Name)[:h.Size])
			}
		}
		_ = tw.Close()
		return buf.Bytes()
	}
	f.Add(mk(&tar.Header{Name: "a/b.txt", Mode: 0o644, Typeflag: tar.TypeReg}))
	f.Add(mk(&tar.Header{Name: "../canary/x", Mode: 0o644, Typeflag: tar.TypeReg}))
	f.Add(mk(&tar.Header{Name: "/abs", Mode: 0o644, Typeflag: tar.TypeReg}))
	f.Add(mk(&tar.Header{Name: "l", Linkname: "../canary", Typeflag: tar.TypeSymlink}, &tar.Header{Name: "l/x", Mode: 0o644, Typeflag: tar.TypeReg}))
	f.Add(mk(&tar.Header{Name: "h", Linkname: "../canary/keep", Typeflag: tar.TypeLink}))
	f.Add(mk(&tar.Header{Name: "d", Typeflag: tar.TypeDir, Mode: 0o755}, &tar.Header{Name: "d", Mode: 0o644, Typeflag: tar.TypeReg}))
	f.Add(mk(&tar.Header{Name: "dev", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 1}))
	f.Add(mk(&tar.Header{Name: "s", Mode: 0o4755, Typeflag: tar.TypeReg}))
	f.Add([]byte("not a tar at all"))
	f.Fuzz(func(t *testing.T, archive []byte) {
		base := t.TempDir()
		dst, canary := filepath.Join(base, "dst"), filepath.Join(base, "canary")
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(canary, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(canary, "keep"), []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = Extract(io.LimitReader(bytes.NewReader(archive), 1<<20), dst, io.Discard)
		ents, _ := os.ReadDir(base)
		if len(ents) != 2 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("something was created beside the destination: %v", names)
		}
		cents, _ := os.ReadDir(canary)
		b, _ := os.ReadFile(filepath.Join(canary, "keep"))
		if len(cents) != 1 || string(b) != "keep" {
			t.Fatalf("the canary beside the destination changed: %d entries, %q", len(cents), b)
		}
		_ = filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Type()&(os.ModeDevice|os.ModeNamedPipe|os.ModeSetuid|os.ModeSetgid) != 0 {
				t.Errorf("extracted a special file or setuid bit: %s %v", strings.TrimPrefix(p, dst), d.Type())
			}
			if err == nil && d.Type().IsRegular() {
				if fi, _ := d.Info(); fi != nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
					t.Errorf("extracted a setuid/setgid file: %s", strings.TrimPrefix(p, dst))
				}
			}
			return nil
		})
	})
}
