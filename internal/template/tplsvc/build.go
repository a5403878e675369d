package tplsvc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/wire"
)

// maxDockerfile bounds the Dockerfile read from a build context.
const maxDockerfile = 1 << 20

// BuildRequest is one build (POST /v1/templates/build's parameters).
type BuildRequest struct {
	Name       string
	Dockerfile string // path in the context; default "Dockerfile"
	BuildArgs  map[string]string
	Target     string
	Network    string // none (default) or allowlist
	Allow      []string
	NoCache    bool
	Replace    bool
	Shared     bool
	// StartCmd and ReadyCmd become the template's start and ready
	// commands (nil: the image's labels or HEALTHCHECK, as for a pull):
	// E2B's setStartCmd/setReadyCmd.
	StartCmd, ReadyCmd []string
}

// Build builds the Dockerfile of the build context contextTar (a tar,
// untrusted: unpacked by the layer store's hardened extractor) into
// template req.Name, streaming its log to emit.
func (s *Service) Build(ctx context.Context, sc Scope, req BuildRequest, contextTar io.Reader, emit func(wire.TemplateEvent)) (wire.Template, error) {
	if err := sc.Need(rights.Templates); err != nil {
		return wire.Template{}, err
	}
	st, tenant, err := s.target(sc, req.Name, req.Shared)
	if err != nil {
		return wire.Template{}, err
	}
	if req.Dockerfile == "" {
		req.Dockerfile = "Dockerfile"
	}
	dfPath := path.Clean("/" + req.Dockerfile)[1:]
	if dfPath == "" || strings.HasPrefix(dfPath, "..") {
		return wire.Template{}, errs.Invalid("dockerfile must be a path inside the build context")
	}
	dir, err := os.MkdirTemp(s.tmp, "context-*")
	if err != nil {
		return wire.Template{}, errs.Wrap(errs.CodeInternal, err, "cannot stage the build context")
	}
	defer os.RemoveAll(dir)
	if _, err := layers.Extract(ctx, contextTar, dir, layers.Limits{MaxBytes: s.o.MaxUpload}); err != nil {
		return wire.Template{}, errs.Wrap(errs.CodeOf(err), err, "build context: %s", errs.Public(err))
	}
	df, err := readInside(dir, dfPath)
	if err != nil {
		return wire.Template{}, err
	}
	ctx = rights.WithScope(ctx, sc)
	if emit == nil {
		emit = func(wire.TemplateEvent) {}
	}
	var out wire.Template
	data := map[string]any{"template": req.Name, "shared": req.Shared, "network": orNone(req.Network), "allow": req.Allow}
	if f, perr := dockerfile.Parse(df); perr == nil {
		data["dockerfile_digest"] = f.Digest
	}
	err = s.act(ctx, sc, "template.build", data, func() (map[string]any, error) {
		unlock := s.tenantLock(tenant)
		if err := s.checkQuota(ctx, tenant, st, 0); err != nil {
			unlock()
			return nil, err
		}
		unlock()
		res, err := s.builder.Build(ctx, dockerfile.Request{Dockerfile: df, Context: dir, BuildArgs: req.BuildArgs,
			Target: req.Target, Network: req.Network, Allow: req.Allow, NoCache: req.NoCache,
			Bases: &tenantBases{s: s, tenant: tenant},
			Log: func(e dockerfile.Event) {
				emit(wire.TemplateEvent{Step: e.Step, Steps: e.Steps, Stage: e.Stage, Instruction: e.Instruction,
					Cached: e.Cached, Output: e.Output, Message: e.Message})
			}})
		if err != nil {
			return nil, err
		}
		defer res.Lease.Release()
		unlock = s.tenantLock(tenant)
		defer unlock()
		t, err := s.o.Registry.InstallImage(ctx, res.Layers, res.Config,
			template.Source{Kind: "build", Dockerfile: res.DockerfileDigest},
			s.imageOpts(st, tenant, req.Replace, req.StartCmd, req.ReadyCmd, func(m string) { emit(wire.TemplateEvent{Message: m}) }))
		if err != nil {
			return nil, err
		}
		if err := s.afterInstall(ctx, tenant, st, t); err != nil {
			return nil, err
		}
		out, err = s.Get(ctx, sc, req.Name)
		return map[string]any{"dockerfile_digest": res.DockerfileDigest, "layers": len(res.Layers)}, err
	})
	return out, err
}

func orNone(n string) string {
	if n == "" {
		return "none"
	}
	return n
}

// readInside reads rel under dir without following symlinks out of it
// (the context is the caller's: a Dockerfile that is a link to
// /etc/shadow must not be read).
func readInside(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot open the build context")
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, errs.Invalid("the build context has no readable %s", rel)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDockerfile+1))
	if err != nil {
		return nil, errs.Invalid("cannot read %s from the build context", rel)
	}
	if len(b) > maxDockerfile {
		return nil, errs.New(errs.CodeTooLarge, "%s is over %d bytes", rel, maxDockerfile)
	}
	return b, nil
}

// tenantBases resolves FROM as the building tenant sees templates: its
// own and shared ones by name, else a registry reference. Another
// tenant's template is never a base.
type tenantBases struct {
	s      *Service
	tenant string
}

func (b *tenantBases) Resolve(ctx context.Context, ref string, lease *layers.Lease) (dockerfile.Base, error) {
	if template.ValidName(ref) {
		t, err := b.s.Resolve(b.tenant, ref)
		switch {
		case err == nil:
			inner := dockerfile.Resolver{Templates: b.s.o.Registry, Store: b.s.o.Store}
			base, err := inner.Resolve(ctx, t.Name, lease)
			if err == nil {
				base.ID = fmt.Sprintf("template:%s@%s", ref, strings.TrimPrefix(base.ID, "template:"+t.Name+"@"))
			}
			return base, err
		case errs.CodeOf(err) != errs.CodeNotFound:
			return dockerfile.Base{}, err
		}
	}
	reg := dockerfile.Resolver{Client: b.s.client, Store: b.s.o.Store}
	base, err := reg.Resolve(ctx, ref, lease)
	if err != nil && errors.Is(err, errs.ErrNotFound) && template.ValidName(ref) {
		return dockerfile.Base{}, errs.Wrap(errs.CodeNotFound, err, "base %q is neither a template nor a registry image: %s", clip(ref), errs.Public(err))
	}
	return base, err
}
