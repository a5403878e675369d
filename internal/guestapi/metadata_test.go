package guestapi

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
)

func TestValidMetadata(t *testing.T) {
	for _, c := range []struct {
		name string
		ns   string
		kv   map[string]string
		code errs.Code // "" valid
	}{
		{"ok", "e2b", map[string]string{"owner": "me", "x.y-z_1": "ünïcode"}, ""},
		{"none", "paddock", nil, ""},
		{"empty namespace", "", map[string]string{"k": "v"}, errs.CodeInvalid},
		{"namespace with a dot", "a.b", nil, errs.CodeInvalid},
		{"upper-case namespace", "E2B", nil, errs.CodeInvalid},
		{"long namespace", strings.Repeat("a", 33), nil, errs.CodeInvalid},
		{"empty key", "e2b", map[string]string{"": "v"}, errs.CodeInvalid},
		{"long key", "e2b", map[string]string{strings.Repeat("k", MaxMetadataKeyBytes+1): "v"}, errs.CodeInvalid},
		{"key with a space", "e2b", map[string]string{"a b": "v"}, errs.CodeInvalid},
		{"key with a control", "e2b", map[string]string{"a\tb": "v"}, errs.CodeInvalid},
		{"key not ASCII", "e2b", map[string]string{"é": "v"}, errs.CodeInvalid},
		{"value not UTF-8", "e2b", map[string]string{"k": "\xff"}, errs.CodeInvalid},
		{"value with NUL", "e2b", map[string]string{"k": "\x00"}, errs.CodeInvalid},
		{"value too long", "e2b", map[string]string{"k": strings.Repeat("v", MaxMetadataValueBytes+1)}, errs.CodeInvalid},
	} {
		err := ValidMetadata(c.ns, c.kv)
		if errs.CodeOf(err) != c.code && !(c.code == "" && err == nil) {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
		}
	}
}

// FuzzValidMetadata: what is accepted makes attribute names the kernel
// takes (at most 255 bytes, printable, in user.<ns>.) and values of text.
func FuzzValidMetadata(f *testing.F) {
	f.Add("e2b", "owner", "me")
	f.Add("a-b_c", "k.k", "\u2028")
	f.Add("", "k", "v")
	f.Fuzz(func(t *testing.T, ns, k, v string) {
		if ValidMetadata(ns, map[string]string{k: v}) != nil {
			return
		}
		name := "user." + ns + "." + k
		if len(name) > 255 || strings.ContainsAny(name, " \x00\n/") || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			t.Fatalf("accepted %q = %q", name, v)
		}
		for i := 0; i < len(ns); i++ {
			if ns[i] == '.' {
				t.Fatalf("a namespace with a dot: %q", ns)
			}
		}
	})
}
