package layers

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

// ent describes one tar entry of a test archive.
type ent struct {
	name, link string
	typ        byte
	body       string
	mode       int64
	uid, gid   int
	size       int64 // when set, a body of size zero bytes
	xattrs     map[string]string
	major      int64
}

func mkTar(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode, Uid: e.uid, Gid: e.gid,
			ModTime: time.Unix(1700000000, 0), Format: tar.FormatPAX, Devmajor: e.major}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		var body io.Reader
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
			body = strings.NewReader(e.body)
			if e.size > 0 {
				h.Size = e.size
				body = io.LimitReader(zeros{}, e.size)
			}
		}
		for k, v := range e.xattrs {
			if h.PAXRecords == nil {
				h.PAXRecords = map[string]string{}
			}
			h.PAXRecords["SCHILY.xattr."+k] = v
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if body != nil {
			if _, err := io.Copy(tw, body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: extraction sets file owners")
	}
}

// naiveExtract is the positive control: what a careless extractor does
// (joins names, follows symlinks, applies whiteouts by deleting).
func naiveExtract(root string, data []byte) {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err != nil {
			return
		}
		p := filepath.Join(root, h.Name)
		if filepath.IsAbs(h.Name) {
			p = h.Name
		}
		dir, base := filepath.Split(p)
		switch {
		case base == whiteoutOpaque:
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				os.RemoveAll(filepath.Join(dir, e.Name()))
			}
			continue
		case strings.HasPrefix(base, whiteoutPrefix):
			os.RemoveAll(filepath.Join(dir, base[len(whiteoutPrefix):]))
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			os.Symlink(h.Linkname, p)
		case tar.TypeLink:
			t := filepath.Join(root, h.Linkname)
			if filepath.IsAbs(h.Linkname) {
				t = h.Linkname
			}
			os.Link(t, p)
		case tar.TypeChar:
			unix.Mknod(p, unix.S_IFCHR|0o600, int(unix.Mkdev(uint32(h.Devmajor), uint32(h.Devminor))))
		default:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err == nil {
				io.Copy(f, tr)
				f.Close()
			}
		}
	}
}

// TestExtractHostile runs each hostile layer twice: through a naive
// extractor, which must be fooled (the positive control: something outside
// its root changes), and through Extract, which must refuse it with its
// stable code and reason and leave the outside untouched.
func TestExtractHostile(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name   string
		ents   func(out string) []ent
		code   errs.Code
		reason error
		// escaped reports whether the outside changed.
		escaped func(out string) bool
	}{
		{"dotdot", func(out string) []ent {
			return []ent{{name: "../outside/pwned", body: "x"}}
		}, errs.CodeInvalid, ErrUnsafePath, exists("pwned")},
		{"absolute", func(out string) []ent {
			return []ent{{name: out + "/pwned", body: "x"}}
		}, errs.CodeInvalid, ErrUnsafePath, exists("pwned")},
		{"symlink-then-write", func(out string) []ent {
			return []ent{{name: "evil", typ: tar.TypeSymlink, link: out}, {name: "evil/pwned", body: "x"}}
		}, errs.CodeInvalid, ErrSymlinkPath, exists("pwned")},
		{"relative-symlink-then-write", func(out string) []ent {
			return []ent{{name: "d/evil", typ: tar.TypeSymlink, link: "../../outside"}, {name: "d/evil/pwned", body: "x"}}
		}, errs.CodeInvalid, ErrSymlinkPath, exists("pwned")},
		{"duplicate-symlink-then-file", func(out string) []ent {
			return []ent{{name: "f", typ: tar.TypeSymlink, link: out + "/victim"}, {name: "f", body: "overwritten"}}
		}, errs.CodeInvalid, ErrDuplicate, changed("victim")},
		{"hardlink-out-then-write", func(out string) []ent {
			return []ent{{name: "hl", typ: tar.TypeLink, link: out + "/victim"}, {name: "hl", body: "overwritten"}}
		}, errs.CodeInvalid, ErrHardlink, changed("victim")},
		{"hardlink-dotdot", func(out string) []ent {
			return []ent{{name: "hl", typ: tar.TypeLink, link: "../outside/victim"}, {name: "hl", body: "overwritten"}}
		}, errs.CodeInvalid, ErrHardlink, changed("victim")},
		{"whiteout-dotdot", func(out string) []ent {
			return []ent{{name: "../outside/.wh.victim"}}
		}, errs.CodeInvalid, ErrUnsafePath, gone("victim")},
		{"whiteout-through-symlink", func(out string) []ent {
			return []ent{{name: "s", typ: tar.TypeSymlink, link: out}, {name: "s/.wh.victim"}}
		}, errs.CodeInvalid, ErrSymlinkPath, gone("victim")},
		{"opaque-dotdot", func(out string) []ent {
			return []ent{{name: "../outside/.wh..wh..opq"}}
		}, errs.CodeInvalid, ErrUnsafePath, gone("victim")},
		{"opaque-through-symlink", func(out string) []ent {
			return []ent{{name: "s", typ: tar.TypeSymlink, link: out}, {name: "s/.wh..wh..opq"}}
		}, errs.CodeInvalid, ErrSymlinkPath, gone("victim")},
		{"device-node", func(out string) []ent {
			return []ent{{name: "disk", typ: tar.TypeChar, major: 1}}
		}, errs.CodeInvalid, ErrDevice, nil},
		{"overlay-redirect-xattr", func(out string) []ent {
			return []ent{{name: "d", typ: tar.TypeDir, xattrs: map[string]string{"trusted.overlay.redirect": "/etc"}}}
		}, errs.CodeInvalid, ErrOverlayXattr, nil},
		{"overlay-userxattr", func(out string) []ent {
			return []ent{{name: "d", typ: tar.TypeDir, xattrs: map[string]string{"user.overlay.opaque": "y"}}}
		}, errs.CodeInvalid, ErrOverlayXattr, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "outside")
			reset := func() {
				os.RemoveAll(out)
				os.MkdirAll(out, 0o755)
				os.WriteFile(filepath.Join(out, "victim"), []byte("original"), 0o644)
			}
			data := mkTar(t, c.ents(out)...)
			if c.escaped != nil {
				reset()
				naive := filepath.Join(tmp, "naive")
				os.MkdirAll(naive, 0o755)
				naiveExtract(naive, data)
				if !c.escaped(out) {
					t.Fatalf("positive control: the naive extractor was not fooled")
				}
			}
			reset()
			root := filepath.Join(tmp, "hard")
			os.MkdirAll(root, 0o755)
			_, err := Extract(context.Background(), bytes.NewReader(data), root, Limits{})
			if err == nil {
				t.Fatal("hostile layer accepted")
			}
			if errs.CodeOf(err) != c.code || !errors.Is(err, c.reason) {
				t.Fatalf("err = %v (code %s), want code %s reason %v", err, errs.CodeOf(err), c.code, c.reason)
			}
			if strings.Contains(errs.Public(err), root) {
				t.Fatalf("public message leaks a host path: %q", errs.Public(err))
			}
			if c.escaped != nil && c.escaped(out) {
				t.Fatal("the hardened extractor changed something outside its root")
			}
		})
	}
}

func exists(name string) func(string) bool {
	return func(out string) bool { _, err := os.Lstat(filepath.Join(out, name)); return err == nil }
}

func gone(name string) func(string) bool {
	return func(out string) bool { _, err := os.Lstat(filepath.Join(out, name)); return err != nil }
}

func changed(name string) func(string) bool {
	return func(out string) bool {
		b, _ := os.ReadFile(filepath.Join(out, name))
		return string(b) != "original"
	}
}

func TestExtractLimits(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name   string
		ents   []ent
		lim    Limits
		code   errs.Code
		reason error
	}{
		{"bytes", []ent{{name: "big", size: 2 << 20}}, Limits{MaxBytes: 1 << 20}, errs.CodeTooLarge, ErrTooLarge},
		{"bytes-summed", []ent{{name: "a", size: 600 << 10}, {name: "b", size: 600 << 10}}, Limits{MaxBytes: 1 << 20}, errs.CodeTooLarge, ErrTooLarge},
		{"entries", []ent{{name: "a"}, {name: "b"}, {name: "c"}}, Limits{MaxEntries: 2}, errs.CodeTooLarge, ErrTooMany},
		{"duplicate-file", []ent{{name: "a", body: "1"}, {name: "./a", body: "2"}}, Limits{}, errs.CodeInvalid, ErrDuplicate},
		{"duplicate-dir", []ent{{name: "d/", typ: tar.TypeDir}, {name: "d", typ: tar.TypeDir}}, Limits{}, errs.CodeInvalid, ErrDuplicate},
		{"whiteout-and-file", []ent{{name: "a", body: "1"}, {name: ".wh.a"}}, Limits{}, errs.CodeInvalid, ErrDuplicate},
		{"file-over-whiteout", []ent{{name: ".wh.a"}, {name: "a", body: "1"}}, Limits{}, errs.CodeInvalid, ErrDuplicate},
		{"hardlink-to-dir", []ent{{name: "d", typ: tar.TypeDir}, {name: "l", typ: tar.TypeLink, link: "d"}}, Limits{}, errs.CodeInvalid, ErrHardlink},
		{"hardlink-later", []ent{{name: "l", typ: tar.TypeLink, link: "f"}, {name: "f", body: "x"}}, Limits{}, errs.CodeInvalid, ErrHardlink},
		{"parent-is-file", []ent{{name: "f", body: "x"}, {name: "f/g", body: "y"}}, Limits{}, errs.CodeInvalid, ErrBadArchive},
		{"block-device", []ent{{name: "b", typ: tar.TypeBlock}}, Limits{}, errs.CodeInvalid, ErrDevice},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			_, err := Extract(context.Background(), bytes.NewReader(mkTar(t, c.ents...)), root, c.lim)
			if errs.CodeOf(err) != c.code || !errors.Is(err, c.reason) {
				t.Fatalf("err = %v (code %s), want %s / %v", err, errs.CodeOf(err), c.code, c.reason)
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		data := mkTar(t, ent{name: "a", body: strings.Repeat("x", 5000)})
		_, err := Extract(context.Background(), bytes.NewReader(data[:2000]), t.TempDir(), Limits{})
		if !errors.Is(err, ErrBadArchive) {
			t.Fatalf("err = %v, want a bad archive", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Extract(ctx, bytes.NewReader(mkTar(t, ent{name: "a"})), t.TempDir(), Limits{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want cancelled", err)
		}
	})
}

// TestExtractForm checks the overlayfs form of a well-formed layer.
func TestExtractForm(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	data := mkTar(t,
		ent{name: "./", typ: tar.TypeDir, mode: 0o755},
		ent{name: "usr/bin/tool", body: "#!/bin/sh\n", mode: 0o4755, uid: 0, gid: 0},
		ent{name: "home/user/", typ: tar.TypeDir, mode: 0o750, uid: 1000, gid: 1000},
		ent{name: "home/user/notes", body: "hi", uid: 1000, gid: 1000, xattrs: map[string]string{"user.tag": "v", "security.capability": "x"}},
		ent{name: "home/user/link", typ: tar.TypeLink, link: "home/user/notes"},
		ent{name: "etc/alt", typ: tar.TypeSymlink, link: "/etc/passwd"},
		ent{name: "etc/.wh.gone"},
		ent{name: "opt/.wh..wh..opq"},
		ent{name: "opt/kept", body: "k"},
		ent{name: "run/fifo", typ: tar.TypeFifo, mode: 0o600},
		ent{name: ".wh..wh.plnk/123.456", body: "aufs"},
	)
	st, err := Extract(context.Background(), bytes.NewReader(data), root, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(len("#!/bin/sh\n")+2+1+4)-4 {
		t.Errorf("bytes = %d", st.Bytes)
	}
	stat := func(p string) *syscall.Stat_t {
		var s syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(root, p), &s); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return &s
	}
	if s := stat("usr/bin/tool"); s.Mode&0o7777 != 0o4755 {
		t.Errorf("setuid bit lost: %o", s.Mode)
	}
	if s := stat("home/user"); s.Uid != 1000 || s.Mode&0o777 != 0o750 {
		t.Errorf("home/user: uid %d mode %o", s.Uid, s.Mode&0o777)
	}
	if s := stat("home/user/notes"); s.Nlink != 2 || s.Mtim.Sec != 1700000000 {
		t.Errorf("notes: nlink %d mtime %d", s.Nlink, s.Mtim.Sec)
	}
	if s := stat("usr"); s.Mode&0o777 != 0o755 || s.Uid != 0 {
		t.Errorf("implicit usr: %o uid %d", s.Mode&0o777, s.Uid)
	}
	if l, _ := os.Readlink(filepath.Join(root, "etc/alt")); l != "/etc/passwd" {
		t.Errorf("symlink = %q", l)
	}
	if s := stat("etc/gone"); s.Mode&unix.S_IFMT != unix.S_IFCHR || s.Rdev != 0 {
		t.Errorf("whiteout is not a 0/0 char device: mode %o rdev %d", s.Mode, s.Rdev)
	}
	for _, x := range []string{xattrOpaqueUser, xattrOpaqueTrusted} {
		buf := make([]byte, 8)
		n, err := unix.Lgetxattr(filepath.Join(root, "opt"), x, buf)
		if err != nil || string(buf[:n]) != "y" {
			t.Errorf("opt %s = %q, %v", x, buf[:n], err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "opt/kept")); err != nil {
		t.Error("an opaque directory lost its own entries")
	}
	if s := stat("run/fifo"); s.Mode&unix.S_IFMT != unix.S_IFIFO {
		t.Error("fifo not made")
	}
	buf := make([]byte, 8)
	if n, err := unix.Lgetxattr(filepath.Join(root, "home/user/notes"), "user.tag", buf); err != nil || string(buf[:n]) != "v" {
		t.Errorf("user xattr lost: %v", err)
	}
	if _, err := unix.Lgetxattr(filepath.Join(root, "home/user/notes"), "security.capability", buf); err == nil {
		t.Error("security.capability kept")
	}
	if _, err := os.Lstat(filepath.Join(root, ".wh..wh.plnk")); err == nil {
		t.Error("aufs metadata extracted")
	}
}

// TestWriteTarRoundTrip: a canonical tar extracted and written again gives
// the same bytes (so a built layer keeps its diff id), and overlay
// whiteouts and opaque marks come back as OCI markers.
func TestWriteTarRoundTrip(t *testing.T) {
	requireRoot(t)
	src := mkTar(t,
		ent{name: "etc/", typ: tar.TypeDir},
		ent{name: "etc/.wh.gone"},
		ent{name: "etc/conf", body: "c", uid: 1000, gid: 1000, xattrs: map[string]string{"user.k": "v"}},
		ent{name: "etc/conf2", typ: tar.TypeLink, link: "etc/conf"},
		ent{name: "opt/", typ: tar.TypeDir, mode: 0o700},
		ent{name: "opt/.wh..wh..opq"},
		ent{name: "opt/x", typ: tar.TypeSymlink, link: "/nowhere"},
		ent{name: "p", typ: tar.TypeFifo},
	)
	d1 := t.TempDir()
	if _, err := Extract(context.Background(), bytes.NewReader(src), d1, Limits{}); err != nil {
		t.Fatal(err)
	}
	var c1, c2 bytes.Buffer
	if err := WriteTar(&c1, d1, TarOptions{}); err != nil {
		t.Fatal(err)
	}
	d2 := t.TempDir()
	if _, err := Extract(context.Background(), bytes.NewReader(c1.Bytes()), d2, Limits{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTar(&c2, d2, TarOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c1.Bytes(), c2.Bytes()) {
		t.Fatal("canonical tar is not stable through the store")
	}
	var names []string
	tr := tar.NewReader(&c1)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	want := "etc/ etc/conf etc/conf2 etc/.wh.gone opt/ opt/.wh..wh..opq opt/x p"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("entries = %q\nwant      %q", got, want)
	}
	// Owners outside the sandbox's range are refused when shifting.
	if err := WriteTar(io.Discard, d1, TarOptions{IDBase: 100000, IDRange: 65536}); !errors.Is(err, ErrBadArchive) {
		t.Fatalf("unshiftable owner: %v", err)
	}
}
