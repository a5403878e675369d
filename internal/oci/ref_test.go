package oci

import (
	"context"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

func TestParseRef(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"debian:12", "index.docker.io/library/debian:12", true},
		{"127.0.0.1:5000/app", "127.0.0.1:5000/app:latest", true},
		{"ghcr.io/o/i@sha256:" + strings.Repeat("a", 64), "ghcr.io/o/i@sha256:" + strings.Repeat("a", 64), true},
		{"", "", false},
		{"http://x/y", "", false},
		{"UPPER/x", "", false},
		{"a b", "", false},
		{"x@sha256:short", "", false},
		{strings.Repeat("a", MaxRefLen+1), "", false},
	} {
		r, err := ParseRef(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseRef(%q) err = %v", c.in, err)
			continue
		}
		if err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid {
				t.Errorf("ParseRef(%q) code %s", c.in, errs.CodeOf(err))
			}
			continue
		}
		if r.Name() != c.want {
			t.Errorf("ParseRef(%q) = %q, want %q", c.in, r.Name(), c.want)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"debian:12", "a/b/c:d", "h:1/x@sha256:" + strings.Repeat("0", 64), "x:", "@", "::", "localhost/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid || len(errs.Public(err)) > 400 {
				t.Fatalf("bad error for %q: %v", s, err)
			}
			return
		}
		if _, err := ParseRef(r.Name()); err != nil {
			t.Fatalf("%q parsed to %q which does not parse: %v", s, r.Name(), err)
		}
	})
}

func TestParseDockerConfig(t *testing.T) {
	fn, err := ParseDockerConfig([]byte(`{"auths":{
		"https://index.docker.io/v1/":{"auth":"dXNlcjpwYXNz"},
		"reg.example:5000":{"username":"u","password":"p:w"},
		"tok.example":{"registrytoken":"T"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for reg, want := range map[string]Credential{
		"index.docker.io":  {Username: "user", Password: "pass"},
		"reg.example:5000": {Username: "u", Password: "p:w"},
		"tok.example":      {RegistryToken: "T"},
		"other.example":    {},
	} {
		if got, _ := fn(context.Background(), reg); got != want {
			t.Errorf("%s: %+v, want %+v", reg, got, want)
		}
	}
	for _, bad := range []string{`{"auths":{"x":{"auth":"!!"}}}`, `{"auths": {"x": {"auth": "c2VjcmV0"}}}`, `{not json "s3cret"`} {
		_, err := ParseDockerConfig([]byte(bad))
		if errs.CodeOf(err) != errs.CodeInvalid || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}
