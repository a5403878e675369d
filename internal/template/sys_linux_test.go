//go:build linux

package template

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRemoveTreeRefusesMounts: removing a staging directory must never
// delete the files of something mounted inside it.
func TestRemoveTreeRefusesMounts(t *testing.T) {
	requireRoot(t)
	mountTmpfs := func(dir string) string {
		t.Helper()
		mp := filepath.Join(dir, "rootfs", "dev")
		if err := os.MkdirAll(mp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", mp, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("cannot mount tmpfs: %v", err)
		}
		t.Cleanup(func() { _ = syscall.Unmount(mp, syscall.MNT_DETACH) })
		mustWrite(t, filepath.Join(mp, "precious"), "x", 0o644)
		return mp
	}

	// Positive control: os.RemoveAll does descend into the mount and
	// deletes what is mounted there.
	control := t.TempDir()
	cmp := mountTmpfs(control)
	_ = os.RemoveAll(control)
	if _, err := os.Stat(filepath.Join(cmp, "precious")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("positive control: RemoveAll left the mounted file (%v)", err)
	}

	dir := t.TempDir()
	mp := mountTmpfs(dir)
	err := removeTree(dir)
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("removeTree with a mount below = %v", err)
	}
	if _, err := os.Stat(filepath.Join(mp, "precious")); err != nil {
		t.Fatalf("mounted file removed: %v", err)
	}
	if err := syscall.Unmount(mp, 0); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(dir); err != nil {
		t.Fatalf("removeTree without mounts: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("not removed: %v", err)
	}
	if err := removeTree(dir); err != nil {
		t.Errorf("removeTree of a missing path: %v", err)
	}
}

func TestExchange(t *testing.T) {
	d := t.TempDir()
	a, b := filepath.Join(d, "a"), filepath.Join(d, "b")
	mustWrite(t, filepath.Join(a, "f"), "A", 0o644)
	mustWrite(t, filepath.Join(b, "f"), "B", 0o644)
	if err := exchange(a, b); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, filepath.Join(a, "f")) != "B" || mustRead(t, filepath.Join(b, "f")) != "A" {
		t.Error("not exchanged")
	}
	if err := exchange(a, filepath.Join(d, "missing")); err == nil || exchangeUnsupported(err) {
		t.Errorf("exchange with a missing entry = %v", err)
	}
}
