package api

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/secret"
)

// SecretStore is what the secret routes need (secret.Store provides it).
// No method returns a value: secrets are write-only through the API.
type SecretStore interface {
	Set(ctx context.Context, tenant, name string, value []byte) (secret.Info, bool, error)
	Info(ctx context.Context, tenant, name string) (secret.Info, error)
	List(ctx context.Context, tenant string) ([]secret.Info, error)
	Delete(ctx context.Context, tenant, name string) error
}

// The tenant's secrets (docs/network.md, "Secrets"): set, list, delete;
// a value is never answered. An admin key may name another tenant with
// ?tenant=.
func (s *Server) secretRoutes() {
	s.authed("GET /v1/secrets", auth.ScopeRead, s.listSecrets)
	s.authed("GET /v1/secrets/{name}", auth.ScopeRead, s.getSecret)
	s.authed("PUT /v1/secrets/{name}", auth.ScopeWrite, s.setSecret)
	s.authed("DELETE /v1/secrets/{name}", auth.ScopeWrite, s.deleteSecret)
}

// secretTenant is the tenant a secrets request acts on, and the store.
func (s *Server) secretTenant(w http.ResponseWriter, r *http.Request, p auth.Principal) (SecretStore, string, bool) {
	if s.o.Secrets == nil {
		writeError(w, r, errs.New(errs.CodeUnsupported, "this server has no secret store"))
		return nil, "", false
	}
	if p.Sandbox != "" {
		writeError(w, r, errs.New(errs.CodeForbidden, "a sandbox token cannot manage secrets"))
		return nil, "", false
	}
	tenant := p.Tenant
	if t := r.URL.Query().Get("tenant"); t != "" && t != tenant {
		if !p.Can(auth.ScopeAdmin) {
			writeError(w, r, errs.New(errs.CodeForbidden, "only an admin key can manage another tenant's secrets"))
			return nil, "", false
		}
		tenant = t
	}
	return s.o.Secrets, tenant, true
}

func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	st, tenant, ok := s.secretTenant(w, r, p)
	if !ok {
		return
	}
	list, err := st.List(r.Context(), tenant)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if list == nil {
		list = []secret.Info{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"secrets": list})
}

func (s *Server) getSecret(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	st, tenant, ok := s.secretTenant(w, r, p)
	if !ok {
		return
	}
	in, err := st.Info(r.Context(), tenant, r.PathValue("name"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, in)
}

// secretBody is PUT /v1/secrets/{name}'s body. The value is a JSON string
// (so a secret is text; one trailing newline is the caller's to strip).
type secretBody struct {
	Value *string `json:"value"`
}

func (s *Server) setSecret(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	st, tenant, ok := s.secretTenant(w, r, p)
	if !ok {
		return
	}
	var b secretBody
	if err := decode(r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Value == nil {
		writeError(w, r, errs.Invalid(`the body must be {"value": "..."}`))
		return
	}
	in, created, err := st.Set(r.Context(), tenant, r.PathValue("name"), []byte(*b.Value))
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, in)
}

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	st, tenant, ok := s.secretTenant(w, r, p)
	if !ok {
		return
	}
	if err := st.Delete(r.Context(), tenant, r.PathValue("name")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
