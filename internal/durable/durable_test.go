package durable

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWriteFileReplacesWholeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{"first", "second, longer"} {
		if err := WriteFile(dir, "meta.json", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "meta.json"))
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries, want only meta.json (a temp file was left)", len(ents))
	}
	if fi, _ := os.Stat(filepath.Join(dir, "meta.json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestWriteFileFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	// The target name is a non-empty directory: the rename fails.
	if err := os.MkdirAll(filepath.Join(dir, "x", "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dir, "x", []byte("data"), 0o600); err == nil {
		t.Fatal("rename over a non-empty directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries after a failed write, want 1", len(ents))
	}
}

func TestUsageCountsHardLinksOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Usage needs Linux")
	}
	dir := t.TempDir()
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i) | 1 // not a hole
	}
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, data, 0o644); err != nil {
		t.Fatal(err)
	}
	one, err := Usage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if one < 1<<20 {
		t.Fatalf("usage %d of a 1 MiB file, want ≥ 1 MiB", one)
	}
	if err := os.Link(a, filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	linked, err := Usage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if linked != one {
		t.Fatalf("usage %d with a hard link, want %d (the inode counted once)", linked, one)
	}
	if err := os.WriteFile(filepath.Join(dir, "c"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if two, _ := Usage(dir); two < 2*one-8192 {
		t.Fatalf("usage %d with a second copy, want about %d", two, 2*one)
	}
}
