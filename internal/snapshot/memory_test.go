package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A memory snapshot takes its image over, counts it in the tenant's
// bytes, and loses it with the snapshot; an image no manifest names (a
// crash between move and manifest) is removed by the next Open.
func TestMemorySnapshot(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := s.TempDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(img, "pages"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := s.Put(context.Background(), Meta{Tenant: "t", Name: "mem", MemoryDir: img, MemoryBytes: 1000},
		capture(t, map[string]string{"a": "12345"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.MemoryBytes != 1000 || s.Bytes("t") != 1005 {
		t.Fatalf("memory bytes %d, tenant bytes %d (want 1000, 1005)", m.MemoryBytes, s.Bytes("t"))
	}
	if _, err := os.Stat(filepath.Join(s.MemoryPath(m), "pages")); err != nil {
		t.Fatalf("image not moved in: %v", err)
	}
	if _, err := os.Stat(img); !os.IsNotExist(err) {
		t.Fatalf("temporary image left: %v", err)
	}
	// Reopened: counted again.
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Bytes("t") != 1005 {
		t.Fatalf("after reopen: %d bytes", s2.Bytes("t"))
	}
	if err := s2.Delete("t", "mem"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s2.MemoryPath(m)); !os.IsNotExist(err) || s2.Bytes("t") != 0 {
		t.Fatalf("after delete: image %v, %d bytes", err, s2.Bytes("t"))
	}
	// An orphan image (no manifest) goes at Open.
	orphan := s2.memoryPath("t", "orphan")
	if err := os.MkdirAll(orphan, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("orphan image left: %v", err)
	}
}
