package main

import (
	"log/slog"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenant"
)

// newQuotas is the tenant quota enforcer (the manager's Admission); limits
// are the manager's, whose defaults fill what a spec leaves unset.
func newQuotas(db *store.DB, limits sandbox.Limits) *tenant.Admission {
	return tenant.NewAdmission(tenant.NewStore(db.SQL()), limits)
}

// newAuthn is the API's authenticator: the bootstrap admin key, the keys
// in the database, and sandbox tokens signed with DATA/token.key
// (generated on the first start).
func newAuthn(data string, db *store.DB, adminKey string, quotas *tenant.Admission, log *slog.Logger) (*auth.Service, error) {
	secret, err := auth.LoadSecret(data)
	if err != nil {
		return nil, err
	}
	return auth.NewService(auth.Options{DB: db.SQL(), Tenants: quotas.Tenants(), AdminKey: adminKey, Secret: secret, Log: log})
}
