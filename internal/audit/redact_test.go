package audit

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	testKey   = "pdk_abcdefghijklmnopqrstuvwxyz234567"
	testToken = "pdt_Zm9vYmFyYmF6cXV4"
	testE2B   = "e2b_0123456789abcdef"
)

func TestRedactString(t *testing.T) {
	cases := []struct{ in, secret string }{
		{"curl -H 'Authorization: Bearer " + "sk-live-aaaaaaaaaaaaaaaa'", "sk-live-aaaaaaaaaaaaaaaa"},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="},
		{"bearer abcdefghijklmnop", "abcdefghijklmnop"},
		{"export PADDOCK_API_KEY=" + testKey, testKey},
		{"key " + testKey + " end", testKey},
		{testToken, testToken},
		{"E2B_API_KEY=" + testE2B, testE2B},
		{"psql postgres://app:hunter2pass@db:5432/x", "hunter2pass"},
		{"mysql --password=s3cretvalue -u root", "s3cretvalue"},
		{`GITHUB_TOKEN="ghp_quoted value" make`, "ghp_quoted value"},
		{"AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI", "wJalrXUtnFEMI"},
		{"cookie: session=abcdef123456", "abcdef123456"},
		{"secret: hunter2value", "hunter2value"}, // a value, not a {secret:NAME} reference
	}
	for _, c := range cases {
		out := RedactString(c.in)
		if strings.Contains(out, c.secret) {
			t.Errorf("RedactString(%q) = %q: secret kept", c.in, out)
		}
		if !strings.Contains(out, Redacted) {
			t.Errorf("RedactString(%q) = %q: no marker", c.in, out)
		}
	}
	// Controls: ordinary text is left alone.
	for _, s := range []string{"echo hello world", "ls -la /workspace", "make test", "a=b c=d", "key_id=k_123", "python3 -c 'print(1)'",
		"Bearer {secret:API_TOKEN}", "token={secret:ops.key-2}"} { // inject rules name their secrets

		if got := RedactString(s); got != s {
			t.Errorf("RedactString(%q) = %q: changed ordinary text", s, got)
		}
	}
}

func TestRedactTree(t *testing.T) {
	in := map[string]any{
		"argv":     []string{"sh", "-c", "curl -H 'Authorization: Bearer abcdefghijklmnop' https://x"},
		"password": "hunter2",
		"Token":    12345,
		"key_id":   "k_123",
		"env":      map[string]string{"GITHUB_TOKEN": "ghp_x", "PATH": "/usr/bin", "DB": "postgres://u:pw12345@h/d"},
		"spec":     map[string]any{"labels": map[string]string{"team": "a"}, "api_key": ""},
		"long":     strings.Repeat("é", 5000),
	}
	raw := Redact(in)
	s := string(raw)
	for _, secret := range []string{"hunter2", "12345\"", "ghp_x", "pw12345", "abcdefghijklmnop"} {
		if strings.Contains(s, secret) {
			t.Errorf("secret %q kept: %s", secret, s)
		}
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out["key_id"] != "k_123" || out["env"].(map[string]any)["PATH"] != "/usr/bin" {
		t.Errorf("identifiers and ordinary values must stay: %s", s)
	}
	if l := out["long"].(string); len(l) > maxStringBytes+200 || !utf8.ValidString(l) || !strings.Contains(l, "bytes cut") {
		t.Errorf("long string not clipped cleanly: %d bytes", len(l))
	}
	// A huge argv is bounded.
	big := make([]string, 4000)
	for i := range big {
		big[i] = strings.Repeat("x", 1000)
	}
	b := Redact(map[string]any{"argv": big})
	if len(b) > maxArgsBytes || !strings.Contains(string(b), `"argv":["xxx`) || !strings.Contains(string(b), "more]") {
		t.Errorf("huge args not bounded to a useful prefix: %d bytes %.80s", len(b), b)
	}
	// The same through the JSON path (a struct).
	type spec struct{ Argv []string }
	if b := Redact(spec{big}); len(b) > maxArgsBytes || !strings.Contains(string(b), `"Argv":["xxx`) {
		t.Errorf("huge struct args: %d bytes", len(b))
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "hello", "Bearer abcdefghijklmn", testKey, "x://a:b@c", `{"password":"x"}`, "TOKEN=abc; ls", "é\xff\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := RedactString(s)
		// Nothing recognisable as a Paddock key survives.
		if m := keyValueRE.FindString(out); m != "" && !strings.HasSuffix(m, "_") && !strings.Contains(out, Redacted) {
			t.Fatalf("key survived: %q -> %q", s, out)
		}
		if RedactString(out) != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, RedactString(out))
		}
		raw := Redact(map[string]any{"a": s, s: []any{s}, "secret": s})
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("Redact produced invalid JSON: %v", err)
		}
		if len(raw) > maxArgsBytes+1024 {
			t.Fatalf("unbounded: %d", len(raw))
		}
		if s != "" && len(s) > 3 && strings.Contains(string(raw), s) && RedactString(s) == s && !SensitiveName(s) {
			// ordinary text may stay — but never under the "secret" field
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			if m["secret"] != Redacted {
				t.Fatalf("secret field kept: %s", raw)
			}
		}
	})
}
