package api

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/wire"
)

// SecretStore is what the secret routes need (secret.Store provides it;
// each method checks the caller's rights, and a nil *secret.Store is a
// server without one). No method returns a value: secrets are write-only
// through the API. tenant "" is the caller's own.
type SecretStore interface {
	Set(ctx context.Context, sc rights.Scope, tenant, name string, value []byte, hosts ...string) (secret.Info, bool, error)
	Bind(ctx context.Context, sc rights.Scope, tenant, name string, hosts []string) (secret.Info, error)
	Info(ctx context.Context, sc rights.Scope, tenant, name string) (secret.Info, error)
	List(ctx context.Context, sc rights.Scope, tenant string) ([]secret.Info, error)
	Delete(ctx context.Context, sc rights.Scope, tenant, name string) error
}

// The tenant's secrets (docs/network.md, "Secrets"): set, list, delete;
// a value is never answered. An admin key may name another tenant with
// ?tenant=.
func (s *Server) secretRoutes() {
	s.authed("GET /v1/secrets", rights.Read, s.listSecrets)
	s.authed("GET /v1/secrets/{name}", rights.Read, s.getSecret)
	s.authed("PUT /v1/secrets/{name}", rights.Secrets, s.setSecret)
	s.authed("DELETE /v1/secrets/{name}", rights.Secrets, s.deleteSecret)
}

func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	list, err := s.secrets.List(r.Context(), sc, r.URL.Query().Get("tenant"))
	replyList(w, r, list, err, func(l []secret.Info) wire.SecretList { return wire.SecretList{Secrets: l} })
}

func (s *Server) getSecret(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	in, err := s.secrets.Info(r.Context(), sc, r.URL.Query().Get("tenant"), r.PathValue("name"))
	reply(w, r, in, err)
}

// secretBody is PUT /v1/secrets/{name}'s body. The value is a JSON string
// (so a secret is text; one trailing newline is the caller's to strip);
// hosts bind it to where it may be sent (with no value: only that).
type secretBody struct {
	Value *string   `json:"value"`
	Hosts *[]string `json:"hosts"`
}

func (s *Server) setSecret(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	b, ok := decoded[secretBody](w, r)
	if !ok {
		return
	}
	tenant, name := r.URL.Query().Get("tenant"), r.PathValue("name")
	if b.Value == nil && b.Hosts != nil {
		in, err := s.secrets.Bind(r.Context(), sc, tenant, name, *b.Hosts)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, in)
		return
	}
	if b.Value == nil {
		writeError(w, r, errs.Invalid(`the body must be {"value": "...", "hosts": ["api.example.com"]}`))
		return
	}
	var hosts []string
	if b.Hosts != nil {
		if hosts = *b.Hosts; len(hosts) == 0 {
			writeError(w, r, errs.Invalid("hosts: give at least one host the secret may be sent to (or leave hosts out to keep them)"))
			return
		}
	}
	in, created, err := s.secrets.Set(r.Context(), sc, tenant, name, []byte(*b.Value), hosts...)
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

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	replyNoContent(w, r, s.secrets.Delete(r.Context(), sc, r.URL.Query().Get("tenant"), r.PathValue("name")))
}
