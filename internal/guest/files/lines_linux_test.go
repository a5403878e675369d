//go:build linux

package files

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

func TestReadLines(t *testing.T) {
	long := strings.Repeat("y", guestapi.LineCutBytes+10)
	for _, tc := range []struct {
		name                    string
		file                    string
		start, end, limit       int
		content                 string
		last, total             int
		more, truncated, binary bool
	}{
		{name: "whole", file: "a\nb\nc\n", start: 1, end: 10, limit: 100, content: "a\nb\nc\n", last: 3, total: 3},
		{name: "no final newline", file: "a\nb", start: 1, end: 10, limit: 100, content: "a\nb", last: 2, total: 2},
		{name: "range", file: "1\n2\n3\n4\n5\n", start: 2, end: 3, limit: 100, content: "2\n3\n", last: 3, total: 5, more: true},
		{name: "empty", file: "", start: 1, end: 10, limit: 100, content: "", last: 0, total: 0},
		{name: "past the end", file: "a\n", start: 5, end: 9, limit: 100, content: "", last: 4, total: 1},
		{name: "byte budget", file: "aaaa\nbbbb\ncccc\n", start: 1, end: 10, limit: 10, content: "aaaa\nbbbb\n", last: 2, total: 3, more: true, truncated: true},
		{name: "one huge line", file: "abcdefghij\nk\n", start: 1, end: 10, limit: 4, content: "abcd", last: 1, total: 2, more: true, truncated: true},
		{name: "long line cut", file: long + "\nz\n", start: 1, end: 10, limit: 1 << 20, content: long[:guestapi.LineCutBytes] + guestapi.LineCutMarker + "z\n", last: 2, total: 2, truncated: true},
		{name: "invalid UTF-8 replaced", file: "a\xffb\n", start: 1, end: 1, limit: 100, content: "a\uFFFDb\n", last: 1, total: 1},
		{name: "binary", file: "a\x00b\n", start: 1, end: 10, limit: 100, binary: true},
		{name: "binary outside the range is fine", file: "ok\n\x00\n", start: 1, end: 1, limit: 100, content: "ok\n", last: 1, total: 2, more: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte at a time too: the reader must not depend on chunking.
			for _, r := range []io.Reader{strings.NewReader(tc.file), iotest.OneByteReader(strings.NewReader(tc.file))} {
				got, err := readLines(r, tc.start, tc.end, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				if tc.binary {
					if !got.Binary || got.Content != "" {
						t.Fatalf("got %+v, want a binary refusal", got)
					}
					continue
				}
				if got.Content != tc.content || got.End != tc.last || got.Total != tc.total || got.More != tc.more || got.Truncated != tc.truncated || got.Start != tc.start {
					t.Fatalf("got %+v\nwant content %q last %d total %d more %v truncated %v", got, tc.content, tc.last, tc.total, tc.more, tc.truncated)
				}
			}
		})
	}
}

func TestReadLinesReadError(t *testing.T) {
	if _, err := readLines(iotest.ErrReader(errors.New("boom")), 1, 10, 100); err == nil {
		t.Fatal("a read error was not reported")
	}
}

func FuzzReadLines(f *testing.F) {
	f.Add([]byte("a\nb\nc"), 1, 2, 3)
	f.Add([]byte("\n\n\n"), 2, 2, 1)
	f.Add([]byte("héllo\nwörld\n"), 1, 100, 3)
	f.Fuzz(func(t *testing.T, file []byte, start, end, limit int) {
		if start < 1 || end < start || limit < 1 || limit > 1<<20 || end > 1<<20 {
			return
		}
		got, err := readLines(strings.NewReader(string(file)), start, end, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Content) > limit+len(guestapi.LineCutMarker)*(end-start+1) || !utf8.ValidString(got.Content) {
			t.Fatalf("content %q over limit %d or invalid", got.Content, limit)
		}
		if got.End < start-1 || got.End > end {
			t.Fatalf("last %d outside %d..%d", got.End, start, end)
		}
	})
}

// TestLinesRoute: through the protocol, as the host reads them; the
// answer carries the range only, however large the file.
func TestLinesRoute(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	p := filepath.Join(d, "big.txt")
	var b strings.Builder
	for i := 1; i <= 200000; i++ {
		b.WriteString(strings.Repeat("x", 40) + "\n")
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := c.ReadLines(ctx, guestapi.LinesRequest{Path: p, Start: 100000, End: 100002})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != strings.Repeat(strings.Repeat("x", 40)+"\n", 3) || res.End != 100002 || res.Total != 200000 || !res.More || res.Size != int64(b.Len()) {
		t.Fatalf("got %+v", res)
	}
	for _, tc := range []struct {
		req  guestapi.LinesRequest
		code errs.Code
	}{
		{guestapi.LinesRequest{Path: p, Start: 5, End: 2}, errs.CodeInvalid},
		{guestapi.LinesRequest{Path: p, MaxBytes: guestapi.MaxLinesBytes + 1}, errs.CodeInvalid},
		{guestapi.LinesRequest{Path: p, Start: -1}, errs.CodeInvalid},
		{guestapi.LinesRequest{Path: d}, errs.CodeInvalid},
		{guestapi.LinesRequest{Path: filepath.Join(d, "missing")}, errs.CodeNotFound},
	} {
		_, err := c.ReadLines(ctx, tc.req)
		wantCode(t, err, tc.code, "")
	}
}
