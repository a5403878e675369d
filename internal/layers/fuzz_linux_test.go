package layers

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"a/b", "./a", "../a", "/abs", "a/../b", "a//b/", ".wh..wh..opq", "", ".", "a\x00b", strings.Repeat("x/", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p, ok := CleanName(name)
		if !ok {
			return
		}
		if strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
			t.Fatalf("CleanName(%q) = %q: not clean", name, p)
		}
		for _, c := range strings.Split(p, "/") {
			if p != "" && (c == "" || c == "." || c == "..") {
				t.Fatalf("CleanName(%q) = %q keeps %q", name, p, c)
			}
		}
		if filepath.Clean("/"+p) != "/"+p && p != "" {
			t.Fatalf("CleanName(%q) = %q is not canonical", name, p)
		}
	})
}

// FuzzExtract feeds arbitrary archives to Extract: it must never panic
// and never touch anything outside its root (a canary beside it).
func FuzzExtract(f *testing.F) {
	if os.Geteuid() != 0 {
		f.Skip("needs root: extraction sets file owners")
	}
	seeds := [][]ent{
		{{name: "a", body: "x"}, {name: "d/", typ: tar.TypeDir}, {name: "d/l", typ: tar.TypeSymlink, link: "../../canary"}},
		{{name: "s", typ: tar.TypeSymlink, link: ".."}, {name: "s/canary", body: "pwned"}},
		{{name: "f", body: "x"}, {name: "h", typ: tar.TypeLink, link: "f"}, {name: ".wh.g"}, {name: "o/.wh..wh..opq"}},
		{{name: "../canary", body: "pwned"}},
		{{name: "h", typ: tar.TypeLink, link: "../canary"}},
	}
	for _, s := range seeds {
		f.Add(mkTar(f, s...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp := t.TempDir()
		canary := filepath.Join(tmp, "canary")
		if err := os.WriteFile(canary, []byte("safe"), 0o644); err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(tmp, "root")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		_, _ = Extract(context.Background(), bytes.NewReader(data), root, Limits{MaxBytes: 1 << 20, MaxEntries: 1000})
		if b, err := os.ReadFile(canary); err != nil || string(b) != "safe" {
			t.Fatalf("canary changed: %q %v", b, err)
		}
		ents, _ := os.ReadDir(tmp)
		if len(ents) != 2 {
			t.Fatalf("extraction created entries beside its root: %v", ents)
		}
		var st1, st2 os.FileInfo
		st1, _ = os.Lstat(canary)
		st2, _ = os.Lstat(filepath.Join(tmp, "root"))
		if !st2.IsDir() || st1.Mode().IsRegular() == false {
			t.Fatal("root or canary replaced")
		}
	})
}
