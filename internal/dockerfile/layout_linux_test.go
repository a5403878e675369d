package dockerfile_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/dockerfile/nsrunner"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
)

// TestOverlayLayoutInUserns measures what the layer store's on-disk
// form means to an overlay mounted with userxattr inside a user
// namespace over id-mapped lowers (the native backend's setup): 0/0
// character devices hide files, user.overlay.opaque hides lower
// directories, trusted.overlay.opaque alone does not (which is why the
// store writes both), and files owned by host root show as root.
func TestOverlayLayoutInUserns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	st, err := layers.Open(layers.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	lease := st.NewLease()
	defer lease.Release()
	put := func(data []byte) string {
		l, err := st.Put(context.Background(), lease, "", bytes.NewReader(data), layers.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Dir
	}
	l0 := put(busyboxBase(t))
	l1 := put(ocitest.LayerTar(t, map[string]ocitest.File{
		"o/": {Dir: true}, "o/y": {Body: "y"}, "d/": {Dir: true}, "d/x": {Body: "x"}, "w": {Body: "w"},
		"k/": {Dir: true}, "k/a": {Body: "a"},
	}))
	l2 := put(ocitest.LayerTar(t, map[string]ocitest.File{
		".wh.w": {}, "o/.wh..wh..opq": {}, "o/z": {Body: "z"}, "d/.wh.x": {},
	}))
	l3 := put(ocitest.LayerTar(t, map[string]ocitest.File{
		"k/.wh..wh..opq": {}, "k/b": {Body: "b"},
	}))
	// Leave only the trusted.* mark on l3's k.
	if err := unix.Lremovexattr(filepath.Join(l3, "k"), "user.overlay.opaque"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	upper := filepath.Join(t.TempDir(), "upper")
	os.Mkdir(upper, 0o700)
	res, err := nsrunner.Runner{}.Run(context.Background(), dockerfile.RunRequest{
		Lowers: []string{l3, l2, l1, l0}, Upper: upper, WorkDir: "/",
		Cmd: []string{"/bin/sh", "-c", "echo o=$(ls /o) d=$(ls /d) k=$(ls /k) w=$(cat /w 2>/dev/null || echo gone) owner=$(stat -c %u /bin/busybox); rm /o/z; echo done"},
		Env: []string{"PATH=/bin"}, Output: &out,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v %+v\n%s", err, res, out.String())
	}
	got := strings.TrimSpace(out.String())
	want := "o=z d= k=a b w=gone owner=0\ndone"
	if got != want {
		t.Fatalf("inside the sandbox:\n got %q\nwant %q", got, want)
	}
	// The sandbox's own delete is a 0/0 device in its upper, owned by the
	// sandbox's (shifted) root: the builder's WriteTar turns it into .wh.z.
	var s unix.Stat_t
	if err := unix.Lstat(filepath.Join(upper, "o/z"), &s); err != nil || s.Mode&unix.S_IFMT != unix.S_IFCHR || s.Rdev != 0 || int(s.Uid) != res.IDBase {
		t.Fatalf("whiteout in upper: %+v %v (id base %d)", s, err, res.IDBase)
	}
}
