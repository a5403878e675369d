//go:build linux

package openat2

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The user-space openat2 used inside gVisor must resolve exactly like the
// kernel's: these tests run both on the host, on one tree, and compare.

// openat2Tree builds a tree with every kind of link a resolution meets and
// returns an O_PATH descriptor on its root.
func openat2Tree(t testing.TB) (string, int) {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "a", "b", "c"), 0o755))
	must(os.WriteFile(filepath.Join(root, "a", "b", "file"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(root, "top"), []byte("y"), 0o644))
	links := map[string]string{
		"a/rel":     "b",
		"a/relfile": "b/file",
		"a/abs":     filepath.Join(root, "a", "b"),
		"a/up":      "../..",
		"a/dotdot":  "..",
		"a/loop1":   "loop2",
		"a/loop2":   "loop1",
		"a/dangle":  "nowhere",
		"a/selfdir": ".",
		"dirlink":   "a",
		"proclink":  "/proc/self/fd/0",
		"procself":  "/proc/self",
		"rootlink":  "/",
	}
	for p, target := range links {
		must(os.Symlink(target, filepath.Join(root, p)))
	}
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(err)
	t.Cleanup(func() { unix.Close(fd) })
	return root, fd
}

// fdIdentity is what an opened descriptor names.
func fdIdentity(fd int) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	return strconv.FormatUint(st.Dev, 10) + ":" + strconv.FormatUint(st.Ino, 10) + ":" + strconv.FormatUint(uint64(st.Mode&unix.S_IFMT), 8), nil
}

// compare resolves p both ways and returns a description of any
// difference ("" when they agree).
func compareOpenat2(dirfd int, p string, how unix.OpenHow) string {
	kfd, kerr := unix.Openat2(dirfd, p, &how)
	// The kernel answers EAGAIN to a ".." under RESOLVE_BENEATH whenever a
	// rename ran anywhere meanwhile (a busy host); callers retry it
	// (files.openAt), and so does the comparison.
	for tries := 0; kerr == unix.EAGAIN && tries < 1000; tries++ {
		kfd, kerr = unix.Openat2(dirfd, p, &how)
	}
	efd, eerr := emulated(dirfd, p, &how)
	defer func() {
		if kfd >= 0 {
			unix.Close(kfd)
		}
		if efd >= 0 {
			unix.Close(efd)
		}
	}()
	if kerr != nil || eerr != nil {
		if !errors.Is(eerr, kerr) && !(kerr != nil && eerr != nil && equivalentErr(kerr, eerr)) {
			return "kernel: " + errString(kerr) + ", emulation: " + errString(eerr)
		}
		return ""
	}
	ki, _ := fdIdentity(kfd)
	ei, _ := fdIdentity(efd)
	if ki != ei {
		return "kernel opened " + ki + ", emulation " + ei
	}
	return ""
}

// equivalentErr accepts the few errno differences that cannot matter: both
// refuse.
func equivalentErr(k, e error) bool {
	// The kernel reports some dangling or non-directory paths as ENOENT
	// where a walk meets ENOTDIR first, and vice versa.
	a, b := k.(unix.Errno), e.(unix.Errno)
	pair := func(x, y unix.Errno) bool { return (a == x && b == y) || (a == y && b == x) }
	return pair(unix.ENOENT, unix.ENOTDIR)
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

var openat2Paths = []string{
	"a", "a/b", "a/b/file", "a/b/file/", "top", "a/rel", "a/rel/file", "a/relfile", "a/abs", "a/abs/file",
	"a/up", "a/up/top", "a/dotdot/top", "a/loop1", "a/dangle", "a/selfdir/b", "dirlink/b/c", "proclink",
	"procself", "procself/status", "rootlink", "..", "../..", "a/../top", "a/b/../../top", "a/b/c/../../../..",
	"/", "/proc/self/fd", "/proc/self/fd/0", "/proc/self/root", "/proc/self/cwd",
	"", ".", "./a//b/", "nope", "a/nope/x", "top/x",
}

var openat2Flags = []uint64{
	unix.O_PATH, unix.O_RDONLY, unix.O_RDONLY | unix.O_DIRECTORY, unix.O_PATH | unix.O_NOFOLLOW,
	unix.O_RDONLY | unix.O_NOFOLLOW, unix.O_PATH | unix.O_DIRECTORY,
}

var openat2Resolve = []uint64{
	unix.RESOLVE_NO_MAGICLINKS, unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS, unix.RESOLVE_BENEATH,
}

func TestEmulatedMatchesTheKernel(t *testing.T) {
	if _, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH}); err != nil {
		t.Skipf("the kernel has no openat2 to compare with: %v", err)
	}
	_, root := openat2Tree(t)
	for _, p := range openat2Paths {
		for _, fl := range openat2Flags {
			for _, res := range openat2Resolve {
				how := unix.OpenHow{Flags: fl | unix.O_CLOEXEC, Resolve: res}
				if d := compareOpenat2(root, p, how); d != "" {
					t.Errorf("%q flags %#x resolve %#x: %s", p, fl, res, d)
				}
			}
		}
	}
	// The refusals the agent relies on, stated (not only compared).
	for _, c := range []struct {
		p       string
		resolve uint64
		want    unix.Errno
	}{
		{"proclink", unix.RESOLVE_NO_MAGICLINKS, unix.ELOOP},
		{"/proc/self/fd/0", unix.RESOLVE_NO_MAGICLINKS, unix.ELOOP},
		{"/proc/self/root/etc", unix.RESOLVE_NO_MAGICLINKS, unix.ELOOP},
		{"a/up", unix.RESOLVE_BENEATH, unix.EXDEV},
		{"a/abs", unix.RESOLVE_BENEATH, unix.EXDEV},
		{"..", unix.RESOLVE_BENEATH, unix.EXDEV},
		{"a/loop1", 0, unix.ELOOP},
	} {
		fd, err := emulated(root, c.p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: c.resolve})
		if err != c.want {
			if fd >= 0 {
				unix.Close(fd)
			}
			t.Errorf("%q resolve %#x: %v, want %v", c.p, c.resolve, err, c.want)
		}
	}
	// Creating through the emulation lands where the kernel would.
	how := unix.OpenHow{Flags: unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_CLOEXEC, Mode: 0o600,
		Resolve: unix.RESOLVE_NO_MAGICLINKS}
	fd, err := emulated(root, "a/rel/new", &how)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	unix.Close(fd)
	if fd, err := unix.Openat(root, "a/b/new", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		t.Fatalf("created file not at a/b/new: %v", err)
	} else {
		unix.Close(fd)
	}
	// A dangling symlink is never created through (the kernel's openat2
	// would with O_CREAT; the agent never asks for that, and refusing is
	// the safe side).
	how.Flags = unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC
	if fd, err := emulated(root, "a/dangle", &how); err == nil {
		unix.Close(fd)
		if _, err := os.Stat(filepath.Join(filepathOf(t, root), "a", "nowhere")); err == nil {
			return // created the target, as the kernel does: acceptable too
		}
	}
}

func filepathOf(t testing.TB, fd int) string {
	t.Helper()
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEmulatedRefusesUnknownResolveFlags(t *testing.T) {
	_, root := openat2Tree(t)
	if _, err := emulated(root, "a", &unix.OpenHow{Flags: unix.O_PATH, Resolve: unix.RESOLVE_IN_ROOT}); err != unix.EINVAL {
		t.Fatalf("RESOLVE_IN_ROOT: %v, want EINVAL", err)
	}
}

// FuzzEmulated builds paths from the tree's names and compares the
// two resolutions (the seed corpus runs in go test).
func FuzzEmulated(f *testing.F) {
	if _, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH}); err != nil {
		f.Skipf("the kernel has no openat2 to compare with: %v", err)
	}
	for _, p := range openat2Paths {
		f.Add(p, uint8(0), uint8(0))
	}
	f.Add("a/up/a/rel/../b/file", uint8(1), uint8(1))
	f.Add("dirlink/../../x", uint8(2), uint8(2))
	_, root := openat2Tree(f)
	f.Fuzz(func(t *testing.T, p string, fi, ri uint8) {
		// thread-self names whichever OS thread resolves: the two
		// resolutions may run on different ones.
		if strings.ContainsRune(p, 0) || len(p) > 512 || strings.Contains(p, "thread-self") {
			return
		}
		how := unix.OpenHow{Flags: openat2Flags[int(fi)%len(openat2Flags)] | unix.O_CLOEXEC,
			Resolve: openat2Resolve[int(ri)%len(openat2Resolve)]}
		if d := compareOpenat2(root, p, how); d != "" {
			t.Errorf("%q flags %#x resolve %#x: %s", p, how.Flags, how.Resolve, d)
		}
	})
}
