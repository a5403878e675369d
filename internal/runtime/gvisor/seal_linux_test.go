//go:build linux

package gvisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// sealedImage is an image the backend sealed, as Checkpoint leaves it.
func sealedImage(t *testing.T, b *Backend) string {
	t.Helper()
	dir, m := writeImage(t, map[string]string{"checkpoint.img": "state", "pages.img": strings.Repeat("p", 10000)})
	time.Sleep(sealMinAge + 10*time.Millisecond)
	b.seals.seal(dir, m)
	if _, summed, err := b.verifyImage(dir); err != nil || summed {
		t.Fatalf("sealed image: summed %v, err %v", summed, err)
	}
	return dir
}

// TestSealSkipsOnlyIntactImages: a sealed image is restored without a
// second checksum pass only while every file is the one sealed; any
// change to it — same-size overwrite, truncation, replacement, an extra
// or missing file, another manifest — is summed in full and refused as
// before.
func TestSealSkipsOnlyIntactImages(t *testing.T) {
	b := &Backend{}
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		code   errs.Code // "" : the full check passes
	}{
		{"overwritten in place, same size", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "pages.img"), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("X"), 5000); err != nil {
				t.Fatal(err)
			}
		}, errs.CodeInvalid},
		{"truncated", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "pages.img"), 100); err != nil {
				t.Fatal(err)
			}
		}, errs.CodeInvalid},
		{"replaced by another file", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "checkpoint.img")
			if err := os.WriteFile(p+".new", []byte("STATE"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		}, errs.CodeInvalid},
		{"an extra file", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "extra.img"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, errs.CodeInvalid},
		{"a missing file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "checkpoint.img")); err != nil {
				t.Fatal(err)
			}
		}, errs.CodeInvalid},
		{"a foreign manifest", func(t *testing.T, dir string) {
			p := filepath.Join(dir, ManifestName)
			raw, _ := os.ReadFile(p)
			if err := os.WriteFile(p, []byte(strings.Replace(string(raw), RunscVersion, "release-19990101.0", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, errs.CodeUnsupported},
		{"manifest rewritten, same content", func(t *testing.T, dir string) {
			p := filepath.Join(dir, ManifestName)
			raw, _ := os.ReadFile(p)
			if err := os.WriteFile(p, raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := sealedImage(t, b)
			c.damage(t, dir)
			_, summed, err := b.verifyImage(dir)
			if c.code == "" {
				// Same bytes: the seal still holds (the manifest is
				// compared by content, the files by identity).
				if err != nil || summed {
					t.Fatalf("summed %v, err %v", summed, err)
				}
				return
			}
			if errs.CodeOf(err) != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
			if !summed && c.code == errs.CodeInvalid {
				t.Fatalf("a damaged image was not summed")
			}
		})
	}
}

// TestSealOnlyOldFiles: a file changed just before the seal (within a
// clock tick of it) is not sealed, so a write in the same tick cannot
// pass unseen; the next verification sums the image (and seals it).
func TestSealOnlyOldFiles(t *testing.T) {
	b := &Backend{}
	dir, m := writeImage(t, map[string]string{"pages.img": "young"})
	b.seals.seal(dir, m)
	if _, summed, err := b.verifyImage(dir); err != nil || !summed {
		t.Fatalf("young image: summed %v, err %v (want a full check)", summed, err)
	}
	b.seals.unseal(dir)
	// A positive control: the same image, older, is sealed.
	time.Sleep(sealMinAge + 10*time.Millisecond)
	b.seals.seal(dir, m)
	if _, summed, err := b.verifyImage(dir); err != nil || summed {
		t.Fatalf("old image: summed %v, err %v", summed, err)
	}
}

// TestSealsBounded: the backend keeps at most maxSeals seals.
func TestSealsBounded(t *testing.T) {
	var s seals
	dir, m := writeImage(t, map[string]string{"pages.img": "p"})
	time.Sleep(sealMinAge + 10*time.Millisecond)
	for i := range maxSeals + 10 {
		_ = i
		s.seal(dir, m)
	}
	if len(s.m) != 1 || len(s.order) != 1 {
		t.Fatalf("one image sealed again and again: %d seals", len(s.m))
	}
	for i := range maxSeals + 10 {
		d := filepath.Join(t.TempDir(), "x")
		_ = i
		if err := os.Symlink(dir, d); err != nil {
			t.Fatal(err)
		}
		s.seal(d, m)
	}
	if len(s.m) != maxSeals || len(s.order) != maxSeals {
		t.Fatalf("%d seals, %d in order; want %d", len(s.m), len(s.order), maxSeals)
	}
}
