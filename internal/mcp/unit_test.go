package mcp

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
)

func TestCapture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int
		writes []string
		want   string
		trunc  bool
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef", false},
		{"exact", 6, []string{"abc", "def"}, "abcdef", false},
		{"head and tail", 6, []string{"abcdefghij"}, "abc" + truncationMarker(4, 3, 3, 10) + "hij", true},
		{"many small writes", 4, []string{"1", "2", "3", "4", "5", "6", "7"}, "12" + truncationMarker(3, 2, 2, 7) + "67", true},
		{"big write after head", 4, []string{"ab", "cdefgh"}, "ab" + truncationMarker(4, 2, 2, 8) + "gh", true},
		{"utf8 cut is clean", 5, []string{"ééé"}, "é" + truncationMarker(2, 2, 2, 6) + "é", true},
		{"utf8 cut at the head", 3, []string{"ééé"}, "" + truncationMarker(4, 0, 2, 6) + "é", true},
		{"binary becomes replacement", 10, []string{"a\xffb"}, "a\uFFFDb", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(tc.limit)
			total := 0
			for _, w := range tc.writes {
				n, err := c.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write = %d, %v", n, err)
				}
				total += n
			}
			if got := c.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if c.truncated() != tc.trunc || c.total != int64(total) {
				t.Errorf("truncated %v total %d, want %v %d", c.truncated(), c.total, tc.trunc, total)
			}
			if len(c.head) > c.headCap || len(c.tail) > c.tailCap {
				t.Errorf("kept %d+%d bytes over the budget %d", len(c.head), len(c.tail), tc.limit)
			}
		})
	}
}

func TestCaptureBounded(t *testing.T) {
	c := newCapture(1024)
	chunk := []byte(strings.Repeat("x", 4096))
	for i := 0; i < 1000; i++ {
		_, _ = c.Write(chunk)
	}
	if cap(c.tail) > 2*c.tailCap+len(chunk) || len(c.head) != c.headCap {
		t.Fatalf("memory grew: head %d tail cap %d", len(c.head), cap(c.tail))
	}
	if !strings.Contains(c.String(), "bytes omitted") {
		t.Fatal("no truncation marker")
	}
}

func FuzzCapture(f *testing.F) {
	f.Add(8, []byte("hello, wörld\n"), []byte("\xff\xfe tail"))
	f.Add(2, []byte(""), []byte("é"))
	f.Fuzz(func(t *testing.T, limit int, a, b []byte) {
		if limit < 0 || limit > 1<<16 {
			return
		}
		c := newCapture(limit)
		_, _ = c.Write(a)
		_, _ = c.Write(b)
		s := c.String()
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8: %q", s)
		}
		all := string(a) + string(b)
		if !c.truncated() && s != validText(all) {
			t.Fatalf("untruncated %q != %q", s, all)
		}
	})
}

func TestReadLines(t *testing.T) {
	long := strings.Repeat("y", maxLineBytes+10)
	for _, tc := range []struct {
		name                   string
		file                   string
		start, end, limit      int
		content                string
		last, total            int
		more, truncated, isErr bool
	}{
		{name: "whole", file: "a\nb\nc\n", start: 1, end: 10, limit: 100, content: "a\nb\nc\n", last: 3, total: 3},
		{name: "no final newline", file: "a\nb", start: 1, end: 10, limit: 100, content: "a\nb", last: 2, total: 2},
		{name: "range", file: "1\n2\n3\n4\n5\n", start: 2, end: 3, limit: 100, content: "2\n3\n", last: 3, total: 5, more: true},
		{name: "empty", file: "", start: 1, end: 10, limit: 100, content: "", last: 0, total: 0},
		{name: "past the end", file: "a\n", start: 5, end: 9, limit: 100, content: "", last: 4, total: 1},
		{name: "byte budget", file: "aaaa\nbbbb\ncccc\n", start: 1, end: 10, limit: 10, content: "aaaa\nbbbb\n", last: 2, total: 3, more: true, truncated: true},
		{name: "one huge line", file: "abcdefghij\nk\n", start: 1, end: 10, limit: 4, content: "abcd", last: 1, total: 2, more: true, truncated: true},
		{name: "long line cut", file: long + "\nz\n", start: 1, end: 10, limit: 1 << 20, content: long[:maxLineBytes] + lineCutMarker + "z\n", last: 2, total: 2, truncated: true},
		{name: "binary", file: "a\x00b\n", start: 1, end: 10, limit: 100, isErr: true},
		{name: "binary outside the range is fine", file: "ok\n\x00\n", start: 1, end: 1, limit: 100, content: "ok\n", last: 1, total: 2, more: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte at a time too: the reader must not depend on chunking.
			for _, r := range []io.Reader{strings.NewReader(tc.file), iotest.OneByteReader(strings.NewReader(tc.file))} {
				got, err := readLines(r, tc.start, tc.end, tc.limit)
				if tc.isErr {
					if !errors.Is(err, errBinary) {
						t.Fatalf("err = %v, want the binary refusal", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.content != tc.content || got.last != tc.last || got.total != tc.total || got.more != tc.more || got.truncated != tc.truncated {
					t.Fatalf("got %+v\nwant content %q last %d total %d more %v truncated %v", got, tc.content, tc.last, tc.total, tc.more, tc.truncated)
				}
			}
		})
	}
}

func TestReadLinesReadError(t *testing.T) {
	_, err := readLines(iotest.ErrReader(errors.New("boom")), 1, 10, 100)
	if errs.CodeOf(err) != errs.CodeUnavailable {
		t.Fatalf("err = %v", err)
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
			return
		}
		if len(got.content) > limit+len(lineCutMarker)*(end-start+1) || !utf8.ValidString(got.content) {
			t.Fatalf("content %q over limit %d or invalid", got.content, limit)
		}
		if got.last < start-1 || got.last > end {
			t.Fatalf("last %d outside %d..%d", got.last, start, end)
		}
	})
}

func TestCommandLine(t *testing.T) {
	if argv, err := commandLine("echo hi | wc -c", nil, ""); err != nil || strings.Join(argv, " ") != "/bin/sh -c echo hi | wc -c" {
		t.Fatalf("command: %q %v", argv, err)
	}
	if argv, err := commandLine("", []string{"ls", "-l"}, ""); err != nil || len(argv) != 2 {
		t.Fatalf("argv: %q %v", argv, err)
	}
	for _, bad := range [][2]any{{"", []string(nil)}, {"ls", []string{"ls"}}} {
		if _, err := commandLine(bad[0].(string), bad[1].([]string), ""); errs.CodeOf(err) != errs.CodeInvalid && explain(err).Code != errs.CodeInvalid {
			t.Fatalf("commandLine(%v) = %v, want invalid", bad, err)
		}
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code errs.Code
		has  string
	}{
		{errs.Invalid("cwd too long"), errs.CodeInvalid, "Invalid input: cwd too long"},
		{errs.New(errs.CodeLimit, "tenant a has 5 sandboxes"), errs.CodeLimit, "sandbox_delete"},
		{errs.Wrap(errs.CodeInternal, errors.New("/var/lib/paddock/secret path"), "boom"), errs.CodeInternal, "internal error"},
		{errors.New("/host/path leaked?"), errs.CodeInternal, "internal error"},
		{errNoSandbox("sb-x"), errs.CodeNotFound, "Call sandbox_list"},
	} {
		te := explain(tc.err)
		if te.Code != tc.code || !strings.Contains(te.Msg, tc.has) {
			t.Errorf("explain(%v) = %v %q; want %v containing %q", tc.err, te.Code, te.Msg, tc.code, tc.has)
		}
		if strings.Contains(te.Msg, "/var/lib") || strings.Contains(te.Msg, "/host/") {
			t.Errorf("explain leaked a cause: %q", te.Msg)
		}
	}
}

func TestSchemasHaveNoNullTypes(t *testing.T) {
	s, err := schemaFor[execIn]()
	if err != nil {
		t.Fatal(err)
	}
	if argv := s.Properties["argv"]; argv.Type != "array" || len(argv.Types) != 0 {
		t.Fatalf("argv schema: %+v", argv)
	}
	if len(s.Required) != 0 {
		t.Fatalf("exec requires %v; every argument is optional", s.Required)
	}
	out, err := schemaFor[outputOut]()
	if err != nil {
		t.Fatal(err)
	}
	if out.Properties["process"].Properties["cmd"].Type != "array" {
		t.Fatalf("nested schema not simplified: %+v", out.Properties["process"].Properties["cmd"])
	}
}
