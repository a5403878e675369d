package secret

import (
	"context"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
)

// The store checks its caller before anything else: the right, then the
// store's presence, then tokens, then another tenant. The owner's key is
// the positive control.
func TestCallerRights(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, nil)
	owner := rights.Scope{Tenant: "acme", Actor: "k", Rights: rights.FromScopes([]string{"read", "write"})}
	reader := rights.Scope{Tenant: "acme", Actor: "k", Rights: rights.Of(rights.Read)}
	token := rights.Scope{Tenant: "acme", Actor: "k", Sandbox: "sb-x", Token: true, Rights: owner.Rights}
	admin := rights.Scope{Tenant: "default", Actor: "admin", Rights: rights.All}
	set := func(st *Store, sc rights.Scope, tenant string) error {
		_, _, err := st.Set(ctx, sc, tenant, "TOKEN", []byte("v"))
		return err
	}
	list := func(st *Store, sc rights.Scope, tenant string) error { _, err := st.List(ctx, sc, tenant); return err }
	for _, tc := range []struct {
		name   string
		call   func(*Store, rights.Scope, string) error
		st     *Store
		sc     rights.Scope
		tenant string
		code   errs.Code
		msg    string
	}{
		{"owner sets", set, s, owner, "", "", ""},
		{"owner lists", list, s, owner, "", "", ""},
		{"reader sets", set, s, reader, "", errs.CodeForbidden, `this key lacks the "write" scope`},
		{"reader lists", list, s, reader, "", "", ""},
		{"no rights", list, s, rights.Scope{Tenant: "acme"}, "", errs.CodeForbidden, `this key lacks the "read" scope`},
		{"token", set, s, token, "", errs.CodeForbidden, "a sandbox token cannot manage secrets"},
		{"another tenant", set, s, owner, "other", errs.CodeForbidden, "only an admin key can manage another tenant's secrets"},
		{"admin, another tenant", set, s, admin, "acme", "", ""},
		{"no store, no right", set, nil, reader, "", errs.CodeForbidden, `this key lacks the "write" scope`},
		{"no store", set, nil, owner, "", errs.CodeUnsupported, "this server has no secret store"},
	} {
		err := tc.call(tc.st, tc.sc, tc.tenant)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if errs.CodeOf(err) != tc.code || errs.Public(err) != tc.msg {
			t.Errorf("%s: %v, want %s %q", tc.name, err, tc.code, tc.msg)
		}
	}
	if err := s.Delete(ctx, reader, "", "TOKEN"); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("a reader deleted: %v", err)
	}
	if _, err := s.Info(ctx, owner, "", "TOKEN"); err != nil {
		t.Errorf("owner's info: %v", err)
	}
}
