package meta

import (
	"bufio"
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// oversized is the allowlist of non-test files that were over MaxLines
// when this test was written, each with the length it had then. It only
// shrinks: a listed file may not grow past its recorded length, and a
// listed file that is back under MaxLines (or gone) fails the test until
// its line is deleted here. Never add to it: split the file by concern.
var oversized = map[string]int{}

// repoRoot is the module root (two levels above this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above %s: %v", root, err)
	}
	return root
}

// goPackage is one directory's Go package, as this test sees it.
type goPackage struct {
	dir      string // relative to the root, slash-separated
	name     string // package name of the non-test files (or of the test files, for a test-only package)
	doc      string // the first package doc comment found (non-test files first)
	testOnly bool
}

// goFile is one non-test Go file and its length.
type goFile struct {
	path      string // relative to the root, slash-separated
	lines     int
	generated bool
}

// skipDir reports whether the walk leaves a directory out: what the go
// tool itself ignores (testdata, vendor, dot and underscore directories)
// and npm's trees.
func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" || name == "node_modules" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// scan walks the tree under root and returns its packages and non-test
// files. Every build-tagged file counts (a doc comment in a _linux.go file
// documents the package on Linux only, so doc.go is the place for it, but
// it is still found).
func scan(root string) ([]goPackage, []goFile, error) {
	pkgs := map[string]*goPackage{}
	var files []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".go") || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		isTest := strings.HasSuffix(d.Name(), "_test.go")
		name := f.Name.Name
		if isTest && strings.HasSuffix(name, "_test") {
			return nil // an external test package documents nothing
		}
		p := pkgs[dir]
		if p == nil {
			p = &goPackage{dir: dir, name: name, testOnly: true}
			pkgs[dir] = p
		}
		doc := ""
		if f.Doc != nil {
			doc = strings.TrimSpace(f.Doc.Text())
		}
		if !isTest {
			if p.testOnly {
				p.testOnly, p.name, p.doc = false, name, ""
			}
			files = append(files, goFile{path: rel, lines: countLines(src), generated: isGenerated(src)})
		}
		if p.doc == "" && doc != "" && isTest == p.testOnly {
			p.doc = doc
		}
		return nil
	})
	out := make([]goPackage, 0, len(pkgs))
	for _, p := range pkgs {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return out, files, err
}

func countLines(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// isGenerated follows the Go convention for generated files
// (https://go.dev/s/generatedcode).
func isGenerated(src []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "// Code generated ") && strings.HasSuffix(l, " DO NOT EDIT.") {
			return true
		}
		if strings.HasPrefix(l, "package ") {
			return false
		}
	}
	return false
}

// docProblem says what is wrong with a package's doc comment, or "".
func docProblem(p goPackage) string {
	if p.doc == "" {
		return "has no package doc comment (add a doc.go: // Package " + p.name + " ...)"
	}
	want := "Package " + p.name + " "
	if p.name == "main" {
		want = "Command "
	}
	if !strings.HasPrefix(p.doc, want) {
		return fmt.Sprintf("package doc comment should start with %q", want)
	}
	return ""
}

// sizeProblems checks every non-test file against MaxLines and allow (the
// allowlist): failures are returned, the soft list of every file over the
// limit is logged by the caller.
func sizeProblems(files []goFile, allow map[string]int) (fail []string, over []string) {
	seen := map[string]bool{}
	for _, f := range files {
		if f.generated {
			continue
		}
		limit, listed := allow[f.path]
		if listed {
			seen[f.path] = true
		}
		switch {
		case f.lines > MaxLines && !listed:
			fail = append(fail, fmt.Sprintf("%s has %d lines (limit %d): split it by concern", f.path, f.lines, MaxLines))
		case listed && f.lines > limit:
			fail = append(fail, fmt.Sprintf("%s grew to %d lines (allowlisted at %d, limit %d): split it, do not grow it", f.path, f.lines, limit, MaxLines))
		case listed && f.lines <= MaxLines:
			fail = append(fail, fmt.Sprintf("%s is down to %d lines: delete its entry from the allowlist in internal/meta", f.path, f.lines))
		}
		if f.lines > MaxLines {
			over = append(over, fmt.Sprintf("%s: %d lines", f.path, f.lines))
		}
	}
	for path := range allow {
		if !seen[path] {
			fail = append(fail, fmt.Sprintf("%s is allowlisted but no longer exists: delete its entry in internal/meta", path))
		}
	}
	sort.Strings(fail)
	return fail, over
}

// TestEveryPackageDocumented fails for any package in the module without a
// package doc comment in the godoc form.
func TestEveryPackageDocumented(t *testing.T) {
	pkgs, _, err := scan(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages: the walk is broken", len(pkgs))
	}
	for _, p := range pkgs {
		if msg := docProblem(p); msg != "" {
			t.Errorf("%s: %s", p.dir, msg)
		}
	}
}

// TestFileSizes fails for a non-test Go file over MaxLines that is not on
// the shrinking allowlist, and lists (softly) every file over the limit.
func TestFileSizes(t *testing.T) {
	_, files, err := scan(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	fail, over := sizeProblems(files, oversized)
	for _, o := range over {
		t.Logf("over %d lines: %s", MaxLines, o)
	}
	for _, f := range fail {
		t.Error(f)
	}
}

// TestCheckers runs the two checks on small made-up trees, so that each
// can be seen to fail (the positive control of the checks above).
func TestCheckers(t *testing.T) {
	long := "package g\n" + strings.Repeat("\n", MaxLines)
	cases := []struct {
		name     string
		files    map[string]string
		allow    map[string]int
		wantDoc  []string // directories reported by the doc check
		wantSize int      // size failures
	}{
		{name: "documented", files: map[string]string{
			"a/doc.go": "// Package a does a.\npackage a\n", "a/x.go": "package a\n"}},
		{name: "undocumented", files: map[string]string{"b/x.go": "package b\n"}, wantDoc: []string{"b"}},
		{name: "doc in another form", files: map[string]string{"b/x.go": "// Does b.\npackage b\n"}, wantDoc: []string{"b"}},
		{name: "command", files: map[string]string{"cmd/c/main.go": "// Command c does c.\npackage main\n"}},
		{name: "test-only package with a doc", files: map[string]string{"t/x_test.go": "// Package t tests.\npackage t\n"}},
		{name: "test-only package without", files: map[string]string{"t/x_test.go": "package t\n"}, wantDoc: []string{"t"}},
		{name: "doc only in a test file", files: map[string]string{
			"d/x.go": "package d\n", "d/x_test.go": "// Package d is d.\npackage d\n"}, wantDoc: []string{"d"}},
		{name: "external test package ignored", files: map[string]string{
			"e/doc.go": "// Package e is e.\npackage e\n", "e/x_test.go": "package e_test\n"}},
		{name: "testdata skipped", files: map[string]string{"f/doc.go": "// Package f is f.\npackage f\n",
			"f/testdata/x.go": "package nodoc\n" + strings.Repeat("\n", 2*MaxLines)}},
		{name: "long file", files: map[string]string{"g/doc.go": "// Package g is g.\npackage g\n", "g/big.go": long}, wantSize: 1},
		{name: "long test file", files: map[string]string{"g/doc.go": "// Package g is g.\npackage g\n", "g/big_test.go": "package g\n" + strings.Repeat("\n", MaxLines)}},
		{name: "long generated file", files: map[string]string{"g/doc.go": "// Package g is g.\npackage g\n",
			"g/big.go": "// Code generated by x. DO NOT EDIT.\n\n" + long}},
		{name: "allowlisted", files: map[string]string{"g/doc.go": "// Package g is g.\npackage g\n", "g/big.go": long},
			allow: map[string]int{"g/big.go": MaxLines + 1}},
		{name: "allowlisted and grown", files: map[string]string{"g/doc.go": "// Package g is g.\npackage g\n", "g/big.go": long + "\n"},
			allow: map[string]int{"g/big.go": MaxLines + 1}, wantSize: 1},
		{name: "allowlisted but split", files: map[string]string{"g/doc.go": "// Package g is g.\npackage g\n", "g/big.go": "package g\n"},
			allow: map[string]int{"g/big.go": MaxLines + 1}, wantSize: 1},
		{name: "allowlisted but gone", files: map[string]string{"g/doc.go": "// Package g is g.\npackage g\n"},
			allow: map[string]int{"g/big.go": MaxLines + 1}, wantSize: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, src := range tc.files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			pkgs, files, err := scan(root)
			if err != nil {
				t.Fatal(err)
			}
			var gotDoc []string
			for _, p := range pkgs {
				if docProblem(p) != "" {
					gotDoc = append(gotDoc, p.dir)
				}
			}
			if fmt.Sprint(gotDoc) != fmt.Sprint(tc.wantDoc) {
				t.Errorf("doc check reported %v, want %v", gotDoc, tc.wantDoc)
			}
			fail, _ := sizeProblems(files, tc.allow)
			if len(fail) != tc.wantSize {
				t.Errorf("size check reported %q, want %d failure(s)", fail, tc.wantSize)
			}
		})
	}
}
