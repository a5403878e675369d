package secret

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/store"
)

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st.Mode(), err)
	}
	k2, err := LoadKey(dir) // the same key again
	if err != nil {
		t.Fatal(err)
	}
	sealed := k1.Seal([]byte("aad"), []byte("v"))
	if got, err := k2.Open([]byte("aad"), sealed); err != nil || string(got) != "v" {
		t.Fatalf("reloaded key: %q %v", got, err)
	}
	// Readable by others: refused (whoever reads it decrypts everything).
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("group-readable key: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), []byte("nothex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir); err == nil {
		t.Fatal("a malformed key file was accepted")
	}
}

func TestSealBindsAAD(t *testing.T) {
	k, _ := NewKey(bytes.Repeat([]byte{7}, 32))
	a := k.Seal([]byte("t\x00a"), []byte("value"))
	b := k.Seal([]byte("t\x00a"), []byte("value"))
	if bytes.Equal(a, b) {
		t.Fatal("two seals of one value are equal (nonce reuse)")
	}
	if _, err := k.Open([]byte("t\x00b"), a); err == nil {
		t.Fatal("a ciphertext opened under another row's additional data")
	}
	a[len(a)-1] ^= 1
	if _, err := k.Open([]byte("t\x00a"), a); err == nil {
		t.Fatal("a tampered ciphertext opened")
	}
	other, _ := NewKey(bytes.Repeat([]byte{8}, 32))
	if _, err := other.Open([]byte("t\x00a"), b); err == nil {
		t.Fatal("opened with another key")
	}
	if _, err := NewKey([]byte("short")); err == nil {
		t.Fatal("a short key was accepted")
	}
}

func newTestStore(t *testing.T, admit Admitter) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(dir, Migrations...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	k, err := LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStore(Options{DB: db.SQL(), Key: k, Admit: admit})
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	s, dir := newTestStore(t, nil)
	const value = "ghp_S3cr3tV4lu3-only-in-the-control-plane"
	in, created, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "GITHUB_TOKEN", []byte(value), "API.github.com", "api.github.com:443")
	if err != nil || !created || in.Name != "GITHUB_TOKEN" || in.CreatedAt.IsZero() || strings.Join(in.Hosts, ",") != "api.github.com" {
		t.Fatalf("set: %+v %v %v", in, created, err)
	}
	in2, created, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "GITHUB_TOKEN", []byte(value+"2"))
	if err != nil || created || !in2.CreatedAt.Equal(in.CreatedAt) || in2.UpdatedAt.Before(in.UpdatedAt) ||
		strings.Join(in2.Hosts, ",") != "api.github.com" { // replaced without hosts: they are kept
		t.Fatalf("replace: %+v %v %v", in2, created, err)
	}
	if v, err := s.GetFor(ctx, "acme", "GITHUB_TOKEN", "api.github.com"); err != nil || string(v) != value+"2" {
		t.Fatalf("get: %q %v", v, err)
	}
	// Bound to api.github.com (port 443) only.
	for _, h := range []string{"evil.example.com", "api.github.com:8443", "github.com"} {
		if v, err := s.GetFor(ctx, "acme", "GITHUB_TOKEN", h); errs.CodeOf(err) != errs.CodeForbidden || v != nil {
			t.Errorf("get for %s: %q %v", h, v, err)
		}
	}
	// Tenants are apart: another tenant has no such secret.
	if _, err := s.GetFor(ctx, "other", "GITHUB_TOKEN", "api.github.com"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("other tenant: %v", err)
	}
	if list, err := s.List(ctx, rights.Scope{Rights: rights.All}, "other"); err != nil || len(list) != 0 {
		t.Fatalf("other tenant's list: %v %v", list, err)
	}
	if list, err := s.List(ctx, rights.Scope{Rights: rights.All}, "acme"); err != nil || len(list) != 1 || list[0].Name != "GITHUB_TOKEN" {
		t.Fatalf("list: %v %v", list, err)
	}
	rule := func(host, ref string) []Rule {
		return []Rule{{Host: host, Header: "Authorization", Value: "Bearer {secret:" + ref + "}"}}
	}
	for _, tc := range []struct {
		rules []Rule
		code  errs.Code
		msg   string
	}{
		{rule("api.github.com", "GITHUB_TOKEN"), "", ""},
		{rule("api.github.com", "NOPE"), errs.CodeInvalid, "do not exist: NOPE"},
		{rule("evil.example.com", "GITHUB_TOKEN"), errs.CodeForbidden, "may be sent only to api.github.com, not to evil.example.com"},
		{rule("api.github.com:8443", "GITHUB_TOKEN"), errs.CodeForbidden, "not to api.github.com:8443"},
	} {
		err := s.CheckRules(ctx, "acme", tc.rules)
		if tc.code == "" {
			if err != nil {
				t.Errorf("CheckRules(%v) = %v", tc.rules, err)
			}
			continue
		}
		if errs.CodeOf(err) != tc.code || !strings.Contains(errs.Public(err), tc.msg) {
			t.Errorf("CheckRules(%v) = %v, want %s %q", tc.rules, err, tc.code, tc.msg)
		}
	}
	// Rebound: the rule follows the binding; the value stays.
	if in, err := s.Bind(ctx, rights.Scope{Rights: rights.All}, "acme", "GITHUB_TOKEN", []string{"uploads.github.com"}); err != nil ||
		strings.Join(in.Hosts, ",") != "uploads.github.com" {
		t.Fatalf("bind: %+v %v", in, err)
	}
	if err := s.CheckRules(ctx, "acme", rule("api.github.com", "GITHUB_TOKEN")); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("a rule for the host unbound since: %v", err)
	}
	if v, err := s.GetFor(ctx, "acme", "GITHUB_TOKEN", "uploads.github.com"); err != nil || string(v) != value+"2" {
		t.Fatalf("get after bind: %q %v", v, err)
	}
	if _, err := s.Bind(ctx, rights.Scope{Rights: rights.All}, "acme", "NOPE", []string{"a.example.com"}); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("binding a missing secret: %v", err)
	}
	// Encrypted at rest: the value is nowhere in the database's files.
	s.db.Exec("PRAGMA wal_checkpoint(FULL)")
	for _, f := range []string{"paddock.db", "paddock.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(value)) {
			t.Fatalf("%s holds the value in the clear", f)
		}
	}
	// A row moved to another tenant does not decrypt there.
	if _, err := s.db.Exec(`UPDATE secrets SET tenant='evil' WHERE tenant='acme'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetFor(ctx, "evil", "GITHUB_TOKEN", "uploads.github.com"); err == nil || strings.Contains(err.Error(), value) {
		t.Fatalf("moved row: %v", err)
	}
	if err := s.Delete(ctx, rights.Scope{Rights: rights.All}, "evil", "GITHUB_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, rights.Scope{Rights: rights.All}, "evil", "GITHUB_TOKEN"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("second delete: %v", err)
	}
}

func TestStoreBadInput(t *testing.T) {
	ctx := context.Background()
	denied := errs.New(errs.CodeForbidden, "tenant locked: secrets are not allowed")
	s, _ := newTestStore(t, func(_ context.Context, tenant string, _ []string) error {
		if tenant == "locked" {
			return denied
		}
		return nil
	})
	for _, tc := range []struct {
		tenant, name, value string
		code                errs.Code
	}{
		{"acme", "", "v", errs.CodeInvalid},
		{"acme", "1ABC", "v", errs.CodeInvalid},
		{"acme", "A B", "v", errs.CodeInvalid},
		{"acme", "A/B", "v", errs.CodeInvalid},
		{"acme", strings.Repeat("A", MaxNameLen+1), "v", errs.CodeInvalid},
		{"acme", "OK", "", errs.CodeInvalid},
		{"acme", "OK", "line\nbreak", errs.CodeInvalid},
		{"acme", "OK", "nul\x00", errs.CodeInvalid},
		{"acme", "OK", strings.Repeat("x", MaxValueBytes+1), errs.CodeInvalid},
		{"", "OK", "v", errs.CodeInvalid},
		{"locked", "OK", "v", errs.CodeForbidden},
	} {
		if _, _, err := s.Set(ctx, rights.Scope{Rights: rights.All}, tc.tenant, tc.name, []byte(tc.value)); errs.CodeOf(err) != tc.code {
			t.Errorf("Set(%q, %q, %.20q) = %v, want %s", tc.tenant, tc.name, tc.value, err, tc.code)
		} else if err != nil && tc.value != "" && len(tc.value) > 3 && strings.Contains(errs.Public(err), tc.value) {
			t.Errorf("the error repeats the value: %v", err)
		}
	}
	// Positive control: the same store takes a good one, tab included.
	if _, _, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "_ok.name-1", []byte("a\tb")); err != nil {
		t.Fatal(err)
	}
}

// Secrets stored before they were bound to hosts (the secrets-2-hosts
// migration) are bound to none: injection is refused, naming the command
// that binds them, until a key with the secrets right does.
func TestUnboundSecret(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, nil)
	if _, _, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "OLD", []byte("v"), "api.example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE secrets SET hosts='' WHERE name='OLD'`); err != nil { // as the migration leaves it
		t.Fatal(err)
	}
	r := []Rule{{Host: "api.example.com", Header: "X-Key", Value: "{secret:OLD}"}}
	if err := s.CheckRules(ctx, "acme", r); errs.CodeOf(err) != errs.CodeForbidden || !strings.Contains(errs.Public(err), "paddock secret bind OLD --host api.example.com") {
		t.Errorf("an unbound secret: %v", err)
	}
	if _, err := s.GetFor(ctx, "acme", "OLD", "api.example.com"); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("an unbound secret's value: %v", err)
	}
	if in, err := s.Info(ctx, rights.Scope{Rights: rights.All}, "acme", "OLD"); err != nil || in.Hosts == nil || len(in.Hosts) != 0 {
		t.Errorf("info of an unbound secret: %+v %v", in, err)
	}
	if _, err := s.Bind(ctx, rights.Scope{Rights: rights.All}, "acme", "OLD", []string{"api.example.com"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckRules(ctx, "acme", r); err != nil {
		t.Errorf("bound again: %v", err)
	}
}

func TestNormalizeHosts(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string // "" : refused
	}{
		{[]string{"API.example.com."}, "api.example.com"},
		{[]string{"b.example.com", "a.example.com:8443", "b.example.com:443"}, "a.example.com:8443,b.example.com"},
		{nil, ""},
		{[]string{}, ""},
		{[]string{"*.example.com"}, ""},
		{[]string{"203.0.113.1"}, ""},
		{[]string{"https://a.example.com"}, ""},
		{[]string{"a.example.com:0"}, ""},
		{[]string{"a.example.com:99999"}, ""},
		{[]string{"a.example.com\nb.example.com"}, ""},
		{make([]string, MaxHosts+1), ""},
	} {
		got, err := NormalizeHosts(tc.in)
		if tc.want == "" {
			if err == nil || errs.CodeOf(err) != errs.CodeInvalid {
				t.Errorf("NormalizeHosts(%q) = %v, %v; want refused", tc.in, got, err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("NormalizeHosts(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// FuzzNormalizeHosts: whatever it accepts is canonical (normalising it
// again changes nothing) and holds no separator of the stored form.
func FuzzNormalizeHosts(f *testing.F) {
	for _, s := range []string{"api.example.com", "A.B.example.com:8443", "*.x.com", "1.2.3.4", "a\nb", "x:443", "é.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got, err := NormalizeHosts([]string{h})
		if err != nil {
			return
		}
		again, err := NormalizeHosts(got)
		if err != nil || strings.Join(again, ",") != strings.Join(got, ",") {
			t.Fatalf("%q -> %q -> %q %v", h, got, again, err)
		}
		if strings.ContainsAny(got[0], "\n\x00/ ") {
			t.Fatalf("%q -> %q", h, got)
		}
	})
}

func TestStoreTenantLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a thousand rows")
	}
	ctx := context.Background()
	s, _ := newTestStore(t, nil)
	for i := 0; i < MaxPerTenant; i++ {
		if _, _, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "S"+strings.Repeat("x", i%7)+itoa(i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "ONE_MORE", []byte("v")); errs.CodeOf(err) != errs.CodeLimit {
		t.Fatalf("over the limit: %v", err)
	}
	if _, _, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "S0", []byte("replaced")); err != nil {
		t.Fatalf("replacing at the limit: %v", err)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
