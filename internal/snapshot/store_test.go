package snapshot

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

func capture(t testing.TB, files map[string]string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "root/", Mode: 0o755})
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "root/upper/" + name, Mode: 0o644, Size: int64(len(body)),
			PAXRecords: map[string]string{"SCHILY.xattr.user.x": "y"}}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(body))
	}
	_ = tw.Close()
	return &buf
}

func blobs(t *testing.T, dir string) int {
	n := 0
	_ = filepath.WalkDir(filepath.Join(dir, "blobs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

func TestPutGetDedupDelete(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m1, err := s.Put(ctx, Meta{Tenant: "t", Name: "one"}, capture(t, map[string]string{"a": "same", "b": "only1"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if m1.Bytes != 9 || m1.Files != 3 {
		t.Fatalf("manifest %+v", m1.Info())
	}
	if _, err := s.Put(ctx, Meta{Tenant: "t", Name: "two"}, capture(t, map[string]string{"a": "same", "c": "only2"}), 0); err != nil {
		t.Fatal(err)
	}
	if n := blobs(t, dir); n != 3 {
		t.Fatalf("%d blobs for 4 files of which 2 share content, want 3", n)
	}
	// Another tenant shares nothing (confirmation-of-file).
	if _, err := s.Put(ctx, Meta{Tenant: "u", Name: "one"}, capture(t, map[string]string{"a": "same"}), 0); err != nil {
		t.Fatal(err)
	}
	if n := blobs(t, dir); n != 4 {
		t.Fatalf("%d blobs, want 4 (tenants do not share)", n)
	}
	if _, err := s.Get("u", "two"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("another tenant's snapshot: %v", err)
	}
	if s.Bytes("t") != 18 {
		t.Fatalf("tenant bytes %d", s.Bytes("t"))
	}
	// Round trip.
	var out bytes.Buffer
	m, _ := s.Get("t", "one")
	if err := s.WriteTar(ctx, m, &out); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&out)
	got := map[string]string{}
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(tr)
		got[h.Name] = b.String() + "|" + h.PAXRecords["SCHILY.xattr.user.x"]
	}
	if got["root/upper/a"] != "same|y" || got["root/upper/b"] != "only1|y" {
		t.Fatalf("round trip: %q", got)
	}
	// In use: refused until released.
	_, release, err := s.Acquire("t", "one")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("t", "one"); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("delete in use: %v", err)
	}
	release()
	if err := s.Delete("t", "one"); err != nil {
		t.Fatal(err)
	}
	if n := blobs(t, dir); n != 3 {
		t.Fatalf("%d blobs after deleting one, want 3 (b gone, a shared with two)", n)
	}
	if _, err := s.Put(ctx, Meta{Tenant: "t", Name: "two"}, capture(t, nil), 0); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("a taken name: %v", err)
	}
}

func TestQuotaKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	_, err := s.Put(context.Background(), Meta{Tenant: "t", Name: "big"}, capture(t, map[string]string{"a": "12345", "b": "67890"}), 7)
	if errs.CodeOf(err) != errs.CodeLimit {
		t.Fatalf("over quota: %v", err)
	}
	if n := blobs(t, dir); n != 0 {
		t.Fatalf("%d blobs left by a refused snapshot", n)
	}
	if _, err := s.Get("t", "big"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("refused snapshot: %v", err)
	}
}

// A crash mid-snapshot leaves blobs nobody names, partial writes and
// a fork's spool: Open removes all of them and keeps every
// whole snapshot.
func TestOpenAfterCrash(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	ctx := context.Background()
	if _, err := s.Put(ctx, Meta{Tenant: "t", Name: "whole"}, capture(t, map[string]string{"a": "kept"}), 0); err != nil {
		t.Fatal(err)
	}
	// The crash: a blob written but never named, a partial write, a
	// manifest temp file.
	orphan := filepath.Join(dir, "blobs", tenantDir("t"), "ab", strings.Repeat("ab", 32))
	_ = os.MkdirAll(filepath.Dir(orphan), 0o700)
	_ = os.WriteFile(orphan, []byte("orphan"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "tmp", "blob-1"), []byte("partial"), 0o600)
	if f, err := s.Spool(); err == nil {
		f.Close()
	}
	_ = os.WriteFile(filepath.Join(dir, "manifests", tenantDir("t"), ".tmp-1"), []byte("{"), 0o600)
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("an orphan blob survived Open: %v", err)
	}
	if n := blobs(t, dir); n != 1 {
		t.Errorf("%d blobs, want the whole snapshot's 1", n)
	}
	if l, _ := s2.List("t"); len(l) != 1 || l[0].Name != "whole" {
		t.Errorf("list after crash: %+v", l)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Errorf("tmp not emptied: %v", left)
	}
	var out bytes.Buffer
	m, err := s2.Get("t", "whole")
	if err != nil || s2.WriteTar(ctx, m, &out) != nil {
		t.Fatalf("the whole snapshot after a crash: %v", err)
	}
}

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"v1.2_x-y", true}, {strings.Repeat("a", 63), true},
		{"", false}, {"a/b", false}, {"..", false}, {"a..b", false}, {".a", false}, {"-a", false},
		{"a\x00", false}, {"a\n", false}, {"a b", false}, {"é", false}, {strings.Repeat("a", 64), false},
	} {
		if err := ValidName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// FuzzValidName: whatever passes is one plain file name under the
// manifests directory.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"a", "..", "a/../b", "x\x00y", "./a", "a.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidName(name) != nil {
			return
		}
		if strings.ContainsAny(name, "/\\\x00") || strings.Contains(name, "..") || filepath.Base(name) != name || !filepath.IsLocal(name) {
			t.Fatalf("ValidName accepted %q", name)
		}
	})
}

// FuzzPut: any capture stream either becomes a snapshot whose tar reads
// back, or is refused; it never panics or leaves files behind when refused.
func FuzzPut(f *testing.F) {
	f.Add(capture(f, map[string]string{"a": "b"}).Bytes())
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		s, _ := Open(dir)
		m, err := s.Put(context.Background(), Meta{Tenant: "t", Name: "f"}, bytes.NewReader(data), 1<<20)
		if err != nil {
			if n := blobs(t, dir); n != 0 {
				t.Fatalf("refused capture left %d blobs", n)
			}
			return
		}
		var out bytes.Buffer
		if err := s.WriteTar(context.Background(), m, &out); err != nil {
			t.Fatal(err)
		}
	})
}

// A hard link is a second name of a file stored once: its bytes count
// once, it comes back as a link, and one naming no file of the capture
// is refused.
func TestPutHardLinks(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	linked := func(target string) *bytes.Buffer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "root/upper/", Mode: 0o755})
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "root/upper/a", Mode: 0o644, Size: 5})
		_, _ = tw.Write([]byte("hello"))
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeLink, Name: "root/upper/b", Linkname: target, Mode: 0o644})
		_ = tw.Close()
		return &buf
	}
	m, err := s.Put(ctx, Meta{Tenant: "t", Name: "links"}, linked("root/upper/a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bytes != 5 || m.Files != 3 || s.Bytes("t") != 5 {
		t.Fatalf("a file and its hard link: %+v, tenant bytes %d (want 5: counted once)", m.Info(), s.Bytes("t"))
	}
	var out bytes.Buffer
	if err := s.WriteTar(ctx, m, &out); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&out)
	var got []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		got = append(got, string(h.Typeflag)+h.Name+">"+h.Linkname)
	}
	if want := "5root/upper/>,0root/upper/a>,1root/upper/b>root/upper/a"; strings.Join(got, ",") != want {
		t.Fatalf("written back: %q, want %q", strings.Join(got, ","), want)
	}
	for _, target := range []string{"root/upper/nope", "root/upper/", "/etc/passwd"} {
		if _, err := s.Put(ctx, Meta{Tenant: "t", Name: "dangling"}, linked(target), 0); errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("a hard link to %q: %v, want invalid", target, err)
		}
	}
}
