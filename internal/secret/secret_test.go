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
	in, created, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "GITHUB_TOKEN", []byte(value))
	if err != nil || !created || in.Name != "GITHUB_TOKEN" || in.CreatedAt.IsZero() {
		t.Fatalf("set: %+v %v %v", in, created, err)
	}
	in2, created, err := s.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "GITHUB_TOKEN", []byte(value+"2"))
	if err != nil || created || !in2.CreatedAt.Equal(in.CreatedAt) || in2.UpdatedAt.Before(in.UpdatedAt) {
		t.Fatalf("replace: %+v %v %v", in2, created, err)
	}
	if v, err := s.Get(ctx, "acme", "GITHUB_TOKEN"); err != nil || string(v) != value+"2" {
		t.Fatalf("get: %q %v", v, err)
	}
	// Tenants are apart: another tenant has no such secret.
	if _, err := s.Get(ctx, "other", "GITHUB_TOKEN"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("other tenant: %v", err)
	}
	if list, err := s.List(ctx, rights.Scope{Rights: rights.All}, "other"); err != nil || len(list) != 0 {
		t.Fatalf("other tenant's list: %v %v", list, err)
	}
	if list, err := s.List(ctx, rights.Scope{Rights: rights.All}, "acme"); err != nil || len(list) != 1 || list[0].Name != "GITHUB_TOKEN" {
		t.Fatalf("list: %v %v", list, err)
	}
	if m, err := s.Missing(ctx, "acme", []string{"GITHUB_TOKEN", "NOPE"}); err != nil || len(m) != 1 || m[0] != "NOPE" {
		t.Fatalf("missing: %v %v", m, err)
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
	if _, err := s.Get(ctx, "evil", "GITHUB_TOKEN"); err == nil || strings.Contains(err.Error(), value) {
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
