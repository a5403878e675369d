package secret

import (
	"errors"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

func TestNormalizeRules(t *testing.T) {
	ok := func(host, header, value string) Rule { return Rule{Host: host, Header: header, Value: value} }
	got, err := NormalizeRules([]Rule{ok("API.Example.com.", "authorization", "Bearer {secret:TOKEN}"),
		ok("api.example.com", "x-api-key", "{secret:KEY}"), ok("b.example", "X-Two", "{secret:A}:{secret:B}")})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Host != "api.example.com" || got[0].Header != "Authorization" || got[1].Header != "X-Api-Key" {
		t.Fatalf("not canonical: %+v", got)
	}
	if n := Names(got); strings.Join(n, ",") != "A,B,KEY,TOKEN" {
		t.Fatalf("names: %v", n)
	}
	// A value without a placeholder is a fixed header: no secret.
	fixed, err := NormalizeRules([]Rule{ok("a.com", "x-trace", "static 1")})
	if err != nil || fixed[0].Header != "X-Trace" || len(Names(fixed)) != 0 {
		t.Fatalf("a fixed header: %+v %v", fixed, err)
	}
	if r := ForHost(got, "api.example.com", 443); len(r) != 2 {
		t.Fatalf("for host: %v", r)
	}
	for _, c := range []struct {
		name string
		port int
	}{{"other.example", 443}, {"api.example.com", 8443}, {"api.example.com", 80}} {
		if r := ForHost(got, c.name, c.port); len(r) != 0 {
			t.Fatalf("for %s:%d: %v", c.name, c.port, r)
		}
	}
	ported, err := NormalizeRules([]Rule{ok("api.example.com:8443", "X-K", "{secret:K}"), ok("b.example:443", "X-K", "{secret:K}")})
	if err != nil {
		t.Fatal(err)
	}
	if ported[0].Host != "api.example.com:8443" || ported[1].Host != "b.example" {
		t.Fatalf("ports not canonical: %+v", ported)
	}
	if n, p := ported[0].Target(); n != "api.example.com" || p != 8443 {
		t.Fatalf("target: %s %d", n, p)
	}
	if r := ForHost(ported, "api.example.com", 8443); len(r) != 1 {
		t.Fatalf("for port 8443: %v", r)
	}
	if r := ForHost(ported, "api.example.com", 443); len(r) != 0 {
		t.Fatalf("a rule for 8443 applies to 443: %v", r)
	}
	for _, tc := range []struct {
		rule Rule
		want string
	}{
		{ok("", "Authorization", "{secret:A}"), "host"},
		{ok("*.example.com", "Authorization", "{secret:A}"), "wildcards"},
		{ok("203.0.113.7", "Authorization", "{secret:A}"), "IP"},
		{ok("https://api.example.com", "Authorization", "{secret:A}"), "no scheme"},
		{ok("api.example.com/x", "Authorization", "{secret:A}"), "no scheme"},
		{ok("[::1]:443", "Authorization", "{secret:A}"), "no scheme"},
		{ok("api.example.com:0", "Authorization", "{secret:A}"), "port"},
		{ok("api.example.com:65536", "Authorization", "{secret:A}"), "port"},
		{ok("api.example.com:08443", "Authorization", "{secret:A}"), "port"},
		{ok("api.example.com:", "Authorization", "{secret:A}"), "port"},
		{ok("a.com", "", "{secret:A}"), "header name"},
		{ok("a.com", "Bad Header", "{secret:A}"), "header name"},
		{ok("a.com", "Host", "{secret:A}"), "cannot be injected"},
		{ok("a.com", "content-length", "{secret:A}"), "cannot be injected"},
		{ok("a.com", "Transfer-Encoding", "{secret:A}"), "cannot be injected"},
		{ok("a.com", "Proxy-Authorization", "{secret:A}"), "cannot be injected"},
		{ok("a.com", "Connection", "{secret:A}"), "cannot be injected"},
		{ok("a.com", "Authorization", "Bearer {secret:A"), "unterminated"},
		{ok("a.com", "Authorization", "{secret:}"), "invalid secret name"},
		{ok("a.com", "Authorization", "{secret:a b}"), "invalid secret name"},
		{ok("a.com", "Authorization", "x\r\nInjected: yes {secret:A}"), "not allowed in an HTTP header"},
		{ok("a.com", "Authorization", strings.Repeat("{secret:A}", MaxRefs+1)), "at most"},
		{ok("a.com", "Authorization", strings.Repeat("x", MaxTemplateBytes)+"{secret:A}"), "at most"},
	} {
		_, err := NormalizeRules([]Rule{tc.rule})
		if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), "network.inject[0]") {
			t.Errorf("%+v: %v, want an invalid_argument about %q naming network.inject[0]", tc.rule, err, tc.want)
		}
	}
	if _, err := NormalizeRules([]Rule{ok("a.com", "X-A", "{secret:A}"), ok("A.com", "x-a", "{secret:B}")}); err == nil ||
		!strings.Contains(err.Error(), "network.inject[1]") {
		t.Errorf("a duplicate rule: %v", err)
	}
	many := make([]Rule, MaxRules+1)
	for i := range many {
		many[i] = ok("a.com", "X-H"+itoa(i), "{secret:A}")
	}
	if _, err := NormalizeRules(many); err == nil {
		t.Error("too many rules accepted")
	}
	if r, err := NormalizeRules(nil); r != nil || err != nil {
		t.Errorf("no rules: %v %v", r, err)
	}
}

func TestTemplateRender(t *testing.T) {
	tpl, err := ParseTemplate("Bearer {secret:T} {not a ref} {secret:U}!")
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{"T": "tok", "U": "u"}
	get := func(n string) ([]byte, error) {
		v, ok := vals[n]
		if !ok {
			return nil, errors.New("no secret " + n)
		}
		return []byte(v), nil
	}
	if s, err := tpl.Render(get); err != nil || s != "Bearer tok {not a ref} u!" {
		t.Fatalf("render: %q %v", s, err)
	}
	vals["U"] = "evil\r\nX-Injected: 1"
	if s, err := tpl.Render(get); err == nil || strings.Contains(err.Error(), "evil") {
		t.Fatalf("a value with CRLF rendered (header injection): %q %v", s, err)
	}
	delete(vals, "U")
	if _, err := tpl.Render(get); err == nil {
		t.Fatal("a missing secret rendered")
	}
	vals["U"] = strings.Repeat("x", MaxRenderedBytes)
	if _, err := tpl.Render(get); err == nil {
		t.Fatal("an oversized header rendered")
	}
}

// FuzzParseTemplate: whatever is parsed renders to a valid header value
// holding exactly the literals and the values, and refs are valid names.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"Bearer {secret:T}", "{secret:A}{secret:B}", "{secret:", "{secret:}", "{{secret:A}}",
		"x{secret:A}\r\n", "{secret:A}" + strings.Repeat("{", 10), "\t{secret:_a.b-c}\t", "{Secret:A}", "\xff{secret:A}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := ParseTemplate(s)
		if err != nil {
			return
		}
		refs := tpl.Refs()
		if len(refs) > MaxRefs {
			t.Fatalf("%q: %d refs", s, len(refs))
		}
		for _, r := range refs {
			if !ValidName(r) {
				t.Fatalf("%q: ref %q is not a valid name", s, r)
			}
		}
		out, err := tpl.Render(func(n string) ([]byte, error) { return []byte("<" + n + ">"), nil })
		if err != nil {
			t.Fatalf("%q: render: %v", s, err)
		}
		if strings.ContainsAny(out, "\r\n\x00") {
			t.Fatalf("%q rendered to %q", s, out)
		}
		// Rendering with the placeholders themselves gives back the input.
		back, _ := tpl.Render(func(n string) ([]byte, error) { return []byte(refOpen + n + "}"), nil })
		if back != s {
			t.Fatalf("%q round-trips to %q", s, back)
		}
	})
}

// FuzzNormalizeRules: accepted rules are canonical (normalising again
// changes nothing) and never name a framing header.
func FuzzNormalizeRules(f *testing.F) {
	f.Add("api.example.com", "Authorization", "Bearer {secret:T}")
	f.Add("API.EXAMPLE.COM.", "x-api-key", "{secret:K}")
	f.Add("*.example.com", "Host", "{secret:K}")
	f.Add("a..b", "Content-Length", "1{secret:K}")
	f.Add("xn--bcher-kva.example", "Cookie", "s={secret:K}")
	f.Fuzz(func(t *testing.T, host, header, value string) {
		out, err := NormalizeRules([]Rule{{Host: host, Header: header, Value: value}})
		if err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid {
				t.Fatalf("error of code %s: %v", errs.CodeOf(err), err)
			}
			return
		}
		again, err := NormalizeRules(out)
		if err != nil || again[0] != out[0] {
			t.Fatalf("not canonical: %+v → %+v (%v)", out[0], again, err)
		}
		if refusedHeaders[out[0].Header] {
			t.Fatalf("framing header %q accepted", out[0].Header)
		}
		if n, p := out[0].Target(); p < 1 || p > 65535 || len(ForHost(out, n, p)) != 1 {
			t.Fatalf("target of %+v: %s %d", out[0], n, p)
		}
	})
}
