package auth

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseToken(t *testing.T) {
	c := Claims{KeyID: "key_abcdefghijklmnop", Sandbox: "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", Scopes: []Scope{ScopeRead, ScopeExec},
		IssuedAt: time.Unix(1_900_000_000, 0), ExpiresAt: time.Unix(1_900_000_900, 0)}
	body, err := encodeClaims(&c)
	if err != nil {
		t.Fatal(err)
	}
	tok := encodeToken(body, tokenMAC([]byte("k"), body, nil))
	cases := []struct {
		in   string
		kind Kind
		ok   bool
	}{
		{NewKey(), KindKey, true},
		{NewE2BKey(), KindE2BKey, true},
		{tok, KindToken, true},
		{"some-admin-key-from-the-env", KindOpaque, true},
		{"pdk_short", 0, false},
		{"pdk_" + strings.Repeat("A", 32), 0, false}, // upper case is not in the alphabet
		{"e2b_" + strings.Repeat("g", 40), 0, false},
		{"e2b_" + strings.Repeat("A", 40), 0, false},
		{"pdt_", 0, false},
		{"pdt_" + strings.Repeat("A", 40), 0, false},
		{tok + "A", 0, false},
		{tok[:len(tok)-1], 0, false},
		{"", 0, false},
		{strings.Repeat("x", MaxCredentialLen+1), 0, false},
	}
	for _, tc := range cases {
		p, err := ParseToken(tc.in)
		if (err == nil) != tc.ok || (tc.ok && p.Kind != tc.kind) {
			t.Errorf("ParseToken(%.20q) = kind %d, %v; want kind %d ok=%v", tc.in, p.Kind, err, tc.kind, tc.ok)
		}
	}
	p, _ := ParseToken(tok)
	got := p.Claims
	if got.KeyID != c.KeyID || got.Sandbox != c.Sandbox || joinScopes(got.Scopes) != "read,exec" ||
		!got.IssuedAt.Equal(c.IssuedAt) || !got.ExpiresAt.Equal(c.ExpiresAt) || got.TokenID != c.TokenID {
		t.Fatalf("claims = %+v, want %+v", got, c)
	}
	if len(tok) > 200 {
		t.Errorf("token is %d bytes long", len(tok))
	}
}

// FuzzParseToken: the parser never panics, accepts nothing outside its
// bounds, and whatever it accepts as a token re-encodes to the same bytes
// (one token, one spelling).
func FuzzParseToken(f *testing.F) {
	secret := bytes.Repeat([]byte{1}, 32)
	for _, c := range []Claims{
		{KeyID: "admin", Sandbox: "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", Scopes: []Scope{ScopeRead}, IssuedAt: time.Unix(1, 0), ExpiresAt: time.Unix(2, 0)},
		{KeyID: "key_abcdefghijklmnop", Sandbox: "sb-zzzzzzzzzzzzzzzzzzzzzzzzzz", Scopes: []Scope{ScopeRead, ScopeWrite, ScopeExec},
			IssuedAt: time.Unix(1_900_000_000, 0), ExpiresAt: time.Unix(1_900_086_400, 0)},
	} {
		body, err := encodeClaims(&c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(encodeToken(body, tokenMAC(secret, body, nil)))
	}
	for _, s := range []string{NewKey(), NewE2BKey(), "", "pdt_", "pdt_AAAA", "pdk_", "e2b_", "Bearer x",
		"pdt_AQAAAAAAAAABAAAAAAAAAAIB", strings.Repeat("pdt_", 200), "pdt_\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseToken(s)
		if err != nil {
			return
		}
		if len(s) > MaxCredentialLen {
			t.Fatalf("accepted %d bytes", len(s))
		}
		if p.Kind != KindToken {
			return
		}
		c := p.Claims
		if len(c.Scopes) == 0 || !c.ExpiresAt.After(c.IssuedAt) || c.KeyID == "" || c.Sandbox == "" {
			t.Fatalf("accepted bad claims %+v", c)
		}
		body, err := encodeClaims(&c)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", c, err)
		}
		if !bytes.Equal(body, p.body) {
			t.Fatalf("re-encoding differs:\n%x\n%x", body, p.body)
		}
		if encodeToken(p.body, p.mac) != s {
			t.Fatalf("token %q has a second spelling", s)
		}
	})
}

func TestFuzzSeedsVerify(t *testing.T) {
	// The minted seeds of FuzzParseToken are real tokens: a service with the
	// secret would check their MAC; with another it refuses.
	f := newFixture(t)
	admin, _ := f.auth(f.admin)
	tok, err := f.svc.MintToken(ScopeOf(admin), "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", []Scope{ScopeRead}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseToken(tok.Token)
	if err != nil || p.Kind != KindToken || p.Claims.TokenID != tok.ID {
		t.Fatalf("parse minted: %+v, %v", p, err)
	}
}

func BenchmarkAuthenticateKeyCached(b *testing.B) {
	f := newFixture(b)
	f.svc.now = time.Now
	k := f.key(b, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead, ScopeExec}})
	ctx := context.Background()
	if _, err := f.svc.Authenticate(ctx, k.Key); err != nil { // fills the cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.svc.Authenticate(ctx, k.Key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuthenticateToken(b *testing.B) {
	f := newFixture(b)
	f.svc.now = time.Now
	k := f.key(b, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead, ScopeExec}})
	ctx := context.Background()
	kp, _ := f.svc.Authenticate(ctx, k.Key)
	tok, err := f.svc.MintToken(ScopeOf(kp), "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", []Scope{ScopeExec}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.svc.Authenticate(ctx, tok.Token); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuthenticateKeyUncached(b *testing.B) {
	f := newFixture(b)
	f.svc.now = time.Now
	k := f.key(b, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f.svc.forget(k.ID)
		if _, err := f.svc.Authenticate(ctx, k.Key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuthenticateAdmin(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.svc.Authenticate(ctx, f.admin); err != nil {
			b.Fatal(err)
		}
	}
}
