package files

import (
	"path"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		match   []string
		no      []string
	}{
		{"*.go", []string{"a.go", ".x.go"}, []string{"d/a.go", "a.goo"}},
		{"**/*.go", []string{"a.go", "d/a.go", "d/e/f/a.go"}, []string{"a.txt", "d/a.go/x"}},
		{"src/**", []string{"src", "src/a", "src/a/b"}, []string{"other/a", "srcx"}},
		{"**", []string{"a", "a/b/c"}, nil},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a/b/c", "b"}},
		{"**/test/**/*_test.go", []string{"test/a_test.go", "x/test/y/z_test.go"}, []string{"test/a.go"}},
		{"*.{go,md}", []string{"a.go", "b.md"}, []string{"c.txt"}},
		{"{cmd,internal}/**/*.go", []string{"cmd/x/main.go", "internal/a.go"}, []string{"client/a.go"}},
		{"[ab]?.txt", []string{"a1.txt", "bz.txt"}, []string{"c1.txt", "a12.txt"}},
		{`\*.txt`, []string{"*.txt"}, []string{"a.txt"}},
		{"**/**/x", []string{"x", "a/x", "a/b/x"}, nil},
	} {
		g, err := compileGlob(tc.pattern)
		if err != nil {
			t.Fatalf("compile %q: %v", tc.pattern, err)
		}
		for _, m := range tc.match {
			if !g.Match(m) {
				t.Errorf("%q should match %q", tc.pattern, m)
			}
		}
		for _, m := range tc.no {
			if g.Match(m) {
				t.Errorf("%q should not match %q", tc.pattern, m)
			}
		}
	}
	for _, bad := range []string{"", "/abs/*", "[", "a{b", "a}b", strings.Repeat("{a,b}", 10)} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("compile %q: want an error", bad)
		}
	}
	g, _ := compileGlob("src/*/x.go")
	for dir, want := range map[string]bool{"src": true, "src/a": true, "src/a/b": false, "other": false} {
		if got := g.Below(dir); got != want {
			t.Errorf("Below(%q) = %v, want %v", dir, got, want)
		}
	}
}

// FuzzGlob: no panics; a pattern without braces or ** agrees with
// path.Match applied name by name.
func FuzzGlob(f *testing.F) {
	f.Add("**/*.go", "a/b/c.go")
	f.Add("a/*/c", "a/b/c")
	f.Add("{a,b}/[c-d]?", "b/cx")
	f.Add(`\\{x`, "{x")
	f.Add("*", "")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		got := g.Match(p)
		_ = g.Below(p)
		if strings.ContainsAny(pattern, "{}") || strings.Contains(pattern, "**") || p == "" ||
			strings.Contains(p, "//") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			return
		}
		var segs []string
		for _, s := range strings.Split(pattern, "/") {
			if s != "" && s != "." {
				segs = append(segs, s)
			}
		}
		names := strings.Split(p, "/")
		for _, n := range names {
			if n == "." {
				return
			}
		}
		want := len(segs) == len(names)
		for i := 0; want && i < len(names); i++ {
			ok, _ := path.Match(segs[i], names[i])
			want = ok
		}
		if got != want {
			t.Fatalf("Match(%q, %q) = %v, path.Match says %v", pattern, p, got, want)
		}
	})
}
