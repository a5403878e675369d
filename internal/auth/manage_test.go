package auth

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/tenant"
)

// Every method that manages keys, tenants or tokens checks its caller
// first, with the answers the REST API gives; the admin is the positive
// control.
func TestManageRights(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	reader := ScopeOf(Principal{KeyID: "key_r", Tenant: "acme", Scopes: []Scope{ScopeRead, ScopeWrite, ScopeExec}})
	token := ScopeOf(Principal{KeyID: "admin", Tenant: DefaultTenant, Scopes: []Scope{ScopeRead}, Sandbox: "sb-x", TokenID: "tok_x"})
	calls := map[string]func(sc rights.Scope, s *Service) error{
		"create key": func(sc rights.Scope, s *Service) error {
			_, err := s.CreateKey(ctx, sc, KeyRequest{Tenant: "acme", Scopes: []Scope{ScopeRead}})
			return err
		},
		"list keys":   func(sc rights.Scope, s *Service) error { _, err := s.ListKeys(ctx, sc, ""); return err },
		"get key":     func(sc rights.Scope, s *Service) error { _, err := s.GetKey(ctx, sc, "key_nope"); return err },
		"revoke key":  func(sc rights.Scope, s *Service) error { return s.RevokeKey(ctx, sc, "key_nope") },
		"list tenant": func(sc rights.Scope, s *Service) error { _, err := s.ListTenants(ctx, sc); return err },
		"get tenant":  func(sc rights.Scope, s *Service) error { _, err := s.GetTenant(ctx, sc, "acme"); return err },
		"create tenant": func(sc rights.Scope, s *Service) error {
			_, err := s.CreateTenant(ctx, sc, "t-new", tenant.Quotas{})
			return err
		},
		"set quotas": func(sc rights.Scope, s *Service) error {
			_, err := s.SetQuotas(ctx, sc, "acme", tenant.Quotas{MaxSandboxes: 3})
			return err
		},
	}
	for name, call := range calls {
		if err := call(reader, f.svc); errs.CodeOf(err) != errs.CodeForbidden || errs.Public(err) != `this key lacks the "admin" scope` {
			t.Errorf("%s by a non-admin key: %v", name, err)
		}
		if err := call(token, f.svc); errs.CodeOf(err) != errs.CodeForbidden {
			t.Errorf("%s by a token: %v", name, err)
		}
		// A server without a key store refuses as one would, then says so.
		if err := call(reader, nil); errs.CodeOf(err) != errs.CodeForbidden {
			t.Errorf("%s by a non-admin key, no store: %v", name, err)
		}
		if err := call(testAdmin, nil); errs.CodeOf(err) != errs.CodeUnsupported {
			t.Errorf("%s by the admin, no store: %v", name, err)
		}
		if err := call(testAdmin, f.svc); err != nil && errs.CodeOf(err) != errs.CodeNotFound {
			t.Errorf("%s by the admin: %v", name, err)
		}
	}
	// Tokens: never more than the caller holds, never from a token.
	if _, err := f.svc.MintToken(ScopeOf(Principal{KeyID: "key_r", Tenant: "acme", Scopes: []Scope{ScopeRead}}), "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", []Scope{ScopeExec}, time.Minute); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("a read key minted exec: %v", err)
	}
	if _, err := f.svc.MintToken(token, "sb-x", []Scope{ScopeRead}, time.Minute); errs.Public(err) != "a sandbox token cannot mint tokens" {
		t.Errorf("a token minted: %v", err)
	}
	if _, err := (*Service)(nil).MintToken(testAdmin, "sb-x", []Scope{ScopeRead}, time.Minute); errs.CodeOf(err) != errs.CodeUnsupported {
		t.Errorf("minted without a key store: %v", err)
	}
}
