//go:build linux

package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

func openTestTmpfs(t testing.TB) *tmpfsStore {
	t.Helper()
	requireRoot(t)
	dir := filepath.Join(storeDir(t), "layers")
	s, err := OpenTmpfs(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := s.(*tmpfsStore)
	t.Cleanup(func() {
		// Detach whatever a failed test left mounted.
		ids, _ := os.ReadDir(ts.dir)
		for _, e := range ids {
			for isMounted(t, filepath.Join(ts.dir, e.Name())) {
				if unix.Unmount(filepath.Join(ts.dir, e.Name()), unix.MNT_DETACH) != nil {
					break
				}
			}
		}
		s.Close()
	})
	return ts
}

func TestTmpfsStore(t *testing.T) {
	s := openTestTmpfs(t)
	if s.Kind() != "tmpfs" {
		t.Fatal(s.Kind())
	}
	const quota = 2 * mib
	l, err := s.Create("t1", quota, 100, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Create("t2", quota, 100, sandboxUID, sandboxUID)
	if err != nil {
		t.Fatal(err)
	}
	ms := mountsAt(t, l.Dir)
	if len(ms) != 1 || ms[0].FSType != "tmpfs" || !hasOpt(ms[0].MountOpts, "nosuid") || !hasOpt(ms[0].MountOpts, "nodev") {
		t.Fatalf("mounts at %s: %+v", l.Dir, ms)
	}
	var st unix.Stat_t
	if err := unix.Lstat(l.Dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != sandboxUID || st.Gid != sandboxUID || st.Mode&0o7777 != 0o700 {
		t.Fatalf("layer root owner %d:%d mode %o", st.Uid, st.Gid, st.Mode&0o7777)
	}
	if g, err := s.Get("t1"); err != nil || g.Dir != l.Dir {
		t.Fatalf("Get = %+v, %v", g, err)
	}
	if ids, err := s.List(); err != nil || !slices.Equal(ids, []string{"t1", "t2"}) {
		t.Fatalf("List = %v, %v", ids, err)
	}
	if _, err := s.Create("t1", quota, 100, 0, 0); !errors.Is(err, errs.ErrConflict) {
		t.Fatalf("Create of an existing layer: %v", err)
	}

	r := runHelper(t, sandboxUID, "write", filepath.Join(l.Dir, "big"), fmt.Sprint(2*quota))
	if r.errno != "ENOSPC" || r.n > quota {
		t.Fatalf("write past the size: %+v, want ENOSPC within %d bytes", r, quota)
	}
	// Positive control: the other layer still has room.
	if r := runHelper(t, sandboxUID, "write", filepath.Join(other.Dir, "f"), fmt.Sprint(quota/2)); r.errno != "none" {
		t.Fatalf("second layer: %+v", r)
	}
	u, err := s.Usage("t1")
	if err != nil || u.BytesLimit != quota || u.InodesLimit != 100 || u.Bytes < quota-64<<10 || u.Inodes != 2 {
		t.Fatalf("Usage = %+v, %v", u, err)
	}
	if r := runHelper(t, sandboxUID, "files", other.Dir, "1000"); r.errno != "ENOSPC" || r.n >= 100 {
		t.Fatalf("files past nr_inodes: %+v", r)
	}

	if err := s.Remove("t1"); err != nil {
		t.Fatal(err)
	}
	if isMounted(t, l.Dir) {
		t.Fatal("still mounted after Remove")
	}
	if _, err := os.Lstat(l.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("mount point left: %v", err)
	}
	if _, err := s.Get("t1"); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("Get after Remove: %v", err)
	}
	if _, err := s.Usage("t1"); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("Usage after Remove: %v", err)
	}
	if err := s.Remove("t1"); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
	if ids, _ := s.List(); !slices.Equal(ids, []string{"t2"}) {
		t.Fatalf("List = %v", ids)
	}
	for _, id := range invalidIDs {
		if _, err := s.Create(id, mib, 10, 0, 0); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("Create(%q): %v", id, err)
		}
		if err := s.Remove(id); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("Remove(%q): %v", id, err)
		}
	}
	if _, err := s.Create("z", 0, 10, 0, 0); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("zero size: %v", err)
	}
}

// Stacked mounts (a sandbox cannot make them, but a confused operator can)
// are all detached.
func TestTmpfsRemoveStacked(t *testing.T) {
	s := openTestTmpfs(t)
	l, err := s.Create("st", mib, 10, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", l.Dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("st"); err != nil {
		t.Fatal(err)
	}
	if isMounted(t, l.Dir) {
		t.Fatal("still mounted")
	}
}

// A symlink planted in a tmpfs layer is gone with the mount; its target
// stays.
func TestTmpfsRemoveKeepsSymlinkTargets(t *testing.T) {
	s := openTestTmpfs(t)
	outside := t.TempDir()
	mustWriteFile(t, filepath.Join(outside, "secret"), 1)
	l, err := s.Create("ln", mib, 10, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(l.Dir, "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.Dir, "out", "secret")); err != nil {
		t.Fatal(err) // positive control
	}
	if err := s.Remove("ln"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkTmpfsCreateRemove(b *testing.B) {
	s := openTestTmpfs(b)
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
