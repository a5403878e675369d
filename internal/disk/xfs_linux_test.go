//go:build linux

package disk

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

const mib = 1 << 20

func projectOf(t *testing.T, dir string) (projid uint32, inherit bool) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	fa, err := getFsxattr(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fa.Projid, fa.Xflags&fsXflagProjinherit != 0
}

// waitDrained waits until XFS has finished freeing the inodes of project
// pid (it does so in the background after unlink).
func waitDrained(t *testing.T, s *xfsStore, pid uint32) {
	t.Helper()
	waitFor(t, fmt.Sprintf("project %d to drain", pid), func() bool {
		var sfs unix.Statfs_t
		_ = unix.Statfs(s.mnt, &sfs)
		s.mu.Lock()
		u, err := s.q.get(pid)
		s.mu.Unlock()
		return err == nil && u.Inodes == 0 && u.Bytes == 0
	})
}

func TestXFSOpenReopenAndCrash(t *testing.T) {
	requireXFS(t)
	dir := storeDir(t)
	s := openTestXFS(t, dir)
	if s.Kind() != "xfs" {
		t.Fatalf("Kind = %q", s.Kind())
	}
	ms := mountsAt(t, s.mnt)
	if len(ms) != 1 || ms[0].FSType != "xfs" || !hasOpt(ms[0].SuperOpts, s.cfg.superOpt) {
		t.Fatalf("mounts at %s: %+v", s.mnt, ms)
	}
	if !hasOpt(ms[0].MountOpts, "nosuid") || !hasOpt(ms[0].MountOpts, "nodev") {
		t.Errorf("mount options %q lack nosuid,nodev", ms[0].MountOpts)
	}
	var st unix.Stat_t
	if err := unix.Stat(s.image, &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != MinImageSize || st.Blocks*512 >= st.Size {
		t.Errorf("image: size %d, allocated %d: want a sparse %d-byte file", st.Size, st.Blocks*512, MinImageSize)
	}
	l, err := s.Create("a", 16*mib, 1000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	mustWriteFile(t, filepath.Join(l.Dir, "keep"), 4096)
	pid, _ := projectOf(t, l.Dir)

	// Close unmounts, and the autoclear loop device detaches itself.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if isMounted(t, s.mnt) {
		t.Fatal("still mounted after Close")
	}
	waitFor(t, "loop device to detach", func() bool { return len(loopDevsFor(s.image)) == 0 })
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Get("a"); !errors.Is(err, errs.ErrUnavailable) {
		t.Errorf("Get after Close: %v, want unavailable", err)
	}

	// Reopen: the image is mounted again (no mkfs) and the layer is back.
	s2 := openTestXFS(t, dir)
	l2, err := s2.Get("a")
	if err != nil {
		t.Fatalf("Get after reopen: %v", err)
	}
	if _, err := os.Stat(filepath.Join(l2.Dir, "keep")); err != nil {
		t.Fatalf("layer content lost across reopen: %v", err)
	}
	if p, _ := projectOf(t, l2.Dir); p != pid || s2.records["a"] != pid {
		t.Fatalf("project id %d / record %d after reopen, want %d", p, s2.records["a"], pid)
	}

	// Crash: the process dies with the mount in place (only its fds go).
	s2.closeFds()
	if !isMounted(t, s2.mnt) {
		t.Fatal("crash simulation lost the mount")
	}
	s3 := openTestXFS(t, dir)
	if n := len(mountsAt(t, s3.mnt)); n != 1 {
		t.Fatalf("%d mounts at %s after reopening over a live mount, want the old one reused", n, s3.mnt)
	}
	if _, err := s3.Get("a"); err != nil {
		t.Fatalf("Get after crash: %v", err)
	}
	u, err := s3.Usage("a")
	if err != nil || u.BytesLimit != 16*mib || (realQuota(t) && u.Inodes != 2) {
		t.Fatalf("Usage after crash = %+v, %v", u, err)
	}
	if err := s3.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "loop device to detach", func() bool { return len(loopDevsFor(s3.image)) == 0 })
}

// A mount at Dir/mnt that is not our image must be refused, not reused
// (someone could otherwise hand us a filesystem without quotas).
func TestXFSRefusesForeignMount(t *testing.T) {
	requireXFS(t)
	dir := storeDir(t)
	// Positive control: the directory makes a working store.
	s := openTestXFS(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", s.mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	if s2, err := openXFS(Options{Dir: dir}, s.cfg); err == nil {
		s2.Close()
		t.Fatal("OpenXFS reused a foreign tmpfs mount")
	} else if !strings.Contains(err.Error(), "not our xfs image") {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := unix.Unmount(s.mnt, 0); err != nil {
		t.Fatal(err)
	}

	// Our own image, but a bind mount of a directory inside it rather than
	// its root, is refused too.
	s3 := openTestXFS(t, dir)
	sub := filepath.Join(t.TempDir(), "sub")
	must(t, os.Mkdir(sub, 0o700))
	if _, err := s3.Create("inner", mib, 10, 0, 0); err != nil {
		t.Fatal(err)
	}
	must(t, unix.Mount(s3.path("inner"), sub, "", unix.MS_BIND, ""))
	must(t, s3.Close())
	must(t, unix.Mount(sub, s3.mnt, "", unix.MS_BIND, ""))
	must(t, unix.Unmount(sub, unix.MNT_DETACH))
	if s4, err := openXFS(Options{Dir: dir}, s3.cfg); err == nil {
		s4.Close()
		t.Fatal("OpenXFS reused a bind mount of a layer as the store root")
	} else if !strings.Contains(err.Error(), "bind mount") {
		t.Fatalf("unexpected error: %v", err)
	}
}

func TestXFSQuotaENOSPC(t *testing.T) {
	requireXFSQuota(t)
	s := openTestXFS(t, storeDir(t))
	const quota = 4 * mib
	full, err := s.Create("full", quota, 1000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Create("other", quota, 1000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	viaDD, err := s.Create("dd", quota, 1000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	if p, inherit := projectOf(t, full.Dir); p == 0 || !inherit {
		t.Fatalf("layer project %d inherit %v", p, inherit)
	}
	var st unix.Stat_t
	if err := unix.Lstat(full.Dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != sandboxUID || st.Gid != sandboxUID || st.Mode&0o7777 != 0o700 {
		t.Fatalf("layer dir owner %d:%d mode %o", st.Uid, st.Gid, st.Mode&0o7777)
	}

	// Positive control: outside any layer the same writer writes twice the
	// quota without trouble.
	outside := t.TempDir()
	if err := os.Chown(outside, sandboxUID, sandboxUID); err != nil {
		t.Fatal(err)
	}
	storeDirTraversable(t, outside)
	if r := runHelper(t, sandboxUID, "write", filepath.Join(outside, "big"), fmt.Sprint(2*quota)); r.errno != "none" || r.n != 2*quota {
		t.Fatalf("write outside layers: %+v", r)
	}

	r := runHelper(t, sandboxUID, "write", filepath.Join(full.Dir, "big"), fmt.Sprint(2*quota))
	if r.errno != "ENOSPC" {
		t.Fatalf("write past the quota: %+v, want ENOSPC", r)
	}
	if r.n > quota || r.n < quota/2 {
		t.Fatalf("wrote %d bytes before ENOSPC, quota %d", r.n, quota)
	}
	t.Logf("wrote %d of %d quota bytes before ENOSPC", r.n, quota)

	// dd reports the same ENOSPC.
	cmd := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(viaDD.Dir, "dd"), "bs=64k", fmt.Sprint("count=", 2*quota/(64<<10)))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: sandboxUID, Gid: sandboxUID}}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "No space left on device") {
		t.Fatalf("dd past the quota: err %v, output %s", err, out)
	}

	// Another layer is unaffected by the full one.
	if r := runHelper(t, sandboxUID, "write", filepath.Join(other.Dir, "f"), fmt.Sprint(quota/2)); r.errno != "none" {
		t.Fatalf("write to a second layer: %+v", r)
	}
	// And so is the rest of the image (root-owned space outside layers).
	mustWriteFile(t, filepath.Join(s.mnt, projectsName, "..", "root-file"), 2*quota)
	os.Remove(filepath.Join(s.mnt, "root-file"))
}

func storeDirTraversable(t *testing.T, d string) {
	t.Helper()
	for p := filepath.Dir(d); p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
}

func TestXFSInodeQuota(t *testing.T) {
	requireXFSQuota(t)
	s := openTestXFS(t, storeDir(t))
	const inodes = 50
	l, err := s.Create("few", 16*mib, inodes, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	r := runHelper(t, sandboxUID, "files", l.Dir, "1000")
	if r.errno != "ENOSPC" {
		t.Fatalf("creating files past the inode quota: %+v, want ENOSPC", r)
	}
	// The layer directory itself is one of the project's inodes.
	if r.n != inodes-1 {
		t.Fatalf("created %d files, want %d", r.n, inodes-1)
	}
	u, err := s.Usage("few")
	if err != nil || u.Inodes != inodes || u.InodesLimit != inodes {
		t.Fatalf("Usage = %+v, %v", u, err)
	}
	// Positive control: a second layer still creates files.
	l2, err := s.Create("more", 16*mib, 1000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	if r := runHelper(t, sandboxUID, "files", l2.Dir, "100"); r.errno != "none" || r.n != 100 {
		t.Fatalf("second layer: %+v", r)
	}
}

func TestXFSUsage(t *testing.T) {
	requireXFSQuota(t)
	s := openTestXFS(t, storeDir(t))
	l, err := s.Create("u", 64*mib, 1000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Usage("u")
	if err != nil {
		t.Fatal(err)
	}
	if u != (Usage{Bytes: 0, Inodes: 1, BytesLimit: 64 * mib, InodesLimit: 1000}) {
		t.Fatalf("empty layer Usage = %+v", u)
	}
	const written = 3 * mib
	if r := runHelper(t, sandboxUID, "write", filepath.Join(l.Dir, "data"), fmt.Sprint(written)); r.errno != "none" {
		t.Fatal(r)
	}
	u, err = s.Usage("u")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after writing %d bytes: %+v", written, u)
	if u.Bytes < written || u.Bytes > written+256<<10 || u.Inodes != 2 {
		t.Fatalf("Usage = %+v after writing %d bytes in one file", u, written)
	}
	if _, err := s.Usage("nope"); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("Usage of a missing layer: %v", err)
	}
}

func TestXFSRemoveKeepsSymlinkTargets(t *testing.T) {
	requireXFS(t)
	s := openTestXFS(t, storeDir(t))
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	mustWriteFile(t, secret, 10)
	l, err := s.Create("links", 16*mib, 1000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(l.Dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, link := range []struct{ target, at string }{
		{outside, filepath.Join(l.Dir, "dirlink")},
		{secret, filepath.Join(l.Dir, "filelink")},
		{outside, filepath.Join(sub, "nested")},
		{"/", filepath.Join(sub, "root")},
	} {
		if err := os.Symlink(link.target, link.at); err != nil {
			t.Fatal(err)
		}
	}
	// Positive control: through the layer, the links do reach the outside.
	if _, err := os.Stat(filepath.Join(l.Dir, "dirlink", "secret")); err != nil {
		t.Fatalf("planted link does not resolve: %v", err)
	}
	if err := s.Remove("links"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("Remove followed a symlink out of the layer: %v", err)
	}
	if _, err := os.Lstat(l.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("layer still there: %v", err)
	}
	if err := s.Remove("links"); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
}

// A bind mount inside a layer must stop the removal rather than let it
// delete the mount's contents.
func TestXFSRemoveRefusesMountPoints(t *testing.T) {
	requireXFS(t)
	s := openTestXFS(t, storeDir(t))
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	mustWriteFile(t, secret, 10)
	l, err := s.Create("bind", 16*mib, 1000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(l.Dir, "a", "mp")
	if err := os.MkdirAll(mp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(outside, mp, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(mp, unix.MNT_DETACH) })
	// Positive control: the outside file is visible inside the layer.
	if _, err := os.Stat(filepath.Join(mp, "secret")); err != nil {
		t.Fatal(err)
	}
	err = s.Remove("bind")
	if !errors.Is(err, errCrossMount) {
		t.Fatalf("Remove across a bind mount: %v, want %v", err, errCrossMount)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("Remove deleted through a bind mount: %v", err)
	}
	// The layer is still listed, so the sweep retries once the mount is gone.
	if ids, _ := s.List(); !slices.Contains(ids, "bind") {
		t.Fatalf("List after failed Remove = %v", ids)
	}
	if err := unix.Unmount(mp, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("bind"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatal(err)
	}
}

// makeDeepTree nests depth directories named "d" under dir, with a file
// at every tenth level, working through fds (the path would exceed
// PATH_MAX).
func makeDeepTree(t testing.TB, dir string, depth int) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range depth {
		if i%10 == 0 {
			f, err := unix.Openat(fd, "file", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(f)
		}
		if err := unix.Mkdirat(fd, "d", 0o700); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = next
	}
	unix.Close(fd)
}

func TestXFSRemoveDeepAndWide(t *testing.T) {
	requireXFS(t)
	s := openTestXFS(t, storeDir(t))
	l, err := s.Create("deep", 64*mib, 100000, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	makeDeepTree(t, l.Dir, 1000)
	wide := filepath.Join(l.Dir, "wide")
	if err := os.Mkdir(wide, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		p := filepath.Join(wide, fmt.Sprint("f", i))
		if i%100 == 0 {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			mustWriteFile(t, filepath.Join(p, "x"), 1)
			continue
		}
		mustWriteFile(t, p, 0)
	}
	pid := s.records["deep"]
	if err := s.Remove("deep"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(l.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("layer still there: %v", err)
	}
	waitDrained(t, s, pid)
	u, err := s.q.get(pid)
	if err != nil {
		t.Fatal(err)
	}
	if u != (Usage{}) {
		t.Fatalf("project %d after Remove: %+v, want nothing charged and no limits", pid, u)
	}
}

func TestXFSListAndErrors(t *testing.T) {
	requireXFS(t)
	s := openTestXFS(t, storeDir(t))
	if ids, err := s.List(); err != nil || len(ids) != 0 {
		t.Fatalf("List of an empty store = %v, %v", ids, err)
	}
	for _, id := range []string{"b", "a", "c-1_x"} {
		if _, err := s.Create(id, mib, 100, sandboxUID, sandboxUID); err != nil {
			t.Fatal(err)
		}
	}
	if ids, err := s.List(); err != nil || !slices.Equal(ids, []string{"a", "b", "c-1_x"}) {
		t.Fatalf("List = %v, %v", ids, err)
	}
	if _, err := s.Create("a", mib, 100, 0, 0); !errors.Is(err, errs.ErrConflict) {
		t.Fatalf("Create of an existing id: %v", err)
	}
	if err := s.Remove("b"); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.List(); !slices.Equal(ids, []string{"a", "c-1_x"}) {
		t.Fatalf("List after Remove = %v", ids)
	}
	if _, err := s.Get("b"); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("Get of a removed layer: %v", err)
	}
	for _, c := range []struct {
		name          string
		bytes, inodes int64
		uid           int
	}{
		{"zero bytes", 0, 10, 0},
		{"zero inodes", mib, 0, 0},
		{"negative uid", mib, 10, -1},
		{"bigger than the image", 1 << 40, 10, 0},
	} {
		if _, err := s.Create("lim", c.bytes, c.inodes, c.uid, c.uid); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("%s: %v, want invalid", c.name, err)
		}
	}
	if ids, _ := s.List(); slices.Contains(ids, "lim") {
		t.Fatal("rejected Create left a layer behind")
	}
}

var invalidIDs = []string{"", "../x", "..", ".", "a/b", "/abs", "A", "a b", "a.b", ".projects", "x\x00", "é",
	strings.Repeat("a", MaxIDLen+1), "a\n"}

func TestXFSInvalidIDs(t *testing.T) {
	requireXFS(t)
	s := openTestXFS(t, storeDir(t))
	for _, id := range invalidIDs {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			if _, err := s.Create(id, mib, 10, 0, 0); !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("Create: %v", err)
			}
			if _, err := s.Get(id); !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("Get: %v", err)
			}
			if _, err := s.Usage(id); !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("Usage: %v", err)
			}
			if err := s.Remove(id); !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("Remove: %v", err)
			}
		})
	}
	// Positive control: the longest valid id works.
	if _, err := s.Create(strings.Repeat("a", MaxIDLen), mib, 10, 0, 0); err != nil {
		t.Fatal(err)
	}
	// Nothing escaped the mount.
	if _, err := os.Lstat(filepath.Join(s.dir, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an id escaped the store: %v", err)
	}
}

func TestXFSProjectIDReuse(t *testing.T) {
	requireXFS(t)
	dir := storeDir(t)
	s := openTestXFS(t, dir)
	quota := map[string]int64{"a": 1 * mib, "b": 2 * mib, "c": 3 * mib}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.Create(id, quota[id], 100, sandboxUID, sandboxUID); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]uint32{"a": 1, "b": 2, "c": 3}
	for id, pid := range want {
		if got, _ := projectOf(t, s.path(id)); got != pid {
			t.Fatalf("layer %s project %d, want %d", id, got, pid)
		}
	}
	mustWriteFile(t, filepath.Join(s.path("b"), "f"), 100<<10)
	if realQuota(t) {
		if u, _ := s.Usage("b"); u.Bytes < 100<<10 {
			t.Fatalf("usage of b: %+v", u)
		}
	}
	if err := s.Remove("b"); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, s, 2)
	d, err := s.Create("d", 5*mib, 100, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := projectOf(t, d.Dir); got != 2 {
		t.Fatalf("new layer got project %d, want the freed 2", got)
	}
	u, err := s.Usage("d")
	want0 := Usage{BytesLimit: 5 * mib, InodesLimit: 100}
	if realQuota(t) {
		want0.Inodes = 1
	}
	if err != nil || u != want0 {
		t.Fatalf("reused project carries old state: %+v, %v", u, err)
	}
	if u, _ := s.Usage("c"); u.BytesLimit != 3*mib {
		t.Fatalf("neighbour's limit changed: %+v", u)
	}

	// Records survive a restart; allocation continues without collision.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTestXFS(t, dir)
	if !maps(s2.records, map[string]uint32{"a": 1, "c": 3, "d": 2}) {
		t.Fatalf("records after reopen: %v", s2.records)
	}
	e, err := s2.Create("e", mib, 100, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := projectOf(t, e.Dir); got != 4 {
		t.Fatalf("new layer got project %d, want 4", got)
	}
}

// A project id that something on the filesystem is still charged to (a
// leftover of a lost record) is never handed out.
func TestXFSSkipsChargedProjectIDs(t *testing.T) {
	requireXFSQuota(t)
	s := openTestXFS(t, storeDir(t))
	stray := filepath.Join(s.mnt, "stray-file")
	mustWriteFile(t, stray, 1)
	f, err := unix.Open(stray, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	fa, err := getFsxattr(f)
	if err == nil {
		fa.Projid = 1
		err = setFsxattr(f, &fa)
	}
	unix.Close(f) // an open file would keep Close from unmounting
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Create("a", mib, 100, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := projectOf(t, l.Dir); got != 2 {
		t.Fatalf("new layer got project %d, want 2 (1 is charged to a stray file)", got)
	}
	// Positive control: once the stray file is gone, 1 is handed out again.
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, s, 1)
	l, err = s.Create("b", mib, 100, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := projectOf(t, l.Dir); got != 1 {
		t.Fatalf("project %d, want 1", got)
	}
}

func maps(a, b map[string]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestXFSCreateUndo(t *testing.T) {
	requireXFS(t)
	s := openTestXFS(t, storeDir(t))
	for _, step := range []string{"record", "limits", "project"} {
		t.Run(step, func(t *testing.T) {
			s.failAt = step
			_, err := s.Create("x", 7*mib, 77, sandboxUID, sandboxUID)
			s.failAt = ""
			if err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("Create: %v", err)
			}
			if ids, _ := s.List(); len(ids) != 0 {
				t.Fatalf("failed Create left %v", ids)
			}
			if _, err := os.Lstat(filepath.Join(s.mnt, projectsName, "x")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("record left: %v", err)
			}
			waitDrained(t, s, 1)
			if u, err := s.q.get(1); err != nil || u != (Usage{}) {
				t.Fatalf("project 1 after undo: %+v, %v", u, err)
			}
			// The id and the project id are free again.
			l, err := s.Create("x", mib, 10, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := projectOf(t, l.Dir); p != 1 {
				t.Fatalf("project %d after undo, want 1", p)
			}
			if err := s.Remove("x"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOpenFallsBackWithoutXFS(t *testing.T) {
	requireRoot(t)
	dir := storeDir(t)
	t.Cleanup(func() { forceCleanup(t, dir) })
	// Without mkfs.xfs the XFS store cannot be made: Open reports why and
	// returns no store (the runtime then mounts tmpfs layers itself).
	t.Setenv("PATH", "")
	s, reason, err := Open(Options{Dir: dir, ImageSize: MinImageSize})
	if err != nil {
		t.Fatal(err)
	}
	if s != nil || !errors.Is(reason, errs.ErrUnsupported) {
		t.Fatalf("Open = %v store, reason %v", s, reason)
	}
	// The reason names what is missing (here, before any quota check).
	cfg := defaultXFSConfig
	cfg.procQuota = ""
	if _, err := openXFS(Options{Dir: t.TempDir(), ImageSize: MinImageSize}, cfg); !errors.Is(err, errs.ErrUnsupported) || !strings.Contains(err.Error(), "mkfs.xfs") {
		t.Fatalf("OpenXFS without mkfs.xfs: %v", err)
	}
	// Bad options are an error, not a reason to fall back.
	if _, _, err := Open(Options{Dir: t.TempDir(), ImageSize: 1}); !errors.Is(err, errs.ErrInvalid) {
		t.Fatalf("Open with a tiny image: %v", err)
	}
}

func TestXFSOpenWithXFS(t *testing.T) {
	requireXFSQuota(t)
	dir := storeDir(t)
	t.Cleanup(func() { forceCleanup(t, dir) })
	s, reason, err := Open(Options{Dir: dir, ImageSize: MinImageSize})
	if err != nil || reason != nil || s.Kind() != "xfs" {
		t.Fatalf("Open = %v, %v, %v", s, reason, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkXFSCreateRemove(b *testing.B) {
	requireXFS(b)
	if !realQuota(b) {
		b.Logf("no XFS quotas on this kernel: quotactl is faked, so this times everything but the quotactl calls")
	}
	s := openTestXFS(b, storeDir(b))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprint("bench-", i)
		if _, err := s.Create(id, 64*mib, 10000, sandboxUID, sandboxUID); err != nil {
			b.Fatal(err)
		}
		if err := s.Remove(id); err != nil {
			b.Fatal(err)
		}
	}
}

// On a kernel whose XFS cannot enforce quotas, OpenXFS must say so plainly,
// leave nothing mounted or attached, and Open must fall back to tmpfs.
func TestXFSWithoutKernelQuota(t *testing.T) {
	requireXFS(t)
	if realQuota(t) {
		t.Skip("this kernel's XFS enforces quotas")
	}
	dir := storeDir(t)
	t.Cleanup(func() { forceCleanup(t, dir) })
	_, err := OpenXFS(Options{Dir: dir, ImageSize: MinImageSize})
	if !errors.Is(err, errs.ErrUnsupported) || !strings.Contains(err.Error(), "CONFIG_XFS_QUOTA") {
		t.Fatalf("OpenXFS = %v, want unsupported naming CONFIG_XFS_QUOTA", err)
	}
	rdir, _ := filepath.EvalSymlinks(dir)
	if _, err := os.Lstat(filepath.Join(rdir, imageName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("failed OpenXFS left an image: %v", err)
	}

	// Without the /proc hint (XFS not registered yet), the mount itself
	// tells: prjquota is refused but a plain mount works. Nothing may be
	// left mounted, attached or made.
	cfg := defaultXFSConfig
	cfg.procQuota = ""
	_, err = openXFS(Options{Dir: dir, ImageSize: MinImageSize}, cfg)
	if !errors.Is(err, errs.ErrUnsupported) || !strings.Contains(err.Error(), "CONFIG_XFS_QUOTA") {
		t.Fatalf("OpenXFS (mount probe) = %v, want unsupported naming CONFIG_XFS_QUOTA", err)
	}
	if isMounted(t, filepath.Join(rdir, mountName)) {
		t.Fatal("failed OpenXFS left a mount")
	}
	waitFor(t, "loop device to detach", func() bool { return len(loopDevsFor(filepath.Join(rdir, imageName))) == 0 })
	if _, err := os.Lstat(filepath.Join(rdir, imageName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("failed OpenXFS left an image: %v", err)
	}
	s, reason, err := Open(Options{Dir: dir, ImageSize: MinImageSize})
	if err != nil {
		t.Fatal(err)
	}
	if s != nil || !strings.Contains(fmt.Sprint(reason), "CONFIG_XFS_QUOTA") {
		t.Fatalf("Open = %v, reason %v", s, reason)
	}
}

// Concurrent Creates and Removes never hand one project id to two live
// layers.
func TestXFSConcurrentProjectIDs(t *testing.T) {
	requireXFS(t)
	s := openTestXFS(t, storeDir(t))
	var mu sync.Mutex
	live := map[uint32]string{}
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				id := fmt.Sprintf("w%d-%d", w, i)
				l, err := s.Create(id, mib, 10, 0, 0)
				if err != nil {
					errc <- err
					return
				}
				fd, err := unix.Open(l.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					errc <- err
					return
				}
				fa, err := getFsxattr(fd)
				unix.Close(fd)
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				if other, dup := live[fa.Projid]; dup {
					mu.Unlock()
					errc <- fmt.Errorf("project %d given to %s and %s", fa.Projid, other, id)
					return
				}
				live[fa.Projid] = id
				mu.Unlock()
				mu.Lock()
				delete(live, fa.Projid)
				mu.Unlock()
				if err := s.Remove(id); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if ids, _ := s.List(); len(ids) != 0 {
		t.Fatalf("left %v", ids)
	}
}
