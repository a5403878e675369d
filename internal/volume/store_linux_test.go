//go:build linux

package volume

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/errs"
)

// needRoot skips tests that need loop devices and mounts.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (loop devices, mount)")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skip("no /dev/loop-control")
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("no mkfs.ext4 (e2fsprogs)")
	}
}

// openStore opens a store in a temporary directory and unmounts whatever
// it mounted at the end.
func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, MaxSize: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unmountAll(dir) })
	return s
}

func unmountAll(dir string) {
	ms, _ := disk.Mounts()
	for i := len(ms) - 1; i >= 0; i-- {
		if strings.HasPrefix(ms[i].MountPoint, dir+"/") {
			_ = unix.Unmount(ms[i].MountPoint, unix.MNT_DETACH)
		}
	}
}

func TestCreateListGetDelete(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	s := openStore(t, dir)
	v, err := s.Create("acme", "data", 32<<20)
	if err != nil {
		t.Fatal(err)
	}
	if v.SizeBytes != 32<<20 || v.Name != "data" {
		t.Fatalf("volume %+v", v)
	}
	if _, err := s.Create("acme", "data", 32<<20); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("second create: %v, want conflict", err)
	}
	if _, err := s.Get("other", "data"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("another tenant's volume: %v, want not_found", err)
	}
	list, err := s.List("acme")
	if err != nil || len(list) != 1 {
		t.Fatalf("list %v %v", list, err)
	}
	if n, _ := s.Bytes("acme"); n != 32<<20 {
		t.Fatalf("bytes %d", n)
	}
	// The image's blocks are reserved on the host (fallocate).
	var st unix.Stat_t
	if err := unix.Stat(s.imagePath("acme", "data"), &st); err != nil || st.Blocks*512 < 32<<20 {
		t.Fatalf("image not preallocated: %d bytes allocated, %v", st.Blocks*512, err)
	}
	data, err := s.DataDir("acme", "data")
	if err != nil {
		t.Fatal(err)
	}
	var fi unix.Stat_t
	if err := unix.Stat(data, &fi); err != nil || fi.Mode&0o777 != 0o777 || fi.Uid != 0 {
		t.Fatalf("data dir mode %o uid %d: %v", fi.Mode&0o777, fi.Uid, err)
	}
	if err := s.Delete("acme", "data"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("acme", "data"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := os.Stat(s.imagePath("acme", "data")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("image left: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	needRoot(t)
	s := openStore(t, t.TempDir())
	for _, tc := range []struct {
		name string
		size int64
		code errs.Code
	}{
		{"a/b", 32 << 20, errs.CodeInvalid},
		{"..", 32 << 20, errs.CodeInvalid},
		{"a..b", 32 << 20, errs.CodeInvalid},
		{"bad\x01", 32 << 20, errs.CodeInvalid},
		{"", 32 << 20, errs.CodeInvalid},
		{strings.Repeat("a", 64), 32 << 20, errs.CodeInvalid},
		{"small", 1 << 20, errs.CodeInvalid},
		{"big", 1 << 40, errs.CodeInvalid},
	} {
		if _, err := s.Create("t", tc.name, tc.size); errs.CodeOf(err) != tc.code {
			t.Errorf("Create(%q, %d) = %v, want %s", tc.name, tc.size, err, tc.code)
		}
	}
}

// TestFullVolume: writing past the size is ENOSPC inside the volume and
// the host's filesystem loses nothing more (the image was reserved).
func TestFullVolume(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	s := openStore(t, dir)
	if _, err := s.Create("t", "small", 16<<20); err != nil {
		t.Fatal(err)
	}
	data, err := s.DataDir("t", "small")
	if err != nil {
		t.Fatal(err)
	}
	// The host's cost of the volume is its image's allocated blocks:
	// reserved at create, they must not grow as it fills. (The disk's
	// free space is shared with everything else on this machine.)
	var before unix.Stat_t
	if err := unix.Stat(s.imagePath("t", "small"), &before); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(data, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.Repeat([]byte{1}, 1<<20)
	var werr error
	var n int64
	for i := 0; i < 64 && werr == nil; i++ {
		var m int
		m, werr = f.Write(buf)
		n += int64(m)
	}
	if werr == nil {
		werr = f.Sync()
	}
	f.Close()
	if !errors.Is(werr, unix.ENOSPC) {
		t.Fatalf("write past the volume: %v after %d bytes, want ENOSPC", werr, n)
	}
	if n > 16<<20 {
		t.Fatalf("wrote %d bytes into a 16 MiB volume", n)
	}
	var after unix.Stat_t
	if err := unix.Stat(s.imagePath("t", "small"), &after); err != nil {
		t.Fatal(err)
	}
	if after.Blocks > before.Blocks || after.Size != 16<<20 {
		t.Fatalf("the image grew on the host while the volume filled: %d → %d blocks, size %d", before.Blocks, after.Blocks, after.Size)
	}
	used, _, err := s.Usage("t", "small")
	if err != nil || used < 8<<20 {
		t.Fatalf("usage %d %v", used, err)
	}
}

// TestRestart: a store reopened after its server died (mounts left
// behind) adopts them; a create cut short leaves nothing.
func TestRestart(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	s := openStore(t, dir)
	if _, err := s.Create("t", "keep", 16<<20); err != nil {
		t.Fatal(err)
	}
	data, _ := s.DataDir("t", "keep")
	if err := os.WriteFile(filepath.Join(data, "f"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A create that died after its image was renamed into place but
	// before its record, and a half-made image in tmp/.
	if err := os.WriteFile(s.imagePath("t", "half"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp", "junk"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, dir) // no Close: as after kill -9
	if !s2.mounted[key("t", "keep")] {
		t.Fatal("the mount left behind was not adopted")
	}
	d2, err := s2.DataDir("t", "keep")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d2, "f")); err != nil || string(b) != "hello" {
		t.Fatalf("read after restart: %q %v", b, err)
	}
	if _, err := os.Stat(s2.imagePath("t", "half")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("half-made volume left: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
		t.Fatalf("tmp not emptied: %v", ents)
	}
	if ms, _ := disk.Mounts(); countUnder(ms, dir) != 1 {
		t.Fatalf("mounts under the store: %d, want 1", countUnder(ms, dir))
	}
	// Unmounted (an admin, or a reboot): the next use mounts it again.
	unmountAll(dir)
	s3 := openStore(t, dir)
	d3, err := s3.DataDir("t", "keep")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d3, "f")); err != nil || string(b) != "hello" {
		t.Fatalf("read after remount: %q %v", b, err)
	}
}

func countUnder(ms []disk.Mount, dir string) int {
	n := 0
	for _, m := range ms {
		if strings.HasPrefix(m.MountPoint, dir+"/") {
			n++
		}
	}
	return n
}

// TestFiles: the files calls stay inside the volume whatever symlinks
// a sandbox planted, with a positive control that the same symlink
// leads outside when followed plainly.
func TestFiles(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	s := openStore(t, dir)
	if _, err := s.Create("t", "v", 16<<20); err != nil {
		t.Fatal(err)
	}
	data, release, err := s.Acquire("t", "v")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("t", "v"); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("delete while a files call holds it: %v", err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "escape")); err != nil {
		t.Fatal(err)
	}
	// Positive control: followed plainly, the link reaches the host.
	if b, err := os.ReadFile(filepath.Join(data, "escape", "secret")); err != nil || string(b) != "host" {
		t.Fatalf("control: %q %v", b, err)
	}
	fs, err := OpenFS(data)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	if _, _, err := fs.Read("escape/secret"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("read through an escaping symlink: %v, want not found (resolved in the volume)", err)
	}
	if _, err := fs.Write("escape/new", strings.NewReader("x"), 10, 0o644, 0, 0); err == nil {
		t.Fatal("write through an escaping symlink succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a file landed outside the volume")
	}
	if _, err := fs.Write("a/b/c.txt", strings.NewReader("content"), 100, 0o640, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	f, fi, err := fs.Read("/a/../a/b/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "content" || fi.Mode != "0640" || fi.UID != 1000 {
		t.Fatalf("read back %q %+v", b, fi)
	}
	if _, err := fs.Write("big", strings.NewReader("0123456789"), 5, 0o644, 0, 0); errs.CodeOf(err) != errs.CodeTooLarge {
		t.Fatalf("over max: %v", err)
	}
	list, err := fs.List("a/b", 0)
	if err != nil || len(list.Entries) != 1 || list.Entries[0].Name != "c.txt" {
		t.Fatalf("list %+v %v", list, err)
	}
	if _, err := fs.Mkdir("d/e", false, 0o755, 0, 0); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("mkdir without parents: %v", err)
	}
	if _, err := fs.Mkdir("d/e", true, 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Remove("a", false); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("remove non-empty dir: %v", err)
	}
	if n, err := fs.Remove("a", true); err != nil || n != 3 {
		t.Fatalf("remove -r: %d %v", n, err)
	}
	if _, err := fs.Remove("escape", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Fatal("removing the symlink touched its target")
	}
	release()
	if err := s.Delete("t", "v"); err != nil {
		t.Fatal(err)
	}
}
