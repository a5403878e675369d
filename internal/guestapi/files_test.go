package guestapi

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
)

func TestCleanPath(t *testing.T) {
	long := strings.Repeat("a", 256)
	for _, tc := range []struct {
		in, want, err string
	}{
		{"/etc/passwd", "/etc/passwd", ""},
		{"notes.txt", "/workspace/notes.txt", ""},
		{"./a//b/", "/workspace/a/b", ""},
		{"/", "/", ""},
		{"/a/./b", "/a/b", ""},
		{"%2e%2e", "/workspace/%2e%2e", ""}, // a literal name: decoding happens once, at the edge
		{"", "", "empty"},
		{"../etc/passwd", "", `".."`},
		{"/workspace/../etc", "", `".."`},
		{"a/..", "", `".."`},
		{"a\x00b", "", "NUL"},
		{"/" + long, "", "longer than 255"},
		{"/" + strings.Repeat("a/", 2100), "", "longer than 4096"},
		{strings.Repeat("a/", 2046) + "b", "", "longer than 4096"}, // fits alone, not under /workspace
	} {
		got, err := CleanPath(tc.in)
		if tc.err != "" {
			if err == nil || errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CleanPath(%.40q) = %q, %v; want an invalid_argument mentioning %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzCleanPath: a path that is accepted is absolute, clean, free of NUL
// and "..", within the length limits, and cleaning it again changes
// nothing.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"/etc/passwd", "a/b", "../x", "/a/../b", "a\x00", "//", ".", "..", "/./.", "%2e%2e/%00",
		strings.Repeat("x", 300), "a/" + strings.Repeat("b", 255), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := CleanPath(in)
		if err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid {
				t.Fatalf("CleanPath(%q) error code %s", in, errs.CodeOf(err))
			}
			return
		}
		if !strings.HasPrefix(out, "/") || path.Clean(out) != out || strings.IndexByte(out, 0) >= 0 || len(out) > MaxPathLen {
			t.Fatalf("CleanPath(%q) = %q", in, out)
		}
		for _, c := range strings.Split(out, "/") {
			if c == ".." || len(c) > MaxNameLen {
				t.Fatalf("CleanPath(%q) = %q has component %q", in, out, c)
			}
		}
		if again, err := CleanPath(out); err != nil || again != out {
			t.Fatalf("CleanPath not idempotent: %q -> %q -> %q, %v", in, out, again, err)
		}
		if strings.HasPrefix(in, "/") && out != path.Clean(in) {
			t.Fatalf("CleanPath(%q) = %q, path.Clean says %q", in, out, path.Clean(in))
		}
	})
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]uint32{"644": 0o644, "0644": 0o644, "0o755": 0o755, "1777": 0o1777, "0": 0} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %o, %v; want %o", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "8", "rwx", "4755", "2755", "77777", "-1", "0x1ff"} {
		if _, err := ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q): want an error", bad)
		}
	}
	if p := (FileInfo{Mode: "4755"}).Perm(); p.Perm() != 0o755 || p&os.ModeSetuid == 0 {
		t.Errorf("Perm of 4755 = %v", p)
	}
}

// FuzzParseMode: an accepted mode has only permission and sticky bits.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"644", "0o7777", "4755", "", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err == nil && m&^0o1777 != 0 {
			t.Fatalf("ParseMode(%q) = %o", s, m)
		}
	})
}

// FuzzAppendJSON: the hand-written encoding decodes to what encoding/json
// would decode from its own encoding.
func FuzzAppendJSON(f *testing.F) {
	f.Add("name", "/p/name", "link", int64(5), int64(1700000000123456789))
	f.Add("a\"b\\c\n\t\x01<>&", "\xff\xfe", "\u2028\u2029é", int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, name, p, target string, size, ns int64) {
		fi := FileInfo{Name: name, Path: p, Type: TypeFile, Size: size, Mode: "0644", MTime: time.Unix(0, ns).UTC(), Target: target, UID: 1000, GID: 7}
		if size%3 == 0 {
			fi.Metadata = map[string]string{name: target, "k": p}
		}
		lr := ListResult{Path: p, Entries: []FileInfo{fi, fi}, Truncated: size%2 == 0}
		var want ListResult
		got, err := DecodeList(lr.AppendJSON(nil))
		if err != nil {
			t.Fatalf("hand-written JSON does not parse: %v\n%s", err, lr.AppendJSON(nil))
		}
		std, _ := json.Marshal(lr)
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
		}
		if bytes.Equal(lr.AppendJSON(nil)[:len(lr.AppendJSON(nil))-1], std) == false && utf8.ValidString(name+p+target) && !strings.ContainsAny(name+p+target, "\u2028\u2029") {
			t.Fatalf("bytes differ from encoding/json:\n%s\n%s", lr.AppendJSON(nil), std)
		}
	})
}

// FuzzListDecode: the fast listing decoder gives exactly what
// encoding/json gives (or fails where it fails).
func FuzzListDecode(f *testing.F) {
	fi := FileInfo{Name: "a\"b", Path: "/w/a\"b", Type: TypeSymlink, Size: 3, Mode: "0777", MTime: time.Unix(1700000000, 5).UTC(), Target: "/etc", UID: 1000, GID: 1000}
	lr := ListResult{Path: "/w", Entries: []FileInfo{fi, {Name: "x"}}, Truncated: true}
	std, _ := json.Marshal(lr)
	f.Add(lr.AppendJSON(nil))
	f.Add(std)
	for _, s := range []string{`{}`, `{"entries":null}`, `{"entries":[]}`, `{"Path":"x"}`, `{"path":"\u00e9"}`, `{"entries":[{"size":1e3}]}`,
		`{"entries":[{"uid":-0,"mtime":"2020-01-01T00:00:00+01:00"}]}`, `{"truncated":true,"truncated":false}`, `{"path":"a"} x`,
		`{"entries":[{"mtime":"bad"}]}`, `{"entries":[{"name":"\xff"}]}`, `{"entries":[{"size":01}]}`, `{"path":"\/"}`,
		`{"entries":[{"metadata":{"a":"b","a":"c"}}]}`, `{"entries":[{"metadata":null}]}`, `{"entries":[{"metadata":{"a":1}}]}`,
		`{"entries":[{"metadata":{}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var ref ListResult
		fast, errFast := DecodeList(data)
		errRef := json.Unmarshal(data, &ref)
		if (errFast == nil) != (errRef == nil) {
			t.Fatalf("fast error %v, encoding/json error %v for %q", errFast, errRef, data)
		}
		if errRef == nil && !reflect.DeepEqual(fast, ref) {
			t.Fatalf("for %q:\nfast %+v\nref  %+v", data, fast, ref)
		}
	})
}
