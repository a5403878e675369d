//go:build linux

package files

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// entry is one member of a test archive.
type entry struct {
	name, link string
	typ        byte
	body       string
	mode       int64
}

func makeTar(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: typ, Mode: mode, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if typ == tar.TypeChar {
			h.Devmajor, h.Devminor = 1, 3 // /dev/null's numbers
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// snapshot lists every path under dir with its type and size.
func snapshot(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, _ := d.Info()
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel+" "+info.Mode().String())
		return nil
	})
	sort.Strings(out)
	return out
}

// arena is a scratch tree: base/target is where archives go, base/outside
// what they must never reach (it holds a secret to link to and lists).
type arena struct{ base, target, outside string }

func newArena(t testing.TB) arena {
	t.Helper()
	base := t.TempDir()
	a := arena{base: base, target: filepath.Join(base, "target"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{a.target, a.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(a.outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	return a
}

// escapes are archives that try to reach base/outside from base/target.
func escapes(a arena) []struct {
	name    string
	entries []entry
	msg     string
	escaped string // what GNU tar -P creates outside (positive control)
} {
	return []struct {
		name    string
		entries []entry
		msg     string
		escaped string
	}{
		{"dotdot", []entry{{name: "../outside/dotdot", body: "x"}}, `".." components`, "dotdot"},
		{"absolute", []entry{{name: filepath.Join(a.outside, "abs"), body: "x"}}, "absolute", "abs"},
		{"symlink then file", []entry{{name: "link", typ: tar.TypeSymlink, link: "../outside"}, {name: "link/viarel", body: "x"}}, "outside the target", "viarel"},
		{"absolute symlink then file", []entry{{name: "alink", typ: tar.TypeSymlink, link: a.outside}, {name: "alink/viaabs", body: "x"}}, "outside the target", "viaabs"},
		{"symlink then dir", []entry{{name: "dlink", typ: tar.TypeSymlink, link: a.outside}, {name: "dlink/newdir/", typ: tar.TypeDir}}, "outside the target", "newdir"},
		{"hardlink out", []entry{{name: "hard", typ: tar.TypeLink, link: "../outside/secret"}}, "hardlink target", ""},
		{"absolute hardlink", []entry{{name: "ahard", typ: tar.TypeLink, link: filepath.Join(a.outside, "secret")}}, "hardlink target", ""},
		{"hardlink through symlink", []entry{{name: "l2", typ: tar.TypeSymlink, link: a.outside}, {name: "h2", typ: tar.TypeLink, link: "l2/secret"}}, "outside the target", ""},
		{"device node", []entry{{name: "null", typ: tar.TypeChar}}, "device node", ""},
		{"fifo", []entry{{name: "pipe", typ: tar.TypeFifo}}, "FIFO", ""},
	}
}

// TestExtractRefusesEscapes: each hostile archive is refused, and nothing
// appears outside the target. Positive control: GNU tar with -P extracts
// the same archive natively and does reach outside (or makes the device
// node / FIFO / outside hardlink).
func TestExtractRefusesEscapes(t *testing.T) {
	requireRoot(t)
	tarBin, err := exec.LookPath("tar")
	if err != nil {
		t.Skip("no tar for the positive control")
	}
	c := startFiles(t)
	for _, tc := range escapes(newArena(t)) {
		t.Run(tc.name, func(t *testing.T) {
			a := newArena(t)
			tc := escapes(a)[indexOf(escapes(a), tc.name)]
			data := makeTar(t, tc.entries...)
			before := snapshot(t, a.outside)
			_, err := c.Extract(context.Background(), guestapi.ExtractRequest{Path: a.target}, bytes.NewReader(data), int64(len(data)))
			wantCode(t, err, errs.CodeInvalid, tc.msg)
			if after := snapshot(t, a.outside); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Fatalf("the outside changed:\n%s", strings.Join(after, "\n"))
			}
			var secret unix.Stat_t
			unix.Stat(filepath.Join(a.outside, "secret"), &secret)
			if secret.Nlink != 1 {
				t.Fatalf("the outside secret gained a link (nlink %d)", secret.Nlink)
			}

			// Positive control, in a fresh arena.
			n := newArena(t)
			ntc := escapes(n)[indexOf(escapes(n), tc.name)]
			nd := makeTar(t, ntc.entries...)
			cmd := exec.Command(tarBin, "-xPf", "-", "-C", n.target)
			cmd.Stdin = bytes.NewReader(nd)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("positive control: tar -xP: %v\n%s", err, out)
			}
			switch {
			case ntc.escaped != "":
				if _, err := os.Lstat(filepath.Join(n.outside, ntc.escaped)); err != nil {
					t.Fatalf("positive control: native tar did not create outside/%s: %v", ntc.escaped, err)
				}
			case strings.Contains(tc.name, "hardlink"):
				var st unix.Stat_t
				unix.Stat(filepath.Join(n.outside, "secret"), &st)
				if st.Nlink < 2 {
					t.Fatal("positive control: native tar did not link to the outside secret")
				}
			default: // device node, FIFO
				if len(snapshot(t, n.target)) < 2 {
					t.Fatal("positive control: native tar created nothing")
				}
			}
		})
	}
}

func indexOf(list []struct {
	name    string
	entries []entry
	msg     string
	escaped string
}, name string) int {
	for i, e := range list {
		if e.name == name {
			return i
		}
	}
	return -1
}

func TestExtractRoundTrip(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	a := newArena(t)
	src := filepath.Join(a.base, "src")
	for p, body := range map[string]string{"top.txt": "top", "d/e/deep.txt": "deep", "d/empty": ""} {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(src, p), []byte(body), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("../top.txt", filepath.Join(src, "d/rel-link"))
	os.Symlink("/etc/passwd", filepath.Join(src, "abs-link"))
	os.Link(filepath.Join(src, "top.txt"), filepath.Join(src, "d/hard"))
	unix.Mkfifo(filepath.Join(src, "fifo"), 0o644) // left out of the archive
	os.Chmod(filepath.Join(src, "d/e"), 0o750)

	for _, gz := range []bool{false, true} {
		body, err := c.Archive(ctx, guestapi.ArchiveRequest{Path: src, Gzip: gz})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(body)
		body.Close()
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(a.base, "dst", map[bool]string{false: "plain", true: "gz"}[gz])
		res, err := c.Extract(ctx, guestapi.ExtractRequest{Path: dst}, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("extract (gzip %v): %v", gz, err)
		}
		if res.Files != 3 || res.Links != 1 || res.Symlinks != 2 || res.Dirs != 2 {
			t.Errorf("counts %+v", res)
		}
		want := snapshot(t, src)
		var wantNoFifo []string
		for _, w := range want {
			if !strings.HasPrefix(w, "fifo ") {
				wantNoFifo = append(wantNoFifo, w)
			}
		}
		if got := snapshot(t, dst); strings.Join(got, "\n") != strings.Join(wantNoFifo, "\n") {
			t.Fatalf("tree after round trip:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantNoFifo, "\n"))
		}
		var s1, s2 unix.Stat_t
		unix.Stat(filepath.Join(dst, "top.txt"), &s1)
		unix.Stat(filepath.Join(dst, "d/hard"), &s2)
		if s1.Ino != s2.Ino {
			t.Error("the hardlink did not survive the round trip")
		}
		if b, _ := os.ReadFile(filepath.Join(dst, "d/e/deep.txt")); string(b) != "deep" {
			t.Errorf("deep.txt = %q", b)
		}
	}
	// Archive of a single file.
	body, err := c.Archive(ctx, guestapi.ArchiveRequest{Path: filepath.Join(src, "top.txt")})
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(body)
	h, err := tr.Next()
	if err != nil || h.Name != "top.txt" {
		t.Fatalf("single-file archive: %v %v", h, err)
	}
	body.Close()
}

// TestExtractSetuidStripped: setuid/setgid bits are stripped and counted.
// Positive control: native tar -p as root keeps them.
func TestExtractSetuidStripped(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	a := newArena(t)
	data := makeTar(t, entry{name: "suid", body: "#!/bin/sh\n", mode: 0o4755}, entry{name: "sgid/", typ: tar.TypeDir, mode: 0o2775})
	res, err := c.Extract(context.Background(), guestapi.ExtractRequest{Path: a.target}, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stripped != 2 {
		t.Errorf("stripped = %d, want 2", res.Stripped)
	}
	for name, want := range map[string]os.FileMode{"suid": 0o755, "sgid": 0o775 | os.ModeDir} {
		st, err := os.Stat(filepath.Join(a.target, name))
		if err != nil || st.Mode() != want {
			t.Errorf("%s mode = %v (%v), want %v", name, st.Mode(), err, want)
		}
	}
	n := newArena(t)
	cmd := exec.Command("tar", "-xpf", "-", "-C", n.target)
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("positive control: %v %s", err, out)
	}
	if st, _ := os.Stat(filepath.Join(n.target, "suid")); st.Mode()&os.ModeSetuid == 0 {
		t.Fatal("positive control: native tar dropped setuid too")
	}
}

// TestExtractLimits: bombs and oversized archives are refused with clear
// errors; a new target directory does not appear after a refusal.
func TestExtractLimits(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	a := newArena(t)

	// A gzip bomb: 64 MiB of zeros in well under 1 MiB.
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "zeros", Size: 64 << 20, Mode: 0o644, Typeflag: tar.TypeReg})
	io.Copy(tw, io.LimitReader(zeros{}, 64<<20))
	tw.Close()
	zw.Close()
	if gz.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes compressed", gz.Len())
	}
	target := filepath.Join(a.base, "bombed")
	_, err := c.Extract(ctx, guestapi.ExtractRequest{Path: target}, bytes.NewReader(gz.Bytes()), int64(gz.Len()))
	wantCode(t, err, errs.CodeTooLarge, "compression bomb")
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("a refused archive left its new target behind: %v", err)
	}
	noTemps(t, a.base)
	// The same bomb passes with a generous ratio (it is only 64 MiB).
	if _, err := c.Extract(ctx, guestapi.ExtractRequest{Path: target, MaxRatio: 1e6}, bytes.NewReader(gz.Bytes()), int64(gz.Len())); err != nil {
		t.Fatalf("with max_ratio: %v", err)
	}

	many := make([]entry, 20)
	for i := range many {
		many[i] = entry{name: "f" + strings.Repeat("x", i), body: "x"}
	}
	data := makeTar(t, many...)
	_, err = c.Extract(ctx, guestapi.ExtractRequest{Path: filepath.Join(a.base, "many"), MaxEntries: 10}, bytes.NewReader(data), int64(len(data)))
	wantCode(t, err, errs.CodeTooLarge, "more than 10 entries")

	data = makeTar(t, entry{name: "big", body: strings.Repeat("y", 5000)})
	_, err = c.Extract(ctx, guestapi.ExtractRequest{Path: filepath.Join(a.base, "big"), MaxBytes: 4096}, bytes.NewReader(data), int64(len(data)))
	wantCode(t, err, errs.CodeTooLarge, "expands to more than 4096 bytes")

	for _, bad := range [][]byte{[]byte("not a tar at all, not at all, no"), {0x1f, 0x8b, 0, 0}, bytes.Repeat([]byte{1}, 1024)} {
		_, err = c.Extract(ctx, guestapi.ExtractRequest{Path: filepath.Join(a.base, "bad")}, bytes.NewReader(bad), int64(len(bad)))
		wantCode(t, err, errs.CodeInvalid, "")
	}
	// Existing files are replaced, never written through: a symlink in the
	// target pointing outside is replaced by the archive's file.
	if err := os.Symlink(filepath.Join(a.outside, "secret"), filepath.Join(a.target, "victim")); err != nil {
		t.Fatal(err)
	}
	data = makeTar(t, entry{name: "victim", body: "overwritten?"})
	if _, err := c.Extract(ctx, guestapi.ExtractRequest{Path: a.target}, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(a.outside, "secret")); string(b) != "secret" {
		t.Fatalf("extraction wrote through a symlink: secret = %q", b)
	}
}

// FuzzExtract: any byte stream, extracted into a target, never creates,
// changes or links anything outside it, and never panics.
func FuzzExtract(f *testing.F) {
	a := arena{outside: "/nonexistent-outside"}
	for _, tc := range escapes(a) {
		f.Add(makeTar(f, tc.entries...))
	}
	f.Add(makeTar(f, entry{name: "a/b/c", body: "x"}, entry{name: "a/l", typ: tar.TypeSymlink, link: "b"}, entry{name: "a/l/d", body: "y"},
		entry{name: "h", typ: tar.TypeLink, link: "a/b/c"}, entry{name: "./x/", typ: tar.TypeDir}))
	f.Add(makeTar(f, entry{name: "s", typ: tar.TypeSymlink, link: "/"}, entry{name: "s/etc/x", body: "x"}))
	f.Add(makeTar(f, entry{name: "s", typ: tar.TypeSymlink, link: "."}, entry{name: "s/s/s/s/f", body: "x"}))
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if os.Geteuid() != 0 {
			t.Skip("needs root")
		}
		a := newArena(t)
		if err := os.Symlink(a.outside, filepath.Join(a.target, "pre-existing-link")); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, a.outside)
		fd, err := unix.Open(a.target, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		x := newExtractor(context.Background(), fd, guestapi.ExtractRequest{MaxBytes: 8 << 20, MaxEntries: 1000})
		_ = x.run(bytes.NewReader(data))
		if after := snapshot(t, a.outside); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Fatalf("outside changed:\n%s", strings.Join(after, "\n"))
		}
		var st unix.Stat_t
		unix.Stat(filepath.Join(a.outside, "secret"), &st)
		if st.Nlink != 1 {
			t.Fatal("outside secret was linked")
		}
		if b, _ := os.ReadFile(filepath.Join(a.outside, "secret")); string(b) != "secret" {
			t.Fatal("outside secret changed")
		}
		ents, _ := os.ReadDir(a.base)
		if len(ents) != 2 {
			t.Fatalf("entries next to the target: %v", ents)
		}
	})
}

func TestTarName(t *testing.T) {
	for in, want := range map[string]string{
		"a": "a", "./a/b": "a/b", "a//b/": "a/b", ".": ".", "./": ".",
		"../a": "", "/a": "", "a/../b": "", "": "", "a\x00b": "",
	} {
		got, err := tarName(in)
		if want == "" {
			if err == nil {
				t.Errorf("tarName(%q) = %q, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("tarName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
