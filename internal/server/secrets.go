package server

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/internal/secret/inject"
)

// openSecrets opens the secret store (DATA/secrets.key is made on the
// first start) and the egress CAs; bindSecrets then installs the
// injection once the manager exists.
func (s *Server) openSecrets() error {
	if s.cfg.Secrets == nil {
		return nil
	}
	key, err := secret.LoadKey(s.cfg.DataDir)
	if err != nil {
		return err
	}
	if s.Secrets, err = secret.NewStore(secret.Options{DB: s.Store.SQL(), Key: key, Admit: s.Quotas.AdmitSecrets}); err != nil {
		return err
	}
	s.cas = inject.NewCAStore(s.Store.SQL(), key)
	return nil
}

// admission is the manager's Admission: the tenant quotas, with (when
// there are secrets) the check that a spec's inject rules name existing
// secrets the tenant may use.
func (s *Server) admission() sandbox.Admission {
	if s.Secrets == nil {
		return s.Quotas
	}
	return inject.NewAdmission(s.Quotas, s.Secrets)
}

// bindSecrets installs secret injection in the egress proxy: the
// interceptor (rules from the manager) and the setup hook that gives each
// networked sandbox its CA; CAs of gone sandboxes are swept every few
// minutes. Without the server's own network there is nothing to inject
// into.
func (s *Server) bindSecrets() error {
	if s.Secrets == nil || s.Network == nil {
		return nil
	}
	ic, err := inject.NewInterceptor(inject.InterceptorOptions{Rules: s.Manager, Secrets: s.Secrets, CAs: s.cas,
		Admit: s.Quotas.AdmitSecrets, UpstreamRoots: s.cfg.Secrets.UpstreamRoots, Log: s.log})
	if err != nil {
		return err
	}
	hook := inject.NewHook(s.cas, s.Store, s.Templates, s.log)
	s.Network.SetSetupHook(hook.Setup)
	s.Network.Egress().SetInterceptor(ic)
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
	s.onClose("secret sweep", func() error { cancel(); <-done; return nil })
	return nil
}
