package gate

import (
	"net/http"
	"strings"
	"testing"
)

func TestAuthParam(t *testing.T) {
	for _, c := range []struct {
		v, scheme, want string
		ok              bool
	}{
		{"Bearer KEY", "Bearer", "KEY", true},
		{"bearer KEY", "Bearer", "KEY", true},
		{"BEARER KEY", "Bearer", "KEY", true},
		{"bEaReR\tKEY ", "Bearer", "KEY", true},
		{"  Bearer   KEY", "Bearer", "KEY", true},
		{"Basic dXNlcjo=", "basic", "dXNlcjo=", true},
		{"Bearer", "Bearer", "", false},
		{"Bearer  ", "Bearer", "", false},
		{"BearerKEY", "Bearer", "", false},
		{"Bearer.KEY", "Bearer", "", false},
		{"Basic KEY", "Bearer", "", false},
		{"Token KEY", "Bearer", "", false},
		{"", "Bearer", "", false},
		{"Bearerx KEY", "Bearer", "", false},
	} {
		got, ok := AuthParam(c.v, c.scheme)
		if got != c.want || ok != c.ok {
			t.Errorf("AuthParam(%q, %q) = %q %v, want %q %v", c.v, c.scheme, got, ok, c.want, c.ok)
		}
	}
}

func TestBearerHeaders(t *testing.T) {
	for _, c := range []struct {
		what string
		h    http.Header
		want string
		err  bool
	}{
		{"none", http.Header{}, "", false},
		{"lower-case scheme", http.Header{"Authorization": {"bearer k"}}, "k", false},
		{"another scheme", http.Header{"Authorization": {"Basic k"}}, "", false},
		{"two headers", http.Header{"Authorization": {"Basic app", "Bearer k"}}, "", true},
		{"two bearers", http.Header{"Authorization": {"Bearer a", "Bearer b"}}, "", true},
	} {
		got, err := Bearer(c.h)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: Bearer = %q %v, want %q (error %v)", c.what, got, err, c.want, c.err)
		}
	}
	// A header set by name in any case is the same header (net/http
	// canonicalises it on the way in).
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("authorization", "BEARER k")
	if got, _ := Bearer(r.Header); got != "k" {
		t.Errorf("authorization: BEARER k → %q", got)
	}
}

func TestSubprotocol(t *testing.T) {
	for _, c := range []struct {
		offered []string
		want    string
	}{
		{[]string{"paddock.v1, bearer.KEY"}, "KEY"},
		{[]string{"paddock.v1", "Bearer.KEY"}, "KEY"},
		{[]string{"BEARER.KEY"}, "KEY"},
		{[]string{"bearer."}, ""},
		{[]string{"paddock.v1"}, ""},
		{[]string{"xbearer.KEY"}, ""},
	} {
		if got := Subprotocol(http.Header{"Sec-Websocket-Protocol": c.offered}, "bearer."); got != c.want {
			t.Errorf("Subprotocol(%q) = %q, want %q", c.offered, got, c.want)
		}
	}
}

// FuzzAuthParam: a value recognised for a scheme starts with that scheme
// in some letter case followed by a blank, and the credentials returned
// are exactly the rest, trimmed — the same answer for every spelling of
// the scheme.
func FuzzAuthParam(f *testing.F) {
	for _, s := range []string{"Bearer k", "bearer\tk", " BEARER  k ", "Basic", "Bearer", "", "\t", "Bearerk"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		cred, ok := AuthParam(v, "Bearer")
		if !ok {
			if cred != "" {
				t.Fatalf("%q: not ok but %q", v, cred)
			}
			return
		}
		if cred == "" || strings.Trim(cred, " \t") != cred {
			t.Fatalf("%q: credentials %q", v, cred)
		}
		rest := strings.TrimLeft(v, " \t")
		if !strings.EqualFold(rest[:6], "bearer") || (rest[6] != ' ' && rest[6] != '\t') {
			t.Fatalf("%q: recognised without the scheme", v)
		}
		if got, ok2 := AuthParam(strings.ToUpper(rest[:6])+rest[6:], "bearer"); !ok2 || got != cred {
			t.Fatalf("%q: another spelling of the scheme gives %q %v", v, got, ok2)
		}
	})
}
