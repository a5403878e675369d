package api

import (
	"context"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/wire"
)

func (s *Server) keyRoutes() {
	s.authed("POST /v1/keys", rights.Keys, s.createKey)
	s.authed("GET /v1/keys", rights.Keys, s.listKeys)
	s.authed("DELETE /v1/keys/{id}", rights.Keys, s.revokeKey)
	s.authed("POST /v1/tenants", rights.Keys, s.createTenant)
	s.authed("GET /v1/tenants", rights.Keys, s.listTenants)
	s.authed("GET /v1/tenants/{name}", rights.Keys, s.getTenant)
	s.authed("PUT /v1/tenants/{name}", rights.Keys, s.setTenant)
	s.authed("POST /v1/sandboxes/{id}/tokens", rights.Read, s.createToken)
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	b, ok := decoded[wire.KeyRequest](w, r)
	if !ok {
		return
	}
	if b.Tenant == "" {
		writeError(w, r, errs.Invalid("tenant is required"))
		return
	}
	req := auth.KeyRequest{Tenant: b.Tenant, Scopes: b.Scopes, Name: b.Name, Description: b.Description, Format: b.Format}
	switch {
	case b.ExpiresAt != nil && b.ExpiresInS != 0:
		writeError(w, r, errs.Invalid("give expires_at or expires_in_s, not both"))
		return
	case b.ExpiresAt != nil:
		req.ExpiresAt = *b.ExpiresAt
	case b.ExpiresInS < 0 || b.ExpiresInS > 10*365*86400:
		writeError(w, r, errs.Invalid("expires_in_s must be between 1 and %d", 10*365*86400))
		return
	case b.ExpiresInS > 0:
		req.ExpiresAt = time.Now().Add(time.Duration(b.ExpiresInS) * time.Second)
	}
	k, err := s.keys.CreateKey(r.Context(), sc, req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // the key is in this answer
	writeJSON(w, http.StatusCreated, k)
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	list, err := s.keys.ListKeys(r.Context(), sc, r.URL.Query().Get("tenant"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.KeyList{Keys: list})
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	replyNoContent(w, r, s.keys.RevokeKey(r.Context(), sc, r.PathValue("id")))
}

// withUsage is t as the API shows it: with what its running sandboxes
// hold.
func (s *Server) withUsage(ctx context.Context, sc sandbox.Scope, t tenant.Tenant) (wire.Tenant, error) {
	live, err := s.m.TenantSandboxes(ctx, sc, t.Name)
	if err != nil {
		return wire.Tenant{}, err
	}
	u := tenant.UsageOf(live)
	return wire.Tenant{Name: t.Name, Quotas: t.Quotas, CreatedAt: t.CreatedAt, Usage: &u}, nil
}

func (s *Server) createTenant(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	b, ok := decoded[wire.TenantRequest](w, r)
	if !ok {
		return
	}
	t, err := s.keys.CreateTenant(r.Context(), sc, b.Name, b.Quotas)
	if err != nil {
		writeError(w, r, err)
		return
	}
	v, err := s.withUsage(r.Context(), sc, t)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/tenants/"+t.Name)
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) listTenants(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	list, err := s.keys.ListTenants(r.Context(), sc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]wire.Tenant, 0, len(list))
	for _, t := range list {
		v, err := s.withUsage(r.Context(), sc, t)
		if err != nil {
			writeError(w, r, err)
			return
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, wire.TenantList{Tenants: out})
}

// replyTenant answers t, with its usage, or err.
func (s *Server) replyTenant(w http.ResponseWriter, r *http.Request, sc sandbox.Scope, t tenant.Tenant, err error) {
	if err == nil {
		var v wire.Tenant
		if v, err = s.withUsage(r.Context(), sc, t); err == nil {
			writeJSON(w, http.StatusOK, v)
			return
		}
	}
	writeError(w, r, err)
}

func (s *Server) getTenant(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	t, err := s.keys.GetTenant(r.Context(), sc, r.PathValue("name"))
	s.replyTenant(w, r, sc, t, err)
}

func (s *Server) setTenant(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	b, ok := decoded[wire.QuotasRequest](w, r)
	if !ok {
		return
	}
	t, err := s.keys.SetQuotas(r.Context(), sc, r.PathValue("name"), b.Quotas)
	s.replyTenant(w, r, sc, t, err)
}

// createToken mints a sandbox-scoped token. The sandbox is looked up
// first, so another tenant's sandbox answers 404 whatever the body says.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	id := r.PathValue("id")
	if _, err := s.m.Get(r.Context(), sc, id); err != nil {
		writeError(w, r, err)
		return
	}
	b, ok := decoded[wire.TokenRequest](w, r)
	if !ok {
		return
	}
	if b.TTLS < 0 || b.TTLS > int64(auth.MaxTokenTTL/time.Second) {
		writeError(w, r, errs.Invalid("ttl_s must be between 1 and %d", int64(auth.MaxTokenTTL/time.Second)))
		return
	}
	tok, err := s.keys.MintToken(sc, id, b.Scopes, time.Duration(b.TTLS)*time.Second)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, tok)
}
