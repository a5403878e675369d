package mcp

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/textcut"
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
		if !c.truncated() && s != textcut.Valid(all) {
			t.Fatalf("untruncated %q != %q", s, all)
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
