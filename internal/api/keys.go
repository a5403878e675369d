package api

import (
	"context"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
)

// keyService is what the key, tenant and token routes need of the
// authenticator (auth.Service provides it). A server whose Authenticator
// is something else answers these routes 501.
type keyService interface {
	CreateKey(ctx context.Context, req auth.KeyRequest) (auth.CreatedKey, error)
	ListKeys(ctx context.Context, tenant string) ([]auth.KeyInfo, error)
	RevokeKey(ctx context.Context, id string) error
	MintToken(p auth.Principal, sandbox string, scopes []auth.Scope, ttl time.Duration) (auth.Token, error)
	Tenants() *tenant.Store
}

func (s *Server) keyRoutes() {
	s.authed("POST /v1/keys", auth.ScopeAdmin, s.createKey)
	s.authed("GET /v1/keys", auth.ScopeAdmin, s.listKeys)
	s.authed("DELETE /v1/keys/{id}", auth.ScopeAdmin, s.revokeKey)
	s.authed("POST /v1/tenants", auth.ScopeAdmin, s.createTenant)
	s.authed("GET /v1/tenants", auth.ScopeAdmin, s.listTenants)
	s.authed("GET /v1/tenants/{name}", auth.ScopeAdmin, s.getTenant)
	s.authed("PUT /v1/tenants/{name}", auth.ScopeAdmin, s.setTenant)
	s.authed("POST /v1/sandboxes/{id}/tokens", auth.ScopeRead, s.createToken)
}

func (s *Server) keys(w http.ResponseWriter, r *http.Request) (keyService, bool) {
	ks, ok := s.o.Auth.(keyService)
	if !ok {
		writeError(w, r, errs.New(errs.CodeUnsupported, "this server has no key store"))
	}
	return ks, ok
}

// adminKeys is keys for the admin-only routes. Tokens never carry admin;
// refusing them here as well keeps it so if that ever changed.
func (s *Server) adminKeys(w http.ResponseWriter, r *http.Request, p auth.Principal) (keyService, bool) {
	if p.Sandbox != "" {
		writeError(w, r, errs.New(errs.CodeForbidden, "a sandbox token cannot manage keys or tenants"))
		return nil, false
	}
	return s.keys(w, r)
}

type keyBody struct {
	Tenant      string       `json:"tenant"`
	Scopes      []auth.Scope `json:"scopes"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	ExpiresAt   *time.Time   `json:"expires_at"`
	ExpiresInS  int64        `json:"expires_in_s"`
	Format      string       `json:"format"`
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ks, ok := s.adminKeys(w, r, p)
	if !ok {
		return
	}
	var b keyBody
	if err := decode(r, &b); err != nil {
		writeError(w, r, err)
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
	k, err := ks.CreateKey(r.Context(), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // the key is in this answer
	writeJSON(w, http.StatusCreated, k)
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ks, ok := s.adminKeys(w, r, p)
	if !ok {
		return
	}
	list, err := ks.ListKeys(r.Context(), r.URL.Query().Get("tenant"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": list})
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ks, ok := s.adminKeys(w, r, p)
	if !ok {
		return
	}
	if err := ks.RevokeKey(r.Context(), r.PathValue("id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// tenantView is a tenant with what its running sandboxes hold.
type tenantView struct {
	tenant.Tenant
	Usage *tenant.Usage `json:"usage,omitempty"`
}

func (s *Server) withUsage(ctx context.Context, t tenant.Tenant) tenantView {
	u := tenant.UsageOf(s.m.List(ctx, sandbox.Scope{Tenant: t.Name}, nil))
	return tenantView{Tenant: t, Usage: &u}
}

func (s *Server) createTenant(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ks, ok := s.adminKeys(w, r, p)
	if !ok {
		return
	}
	var b struct {
		Name   string        `json:"name"`
		Quotas tenant.Quotas `json:"quotas"`
	}
	if err := decode(r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := ks.Tenants().Create(r.Context(), b.Name, b.Quotas)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/tenants/"+t.Name)
	writeJSON(w, http.StatusCreated, s.withUsage(r.Context(), t))
}

func (s *Server) listTenants(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ks, ok := s.adminKeys(w, r, p)
	if !ok {
		return
	}
	list, err := ks.Tenants().List(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]tenantView, 0, len(list))
	for _, t := range list {
		out = append(out, s.withUsage(r.Context(), t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tenants": out})
}

func (s *Server) getTenant(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ks, ok := s.adminKeys(w, r, p)
	if !ok {
		return
	}
	t, err := ks.Tenants().Get(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.withUsage(r.Context(), t))
}

func (s *Server) setTenant(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ks, ok := s.adminKeys(w, r, p)
	if !ok {
		return
	}
	var b struct {
		Quotas tenant.Quotas `json:"quotas"`
	}
	if err := decode(r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := ks.Tenants().SetQuotas(r.Context(), r.PathValue("name"), b.Quotas)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.withUsage(r.Context(), t))
}

// createToken mints a sandbox-scoped token. The sandbox is looked up
// first, so another tenant's sandbox answers 404 whatever the body says.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	id := r.PathValue("id")
	if _, err := s.m.Get(r.Context(), scopeOf(p), id); err != nil {
		writeError(w, r, err)
		return
	}
	ks, ok := s.keys(w, r)
	if !ok {
		return
	}
	var b struct {
		Scopes []auth.Scope `json:"scopes"`
		TTLS   int64        `json:"ttl_s"`
	}
	if err := decode(r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.TTLS < 0 || b.TTLS > int64(auth.MaxTokenTTL/time.Second) {
		writeError(w, r, errs.Invalid("ttl_s must be between 1 and %d", int64(auth.MaxTokenTTL/time.Second)))
		return
	}
	tok, err := ks.MintToken(p, id, b.Scopes, time.Duration(b.TTLS)*time.Second)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, tok)
}
