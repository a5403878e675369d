package inject

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/secret"
)

// Rules tells the interceptor a sandbox's tenant and inject rules
// (sandbox.Manager.InjectRules).
type Rules interface {
	InjectRules(id string) (tenant string, rules []secret.Rule, ok bool)
}

// Interceptor implements egress.Interceptor: it asks to see inside the
// connections a sandbox opens to the hosts of its inject rules, and no
// others.
type Interceptor struct {
	rules   Rules
	secrets *secret.Store
	cas     *CAStore
	admit   secret.Admitter // may be nil
	roots   *x509.CertPool  // upstream verification; nil: the system's
	log     *slog.Logger
	now     func() time.Time
}

// InterceptorOptions configure an Interceptor.
type InterceptorOptions struct {
	Rules   Rules
	Secrets *secret.Store
	CAs     *CAStore
	// Admit is the tenant's secrets policy, asked for every intercepted
	// connection (a quota change applies to the next one).
	Admit secret.Admitter
	// UpstreamRoots verify the destinations' certificates; nil uses the
	// system roots.
	UpstreamRoots *x509.CertPool
	Log           *slog.Logger
}

// NewInterceptor returns an interceptor.
func NewInterceptor(o InterceptorOptions) (*Interceptor, error) {
	if o.Rules == nil || o.Secrets == nil || o.CAs == nil {
		return nil, errors.New("inject: rules, secrets and CAs are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Interceptor{rules: o.Rules, secrets: o.Secrets, cas: o.CAs, admit: o.Admit, roots: o.UpstreamRoots,
		log: o.Log, now: time.Now}, nil
}

var errTrace = errors.New("TRACE and TRACK are refused to hosts that get secrets (the server would echo them back)")

// echoes reports the methods that make a server send the request back,
// headers included (cross-site tracing: TRACE, and TRACK, IIS's name for
// it): with a secret in them, the sandbox would read it.
func echoes(method string) bool {
	return strings.EqualFold(method, http.MethodTrace) || strings.EqualFold(method, "TRACK")
}

// Intercept implements egress.Interceptor. The headers are rendered once
// per connection; their values live only in this plan's closure. Errors
// name secrets, never values (they end up in the audit log).
func (i *Interceptor) Intercept(ctx context.Context, c egress.ConnInfo) (*egress.Plan, error) {
	tenant, all, ok := i.rules.InjectRules(c.Sandbox)
	if !ok {
		return nil, nil
	}
	rules := secret.ForHost(all, c.Name, int(c.Addr.Port()))
	if len(rules) == 0 {
		return nil, nil
	}
	names := secret.Names(rules)
	if i.admit != nil {
		if err := i.admit(ctx, tenant, names); err != nil {
			return nil, errors.New(errs.Public(err))
		}
	}
	headers := make(map[string]string, len(rules))
	for _, r := range rules {
		t, err := secret.ParseTemplate(r.Value)
		if err != nil { // validated at create: a rule that no longer parses is a bug
			return nil, fmt.Errorf("inject rule for %s: %v", r.Header, err)
		}
		v, err := t.Render(func(name string) ([]byte, error) {
			// Checked again per connection: a binding narrowed after the
			// sandbox was created applies at once.
			v, err := i.secrets.GetFor(ctx, tenant, name, r.Host)
			if err != nil {
				return nil, errors.New(errs.Public(err))
			}
			return v, nil
		})
		if err != nil {
			// Not "Header: error": the audit log's redaction takes what
			// follows "Authorization:" for a credential and would hide
			// which secret is missing.
			return nil, fmt.Errorf("%v (for the %s header)", err, r.Header)
		}
		headers[r.Header] = v
	}
	ca, err := i.cas.Get(ctx, c.Sandbox)
	if err != nil {
		return nil, fmt.Errorf("no egress CA: %s", errs.Public(err))
	}
	// Secrets travel only inside TLS: a cleartext request to the same
	// host goes on without them (anyone on the path could read them).
	var overTLS atomic.Bool
	name := c.Name
	plan := &egress.Plan{
		ServerTLS: &tls.Config{MinVersion: tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				overTLS.Store(true)
				return ca.Leaf(name, i.now())
			}},
		UpstreamTLS: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: i.roots},
		Request: func(r *http.Request) error {
			if !overTLS.Load() {
				return nil
			}
			if echoes(r.Method) {
				return errTrace
			}
			for h, v := range headers {
				r.Header[h] = []string{v}
			}
			return nil
		},
	}
	i.log.Debug("egress: injecting secrets", "sandbox", c.Sandbox, "host", c.Name, "via", c.Via, "secrets", names)
	return plan, nil
}
