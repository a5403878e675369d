//go:build linux

package gvisor_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
)

// biggestFile is the largest file of an image (the memory pages).
func biggestFile(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var best string
	var size int64 = -1
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() != gvisor.ManifestName && fi.Size() > size {
			best, size = filepath.Join(dir, e.Name()), fi.Size()
		}
	}
	return best
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

// flipByte inverts the byte at offset 4096 of path, in place.
func flipByte(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], 4096); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b[:], 4096); err != nil {
		t.Fatal(err)
	}
}

// TestBadImagesAreRefused damages a good image in each way a disk or an
// operator can, and expects a clear refusal that leaves no trace of the
// sandbox that was to be restored.
func TestBadImagesAreRefused(t *testing.T) {
	e := newEnv(t, nil)
	src := e.create(e.config())
	sh(t, src, "echo kept > /tmp/f")
	good := filepath.Join(e.data, "images", "good")
	mustMkdir(t, filepath.Dir(good))
	if _, err := e.b.Checkpoint(t.Context(), src, gvisorCheckpoint(good, true)); err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	// Left running: the source carries on and answers.
	if res := sh(t, src, "cat /tmp/f"); res.Stdout != "kept\n" {
		t.Fatalf("source after checkpoint: %+v", res)
	}
	cases := []struct {
		name   string
		damage func(dir string)
		code   errs.Code
		msg    string
	}{
		{"flipped byte", func(dir string) { flipByte(t, biggestFile(t, dir)) }, errs.CodeInvalid, "checksum"},
		{"truncated", func(dir string) {
			p := biggestFile(t, dir)
			fi, _ := os.Stat(p)
			if err := os.Truncate(p, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, errs.CodeInvalid, "truncated"},
		{"file missing", func(dir string) { _ = os.Remove(biggestFile(t, dir)) }, errs.CodeInvalid, "missing"},
		{"no manifest", func(dir string) { _ = os.Remove(filepath.Join(dir, gvisor.ManifestName)) }, errs.CodeInvalid, "manifest"},
		{"other runsc version", func(dir string) {
			p := filepath.Join(dir, gvisor.ManifestName)
			var m map[string]any
			b, _ := os.ReadFile(p)
			_ = json.Unmarshal(b, &m)
			m["runsc"] = "v0.0.0-20250101000000-000000000000"
			b, _ = json.Marshal(m)
			_ = os.WriteFile(p, b, 0o600)
		}, errs.CodeUnsupported, "cannot restore"},
		{"extra file", func(dir string) { _ = os.WriteFile(filepath.Join(dir, "extra"), []byte("x"), 0o600) }, errs.CodeInvalid, "holds"},
		{"garbage manifest", func(dir string) {
			_ = os.WriteFile(filepath.Join(dir, gvisor.ManifestName), []byte("{not json"), 0o600)
		}, errs.CodeInvalid, "malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(e.data, "images", strings.ReplaceAll(c.name, " ", "-"))
			copyTree(t, good, dir)
			c.damage(dir)
			cfg := e.config()
			inst, err := e.b.Restore(t.Context(), cfg, dir)
			if err == nil {
				e.track(inst)
				t.Fatal("a damaged image was restored")
			}
			if errs.CodeOf(err) != c.code || !strings.Contains(errs.Public(err), c.msg) {
				t.Fatalf("got %s %q, want %s containing %q", errs.CodeOf(err), errs.Public(err), c.code, c.msg)
			}
			if strings.Contains(errs.Public(err), e.data) {
				t.Fatalf("public message names a host path: %q", errs.Public(err))
			}
			e.assertNoTrace(t, cfg.ID)
		})
	}
	// The good image still restores (the refusals above were about the
	// damage, not the image).
	cfg := e.config()
	inst, err := e.b.Restore(t.Context(), cfg, good)
	if err != nil {
		t.Fatalf("restore of the good image: %v", err)
	}
	e.track(inst)
	if res := sh(t, inst, "cat /tmp/f"); res.Stdout != "kept\n" {
		t.Fatalf("restored files: %+v", res)
	}
	// The image the backend wrote is sealed (restores skip summing it
	// again while its files are untouched): damaged in place, it is
	// summed and refused like any other.
	flipByte(t, biggestFile(t, good))
	cfg = e.config()
	if inst, err := e.b.Restore(t.Context(), cfg, good); err == nil {
		e.track(inst)
		t.Fatal("the sealed image, damaged in place, was restored")
	} else if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(errs.Public(err), "checksum") {
		t.Fatalf("sealed image damaged in place: got %s %q", errs.CodeOf(err), errs.Public(err))
	}
	e.assertNoTrace(t, cfg.ID)
}

// TestRestoreOnFullDiskIsRefused restores into a data directory on a
// small filesystem: the restore is refused before runsc runs, with
// nothing left behind.
func TestRestoreOnFullDiskIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	src := e.create(e.config())
	img := filepath.Join(e.data, "images", "full")
	mustMkdir(t, filepath.Dir(img))
	if _, err := e.b.Checkpoint(t.Context(), src, gvisorCheckpoint(img, true)); err != nil {
		t.Fatal(err)
	}
	small, err := os.MkdirTemp("", "pdkgvsmall")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(small) })
	if err := unix.Mount("pdkgvsmall", small, "tmpfs", 0, "size=48m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(small, unix.MNT_DETACH) })
	opts := e.opts
	opts.DataDir = small
	b2, err := gvisor.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	cfg := e.config()
	inst, err := b2.Restore(t.Context(), cfg, img)
	if err == nil {
		_ = b2.Destroy(t.Context(), inst)
		t.Fatal("restored onto a full disk")
	}
	if errs.CodeOf(err) != errs.CodeLimit || !strings.Contains(errs.Public(err), "disk space") {
		t.Fatalf("got %s %q", errs.CodeOf(err), errs.Public(err))
	}
	if ents, _ := os.ReadDir(filepath.Join(small, "gvisor", "sandboxes")); len(ents) != 0 {
		t.Fatalf("left %d sandbox directories", len(ents))
	}
}
