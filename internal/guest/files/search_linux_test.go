//go:build linux

package files

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

func fillTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindAndSearch(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	fillTree(t, d, map[string]string{
		"main.go":          "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
		"pkg/a/a.go":       "package a\n// TODO: hello world\n",
		"pkg/a/a_test.go":  "package a\n",
		"pkg/b/readme.md":  "hello\nHELLO\n",
		"bin/blob":         "hello\x00binary",
		"big/large.txt":    strings.Repeat("hello\n", 10000),
		"long/line.txt":    strings.Repeat("x", 5000) + "hello\n",
		"deep/x/y/z/n.go":  "package z // hello\n",
		"pkg/.hidden/h.go": "package h\n",
	})
	outside := t.TempDir()
	fillTree(t, outside, map[string]string{"o.go": "package hello\n"})
	if err := os.Symlink(outside, filepath.Join(d, "pkg/linked")); err != nil {
		t.Fatal(err)
	}

	paths := func(fis []guestapi.FileInfo) string {
		var out []string
		for _, f := range fis {
			rel, _ := filepath.Rel(d, f.Path)
			out = append(out, rel)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		pattern, typ, want string
	}{
		{"**/*.go", "", "deep/x/y/z/n.go main.go pkg/.hidden/h.go pkg/a/a.go pkg/a/a_test.go"},
		{"*.go", "", "main.go"},
		{"pkg/*", "dir", "pkg/.hidden pkg/a pkg/b"},
		{"pkg/*", "symlink", "pkg/linked"},
		{"**/*_test.go", "", "pkg/a/a_test.go"},
		{"**/*.{md,txt}", "", "big/large.txt long/line.txt pkg/b/readme.md"},
	} {
		res, err := c.Find(ctx, guestapi.FindRequest{Path: d, Pattern: tc.pattern, Type: tc.typ})
		if err != nil {
			t.Fatalf("find %q: %v", tc.pattern, err)
		}
		if got := paths(res.Matches); got != tc.want || res.Truncated {
			t.Errorf("find %q %s = %q (truncated %v), want %q", tc.pattern, tc.typ, got, res.Truncated, tc.want)
		}
	}
	res, err := c.Find(ctx, guestapi.FindRequest{Path: d, Pattern: "**", Limit: 3})
	if err != nil || len(res.Matches) != 3 || !res.Truncated {
		t.Fatalf("find with limit: %d matches, truncated %v, %v", len(res.Matches), res.Truncated, err)
	}
	_, err = c.Find(ctx, guestapi.FindRequest{Path: d, Pattern: "[oops"})
	wantCode(t, err, errs.CodeInvalid, "malformed")

	matches := func(r guestapi.SearchResult) string {
		var out []string
		for _, m := range r.Matches {
			rel, _ := filepath.Rel(d, m.Path)
			out = append(out, rel+":"+strconv.Itoa(m.Line))
		}
		return strings.Join(out, " ")
	}
	sr, err := c.Search(ctx, guestapi.SearchRequest{Path: d, Query: "hello", MaxFileSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	// Binary, over-size and symlinked-outside files are not searched.
	if got := matches(sr); got != "deep/x/y/z/n.go:1 long/line.txt:1 pkg/a/a.go:2 pkg/b/readme.md:1" {
		t.Errorf("literal search = %s", got)
	}
	if sr.FilesSkipped != 2 {
		t.Errorf("skipped %d files, want 2 (binary, too large)", sr.FilesSkipped)
	}
	for _, m := range sr.Matches {
		if strings.HasSuffix(m.Path, "line.txt") && (!m.Truncated || len(m.Text) > guestapi.MaxSearchLineBytes) {
			t.Errorf("long line not cut: %d bytes, truncated %v", len(m.Text), m.Truncated)
		}
	}
	sr, err = c.Search(ctx, guestapi.SearchRequest{Path: filepath.Join(d, "pkg"), Query: "hello", IgnoreCase: true})
	if err != nil || matches(sr) != "pkg/a/a.go:2 pkg/b/readme.md:1 pkg/b/readme.md:2" {
		t.Errorf("ignore-case search = %s, %v", matches(sr), err)
	}
	sr, err = c.Search(ctx, guestapi.SearchRequest{Path: d, Query: `^func \w+\(\)`, Regexp: true, Include: "**/*.go"})
	if err != nil || matches(sr) != "main.go:3" || sr.Matches[0].Text != "func main() {" {
		t.Errorf("regexp search = %s %+v, %v", matches(sr), sr.Matches, err)
	}
	sr, err = c.Search(ctx, guestapi.SearchRequest{Path: filepath.Join(d, "big/large.txt"), Query: "hello", Limit: 5})
	if err != nil || len(sr.Matches) != 5 || !sr.Truncated {
		t.Errorf("search with limit: %d, truncated %v, %v", len(sr.Matches), sr.Truncated, err)
	}
	_, err = c.Search(ctx, guestapi.SearchRequest{Path: d, Query: "(", Regexp: true})
	wantCode(t, err, errs.CodeInvalid, "regular expression")
	_, err = c.Search(ctx, guestapi.SearchRequest{Path: "/dev/null", Query: "x"})
	wantCode(t, err, errs.CodeInvalid, "not a regular file")
}
