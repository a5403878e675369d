//go:build linux

package volume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzResolve: whatever path a caller sends, and whatever symlinks the
// tree holds (absolute, "..", loops), what the files calls open is inside
// the volume's root. Runs on a plain directory (no mount needed).
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"", "/", "..", "../../etc/passwd", "up/x", "abs/passwd", "loop/a", "a/../../..",
		"dot/./x", "/a//b/", "\x00", strings.Repeat("../", 300), "ok/file"} {
		f.Add(s)
	}
	root := f.TempDir()
	outside := f.TempDir()
	must := func(err error) {
		if err != nil {
			f.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "passwd"), []byte("host"), 0o600))
	must(os.MkdirAll(filepath.Join(root, "ok"), 0o755))
	must(os.WriteFile(filepath.Join(root, "ok", "file"), []byte("in"), 0o600))
	must(os.Symlink("../../../../../../..", filepath.Join(root, "up")))
	must(os.Symlink(outside, filepath.Join(root, "abs")))
	must(os.Symlink("loop", filepath.Join(root, "loop")))
	fs, err := OpenFS(root)
	must(err)
	f.Cleanup(func() { fs.Close() })
	var rootSt unix.Stat_t
	must(unix.Stat(root, &rootSt))
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := CleanPath(p)
		if err != nil {
			return
		}
		if strings.HasPrefix(rel, "/") || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("CleanPath(%q) = %q climbs", p, rel)
		}
		fd, err := fs.open(rel, unix.O_PATH)
		if err != nil {
			return
		}
		defer unix.Close(fd)
		where, err := os.Readlink("/proc/self/fd/" + itoa(fd))
		if err != nil {
			t.Fatal(err)
		}
		if where != root && !strings.HasPrefix(where, root+"/") {
			t.Fatalf("%q opened %s, outside the volume %s", p, where, root)
		}
		if _, _, err := fs.Read(rel); err == nil && strings.HasPrefix(where, outside) {
			t.Fatalf("%q read a host file", p)
		}
	})
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}
