//go:build linux

package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// treeRoot returns a directory fd to remove under, and its mount identity.
func treeRoot(t *testing.T, dir string) (int, mountIdent) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	id, err := identOf(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, id.mountIdent
}

// The walker is filesystem-agnostic: run it on the host's filesystem and
// on a tmpfs (whose directory offsets behave differently).
func removeTestDirs(t *testing.T) map[string]string {
	dirs := map[string]string{"tempdir": t.TempDir()}
	if os.Geteuid() == 0 {
		d := t.TempDir()
		if err := unix.Mount("tmpfs", d, "tmpfs", 0, "size=64m"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Unmount(d, unix.MNT_DETACH) })
		dirs["tmpfs"] = d
	}
	return dirs
}

func TestRemoveTree(t *testing.T) {
	for fs, base := range removeTestDirs(t) {
		t.Run(fs, func(t *testing.T) {
			fd, want := treeRoot(t, base)
			outside := t.TempDir()
			secret := filepath.Join(outside, "secret")
			mustWriteFile(t, secret, 3)

			cases := []struct {
				name  string
				build func(t *testing.T, dir string)
			}{
				{"empty", func(*testing.T, string) {}},
				{"files and dirs", func(t *testing.T, dir string) {
					for i := range 50 {
						sub := filepath.Join(dir, fmt.Sprint("d", i%5), fmt.Sprint("e", i%7))
						if err := os.MkdirAll(sub, 0o755); err != nil {
							t.Fatal(err)
						}
						mustWriteFile(t, filepath.Join(sub, fmt.Sprint("f", i)), i)
					}
				}},
				{"symlinks out", func(t *testing.T, dir string) {
					must(t, os.Symlink(outside, filepath.Join(dir, "dirlink")))
					must(t, os.Symlink(secret, filepath.Join(dir, "filelink")))
					must(t, os.Mkdir(filepath.Join(dir, "s"), 0o755))
					must(t, os.Symlink("/", filepath.Join(dir, "s", "root")))
					must(t, os.Symlink("../../..", filepath.Join(dir, "s", "up")))
				}},
				{"unreadable dirs", func(t *testing.T, dir string) {
					p := filepath.Join(dir, "a", "b")
					must(t, os.MkdirAll(p, 0o755))
					mustWriteFile(t, filepath.Join(p, "f"), 1)
					must(t, os.Chmod(p, 0))
					must(t, os.Chmod(filepath.Join(dir, "a"), 0))
				}},
				{"special files", func(t *testing.T, dir string) {
					must(t, unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
					must(t, os.Link(filepath.Join(dir, "fifo"), filepath.Join(dir, "hardlink")))
				}},
				{"depth 1000", func(t *testing.T, dir string) { makeDeepTree(t, dir, 1000) }},
				{"depth 3*removeFdDepth+1", func(t *testing.T, dir string) { makeDeepTree(t, dir, 3*removeFdDepth+1) }},
				{"wide", func(t *testing.T, dir string) {
					for i := range 2000 {
						p := filepath.Join(dir, fmt.Sprintf("entry-with-a-longish-name-%05d", i))
						if i%100 == 0 {
							must(t, os.Mkdir(p, 0o755))
							mustWriteFile(t, filepath.Join(p, "x"), 1)
							continue
						}
						mustWriteFile(t, p, 0)
					}
				}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					dir := filepath.Join(base, "layer")
					must(t, os.Mkdir(dir, 0o700))
					c.build(t, dir)
					if err := removeTree(fd, "layer", want); err != nil {
						t.Fatal(err)
					}
					if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
						t.Fatalf("tree left behind: %v", err)
					}
					if b, err := os.ReadFile(secret); err != nil || len(b) != 3 {
						t.Fatalf("outside file damaged: %v", err)
					}
				})
			}
			if err := removeTree(fd, "missing", want); err != nil {
				t.Fatalf("missing tree: %v", err)
			}
			// A symlink in place of the tree itself is unlinked, not followed.
			must(t, os.Symlink(outside, filepath.Join(base, "layer")))
			if err := removeTree(fd, "layer", want); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(secret); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRemoveTreeRefusesMounts(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	fd, want := treeRoot(t, base)
	outside := t.TempDir()
	mustWriteFile(t, filepath.Join(outside, "secret"), 1)
	for _, c := range []struct {
		name  string
		mount func(t *testing.T, at string)
	}{
		// Same filesystem: st_dev matches, only the mount id tells.
		{"bind of the same filesystem", func(t *testing.T, at string) {
			must(t, unix.Mount(outside, at, "", unix.MS_BIND, ""))
		}},
		{"tmpfs", func(t *testing.T, at string) {
			must(t, unix.Mount("tmpfs", at, "tmpfs", 0, "size=1m"))
			mustWriteFile(t, filepath.Join(at, "f"), 1)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mp := filepath.Join(base, "layer", "x", "mp")
			must(t, os.MkdirAll(mp, 0o700))
			c.mount(t, mp)
			t.Cleanup(func() { unix.Unmount(mp, unix.MNT_DETACH) })
			if err := removeTree(fd, "layer", want); !errors.Is(err, errCrossMount) {
				t.Fatalf("removeTree = %v, want %v", err, errCrossMount)
			}
			if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
				t.Fatal(err)
			}
			must(t, unix.Unmount(mp, unix.MNT_DETACH))
			if err := removeTree(fd, "layer", want); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The tree's own root on another mount is refused too.
	mp := filepath.Join(base, "layer")
	must(t, os.Mkdir(mp, 0o700))
	must(t, unix.Mount("tmpfs", mp, "tmpfs", 0, "size=1m"))
	t.Cleanup(func() { unix.Unmount(mp, unix.MNT_DETACH) })
	if err := removeTree(fd, "layer", want); !errors.Is(err, errCrossMount) {
		t.Fatalf("removeTree of a mount point = %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func BenchmarkRemoveTree1000Files(b *testing.B) {
	base := b.TempDir()
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	id, err := identOf(fd)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		dir := filepath.Join(base, "layer")
		if err := os.Mkdir(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			mustWriteFile(b, filepath.Join(dir, fmt.Sprint(i)), 0)
		}
		b.StartTimer()
		if err := removeTree(fd, "layer", id.mountIdent); err != nil {
			b.Fatal(err)
		}
	}
}
