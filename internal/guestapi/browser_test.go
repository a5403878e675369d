package guestapi

import (
	"strings"
	"testing"
)

func TestParseDevToolsActivePort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		port int
		path string
		ok   bool
	}{
		{"40719\n/devtools/browser/9d42213b-fc70-482a-9c81-80647425a54b\n", 40719, "/devtools/browser/9d42213b-fc70-482a-9c81-80647425a54b", true},
		{"9222\n/devtools/browser/ABCDEF", 9222, "/devtools/browser/ABCDEF", true},
		{"40719\n", 0, "", false},                                                 // half written
		{"", 0, "", false},                                                        // empty
		{"0\n/devtools/browser/abc\n", 0, "", false},                              // port 0
		{"70000\n/devtools/browser/abc\n", 0, "", false},                          // beyond 65535
		{"80\n/devtools/page/abc\n", 0, "", false},                                // not the browser's
		{"80\n/devtools/browser/../../x\n", 0, "", false},                         // not an id
		{"80\n/devtools/browser/abc?x=1\n", 0, "", false},                         // query
		{"80\n/devtools/browser/abc\nextra\n", 0, "", false},                      // three lines
		{"-1\n/devtools/browser/abc\n", 0, "", false},                             // negative
		{strings.Repeat("1", 5000), 0, "", false},                                 // large
		{"80\n/devtools/browser/" + strings.Repeat("a", 65) + "\n", 0, "", false}, // long id
	} {
		port, path, err := ParseDevToolsActivePort([]byte(tc.in))
		if (err == nil) != tc.ok || port != tc.port || path != tc.path {
			t.Errorf("%q: got %d %q %v", tc.in, port, path, err)
		}
	}
}

func FuzzParseDevToolsActivePort(f *testing.F) {
	for _, s := range []string{"40719\n/devtools/browser/9d42213b-fc70-482a-9c81-80647425a54b\n", "1\n/devtools/browser/a",
		"\n\n", "65535\n/devtools/browser/\n", "80\r\n/devtools/browser/abc\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		port, path, err := ParseDevToolsActivePort(b)
		if err != nil {
			return
		}
		if port < 1 || port > 65535 {
			t.Fatalf("port %d", port)
		}
		id, ok := strings.CutPrefix(path, "/devtools/browser/")
		if !ok || !ValidDevToolsID(id) || strings.ContainsAny(path, "?#%\\ \r\n") {
			t.Fatalf("path %q", path)
		}
	})
}
