package server

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock/internal/dockerfile/sandboxrunner"
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/template/tplsvc"
)

// RegistrySecret is the name of the secret that holds a tenant's
// registry credential ("user:password"), bound to the registry's host
// like any secret (docs/templates.md).
const RegistrySecret = "REGISTRY_AUTH"

// TemplatesConfig configures image templates (docs/templates.md).
type TemplatesConfig struct {
	// StoreMax bounds the layer store's disk bytes
	// (--template-store-max); 0: unlimited.
	StoreMax int64
	// Insecure are registries ("host:port") reached over plain HTTP
	// (--insecure-registry).
	Insecure []string
	// AuthFile is a Docker config.json with registry credentials
	// (--registry-auth).
	AuthFile string
	// Builder bounds each RUN step's sandbox (--builder-cpu,
	// --builder-memory, --builder-disk, --builder-pids,
	// --builder-timeout); zero fields take sandboxrunner.Defaults.
	Builder sandboxrunner.Limits
}

// builderLimits fills the builder limits the flags left unset.
func (c TemplatesConfig) builderLimits() sandboxrunner.Limits {
	l, d := c.Builder, sandboxrunner.Defaults
	if l.CPU <= 0 {
		l.CPU = d.CPU
	}
	if l.MemoryMB <= 0 {
		l.MemoryMB = d.MemoryMB
	}
	if l.DiskMB <= 0 {
		l.DiskMB = d.DiskMB
	}
	if l.Pids <= 0 {
		l.Pids = d.Pids
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	return l
}

// openLayers opens DATA/layers and gives it to the template registry.
func (s *Server) openLayers() error {
	st, err := layers.Open(layers.Options{Dir: filepath.Join(s.cfg.DataDir, "layers"), MaxBytes: s.cfg.Templates.StoreMax, Log: s.log})
	if err != nil {
		return fmt.Errorf("template layer store: %w", err)
	}
	s.Layers = st
	s.Templates.UseLayerStore(st)
	return nil
}

// openTemplateService builds the template service over the registry and
// the layer store: credentials from --registry-auth, then the caller's
// tenant's secret store, quotas from the tenants' quotas, audit events
// to observer, "in use" from the manager (made after it).
func (s *Server) openTemplateService(observer sandbox.Observer) error {
	var creds []oci.CredentialFunc
	if f := s.cfg.Templates.AuthFile; f != "" {
		c, err := oci.DockerConfig(f)
		if err != nil {
			return fmt.Errorf("--registry-auth %s: %s", f, errs.Public(err))
		}
		creds = append(creds, c)
	}
	if s.Secrets != nil {
		creds = append(creds, s.registrySecret)
	}
	// RUN steps run in sandboxes of the manager, which is made after the
	// template service (it resolves templates through it).
	runner := &sandboxrunner.Runner{Limits: s.cfg.Templates.builderLimits(), Steps: func() sandboxrunner.Stepper {
		if s.Manager == nil {
			return nil
		}
		return s.Manager
	}}
	svc, err := tplsvc.New(tplsvc.Options{Registry: s.Templates, Store: s.Layers, DataDir: s.cfg.DataDir, Log: s.log,
		Runner:   runner,
		Insecure: s.cfg.Templates.Insecure, Credentials: creds, Observer: observer, MaxUpload: s.cfg.MaxUploadBytes,
		InUse: func(name string) bool { return s.Manager != nil && s.Manager.TemplateInUse(name) },
		Quota: func(ctx context.Context, tenant string) (tplsvc.Quota, error) {
			n, b, err := s.Quotas.TemplateQuota(ctx, tenant)
			if errs.CodeOf(err) == errs.CodeNotFound {
				return tplsvc.Quota{}, nil // the admin's own tenant
			}
			return tplsvc.Quota{MaxTemplates: n, MaxBytes: b}, err
		}})
	if err != nil {
		return err
	}
	s.TemplateService = svc
	s.onClose("template service", svc.Close)
	return nil
}

// registrySecret is the caller's tenant's REGISTRY_AUTH secret, when it
// is bound to the registry's host (a secret reaches only hosts its
// manager allowed: the same guard as egress injection).
func (s *Server) registrySecret(ctx context.Context, registry string) (oci.Credential, error) {
	sc := rights.FromContext(ctx)
	if sc.Tenant == "" {
		return oci.Credential{}, nil
	}
	host := registry
	if h, _, err := net.SplitHostPort(registry); err == nil {
		host = h
	}
	v, err := s.Secrets.GetFor(ctx, sc.Tenant, RegistrySecret, strings.ToLower(host))
	if err != nil {
		return oci.Credential{}, nil // none, or not for this host: anonymous
	}
	user, pass, ok := strings.Cut(string(v), ":")
	if !ok {
		return oci.Credential{RegistryToken: string(v)}, nil
	}
	return oci.Credential{Username: user, Password: pass}, nil
}

// fetchGuard is the address guard of ADD <url>: the egress proxy's when
// the server has a sandbox network, else one with serve's
// --egress-allow-cidr exceptions and the host's current addresses.
func (s *Server) fetchGuard() *policy.Guard {
	if s.Network != nil {
		if g := s.Network.Guard(); g != nil {
			return g
		}
	}
	var except []netip.Prefix
	if s.cfg.Network != nil {
		except = s.cfg.Network.AllowCIDR
	}
	g := policy.NewGuard(except, nil)
	var own []netip.Addr
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					own = append(own, ip.Unmap())
				}
			}
		}
	}
	g.SetHostAddrs(own)
	return g
}
