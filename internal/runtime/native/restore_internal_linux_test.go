//go:build linux

package native

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/runtime"
)

func tarOf(t testing.TB, hs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hs {
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = 1
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			_, _ = tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	_ = tw.Close()
	return buf.Bytes()
}

// layerDir is an empty layer with a host file beside it that no entry may
// reach (the positive control writes it directly).
func layerDir(t testing.TB) (layer int, outside string) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (chown to the sandbox's uids)")
	}
	d := t.TempDir()
	outside = filepath.Join(d, "host")
	if err := os.MkdirAll(filepath.Join(d, "layer"), 0o700); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(filepath.Join(d, "layer"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd, outside
}

// Hostile captures (path traversal, CVE-2018-15664 / tar zip-slip class):
// an entry through a symlink the capture made, "..", an absolute path, a
// device, an owner outside the sandbox — each refused, nothing outside
// the layer written.
func TestExtractRefusesEscapes(t *testing.T) {
	dir := func(n string) *tar.Header { return &tar.Header{Typeflag: tar.TypeDir, Name: n, Mode: 0o755} }
	for name, hs := range map[string][]*tar.Header{
		"through a symlink": {dir("root/"), dir("root/upper/"), {Typeflag: tar.TypeSymlink, Name: "root/upper/l", Linkname: "../../.."},
			{Typeflag: tar.TypeReg, Name: "root/upper/l/host"}},
		"dot-dot":      {{Typeflag: tar.TypeReg, Name: "root/upper/../../host"}},
		"absolute":     {{Typeflag: tar.TypeReg, Name: "/host"}},
		"outside tree": {{Typeflag: tar.TypeReg, Name: "host"}},
		"work dir":     {dir("root/"), {Typeflag: tar.TypeReg, Name: "root/work/x"}},
		"device":       {dir("root/"), dir("root/upper/"), {Typeflag: tar.TypeChar, Name: "root/upper/mem", Devmajor: 1, Devminor: 1}},
		"hard link":    {dir("root/"), dir("root/upper/"), {Typeflag: tar.TypeLink, Name: "root/upper/h", Linkname: "/etc/shadow"}},
		"foreign uid":  {dir("root/"), dir("root/upper/"), {Typeflag: tar.TypeReg, Name: "root/upper/f", Uid: 70000}},
		"hard link up": {dir("root/"), dir("root/upper/"), {Typeflag: tar.TypeLink, Name: "root/upper/h", Linkname: "root/upper/../../host"}},
		"hard link to a directory": {dir("root/"), dir("root/upper/"), dir("root/upper/d/"),
			{Typeflag: tar.TypeLink, Name: "root/upper/h", Linkname: "root/upper/d"}},
		"out-of-band content without an opener": {dir("root/"), dir("root/upper/"), {Typeflag: tar.TypeReg, Name: "root/upper/f",
			PAXRecords: map[string]string{runtime.BlobKey: strings.Repeat("0", 64), runtime.BlobSize: "3"}}},
	} {
		t.Run(name, func(t *testing.T) {
			fd, outside := layerDir(t)
			if err := extractLayer(context.Background(), fd, bytes.NewReader(tarOf(t, hs...)), 200000); err == nil {
				t.Fatal("extracted")
			}
			if _, err := os.Lstat(outside); !os.IsNotExist(err) {
				t.Fatalf("an entry reached the host: %v", err)
			}
		})
	}
	// Positive control: a well-formed capture lands, owned by the sandbox.
	fd, _ := layerDir(t)
	ok := tarOf(t, dir("root/"), dir("root/upper/"), dir("root/upper/etc/"),
		&tar.Header{Typeflag: tar.TypeReg, Name: "root/upper/etc/f", Mode: 0o640, Uid: 1000, Gid: 1000, Size: 3},
		&tar.Header{Typeflag: tar.TypeSymlink, Name: "root/upper/etc/l", Linkname: "/nowhere"},
		&tar.Header{Typeflag: tar.TypeChar, Name: "root/upper/etc/gone"})
	if err := extractLayer(context.Background(), fd, bytes.NewReader(ok), 200000); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, "root/upper/etc/f", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Uid != 201000 || st.Mode&0o777 != 0o640 || st.Size != 3 {
		t.Fatalf("extracted file: %+v %v", st, err)
	}
	if err := unix.Fstatat(fd, "root/upper/etc/gone", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0 {
		t.Fatalf("whiteout: %+v %v", st, err)
	}
}

// FuzzExtract: whatever the stream, nothing lands outside the layer and
// nothing panics.
func FuzzExtract(f *testing.F) {
	f.Add(tarOf(f, &tar.Header{Typeflag: tar.TypeDir, Name: "root/", Mode: 0o755}))
	f.Add(tarOf(f, &tar.Header{Typeflag: tar.TypeSymlink, Name: "root/upper", Linkname: ".."}, &tar.Header{Typeflag: tar.TypeReg, Name: "root/upper/host"}))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fd, outside := layerDir(t)
		_ = extractLayer(context.Background(), fd, bytes.NewReader(data), 200000)
		if _, err := os.Lstat(outside); !os.IsNotExist(err) {
			t.Fatalf("an entry reached the host")
		}
		entries, _ := os.ReadDir(filepath.Dir(outside))
		if len(entries) != 1 {
			t.Fatalf("entries beside the layer: %v", entries)
		}
	})
}
