package guestapi

import (
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestProtocolTable: the package doc's table lists every route, once, and
// nothing else (internal/guest checks that the agent serves exactly
// Routes).
func TestProtocolTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 4 && strings.HasPrefix(fields[0], "/v1/") {
			rows = append(rows, fields[0])
		}
	}
	if len(rows) == 0 {
		t.Fatal("no table in the package doc")
	}
	for _, r := range Routes {
		if n := countOf(rows, r); n != 1 {
			t.Errorf("route %s appears %d times in the table", r, n)
		}
	}
	for _, r := range rows {
		if !slices.Contains(Routes, r) {
			t.Errorf("the table lists %s, which is not a route", r)
		}
	}
	if !slices.Equal(rows, Routes) {
		t.Errorf("the table's order differs from Routes:\n%v\n%v", rows, Routes)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
