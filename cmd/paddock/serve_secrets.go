package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/internal/secret/inject"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenant"
)

// secretFlags are serve's options for secret injection and exposed ports
// (docs/network.md "Secrets", docs/ports.md).
type secretFlags struct {
	upstreamCAs []string
	portsDomain string
}

func (s *secretFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&s.upstreamCAs, "egress-upstream-ca", nil, "PEM file of extra roots the egress proxy trusts when it connects to hosts that get secrets, besides the system's (repeatable; for internal CAs and tests)")
	fs.StringVar(&s.portsDomain, "ports-domain", "", "serve sandbox ports at PORT-SANDBOX.DOMAIN too (a wildcard DNS name pointing at this server); its names become allowed hosts")
}

// secretMigrations adds the secrets' and egress CAs' tables.
func secretMigrations(ms []store.Migration) []store.Migration {
	out := append(append([]store.Migration{}, ms...), secret.Migrations...)
	return append(out, inject.Migrations...)
}

// secrets is the secret store and the secret injection around it.
type secrets struct {
	store *secret.Store
	cas   *inject.CAStore
	netw  *sandboxNet
	admit secret.Admitter
	roots *x509.CertPool
	log   *slog.Logger
	db    *store.DB
	tpls  inject.Templates
}

// openSecrets opens the secret store (DATA/secrets.key is made on the
// first start) and checks the flags; bind then installs the injection.
// A ports domain's names are added to the allowed hosts.
func openSecrets(st *stack, f *serveFlags, netw *sandboxNet, quotas *tenant.Admission, log *slog.Logger) (*secrets, error) {
	key, err := secret.LoadKey(f.data)
	if err != nil {
		return nil, err
	}
	s := &secrets{netw: netw, admit: quotas.AdmitSecrets, log: log, db: st.db, tpls: st.tpls}
	if s.store, err = secret.NewStore(secret.Options{DB: st.db.SQL(), Key: key, Admit: s.admit}); err != nil {
		return nil, err
	}
	s.cas = inject.NewCAStore(st.db.SQL(), key)
	if len(f.sec.upstreamCAs) > 0 {
		if s.roots, err = x509.SystemCertPool(); err != nil {
			s.roots = x509.NewCertPool()
		}
		for _, file := range f.sec.upstreamCAs {
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, fmt.Errorf("--egress-upstream-ca: %w", err)
			}
			if !s.roots.AppendCertsFromPEM(b) {
				return nil, fmt.Errorf("--egress-upstream-ca %s: no PEM certificate in it", file)
			}
		}
	}
	if d := f.sec.portsDomain; d != "" {
		n, ok := policy.NormalizeName(d)
		if !ok || len(n) > 200 {
			return nil, fmt.Errorf("--ports-domain %q: want a DNS name such as ports.example.com", d)
		}
		f.sec.portsDomain = n
		f.http.allowedHosts = append(f.http.allowedHosts, "*."+n) // the hardening's Host check (serve_http.go)
	}
	st.sec = s
	return s, nil
}

// admission is the manager's Admission: the tenant quotas, with the check
// that a spec's inject rules name existing secrets the tenant may use.
func (s *secrets) admission(next sandbox.Admission) sandbox.Admission {
	return inject.NewAdmission(next, s.store)
}

// bind installs secret injection in the egress proxy: the interceptor
// (rules from mgr) and the setup hook that gives each networked sandbox
// its CA; CAs of gone sandboxes are swept every few minutes.
func (s *secrets) bind(st *stack, mgr *sandbox.Manager) error {
	if s.netw == nil || s.netw.st == nil {
		return nil // no sandbox networking: nothing to inject into
	}
	ic, err := inject.NewInterceptor(inject.InterceptorOptions{Rules: mgr, Secrets: s.store, CAs: s.cas, Admit: s.admit,
		UpstreamRoots: s.roots, Log: s.log})
	if err != nil {
		return err
	}
	hook := inject.NewHook(s.cas, s.db, s.tpls, s.log)
	s.netw.st.SetSetupHook(hook.Setup)
	s.netw.st.Egress().SetInterceptor(ic)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.cas.SweepEvery(ctx, 5*time.Minute, func(n int, err error) {
			if err != nil {
				s.log.Warn("egress CAs: sweep failed", "err", err)
				return
			}
			s.log.Info("egress CAs of gone sandboxes removed", "count", n)
		})
	}()
	st.onClose(func() { cancel(); <-done })
	return nil
}

// apiStore is the API's secret store (nil before openSecrets).
func (st *stack) secretStore() api.SecretStore {
	if st.sec == nil {
		return nil
	}
	return st.sec.store
}
