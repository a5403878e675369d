package tplsvc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/wire"
)

// Scope is who acts (rights.Scope).
type Scope = rights.Scope

// Quota is a tenant's template allowance; zero fields are unlimited.
type Quota struct {
	MaxTemplates int
	MaxBytes     int64
}

// Options configure the service.
type Options struct {
	Registry *template.Registry
	Store    *layers.Store
	// DataDir holds the build cache (DATA/build-cache) and staging
	// (DATA/template-tmp, emptied at New).
	DataDir string
	Log     *slog.Logger
	// Insecure registries ("host:port") are reached over plain HTTP.
	Insecure []string
	// Credentials for registries, asked in order (a Docker config.json,
	// the secret store); the first that has the host wins.
	Credentials []oci.CredentialFunc
	// InUse says whether sandboxes use a stored template (Delete refuses).
	InUse template.InUse
	// Quota returns a tenant's allowance; nil: none.
	Quota func(ctx context.Context, tenant string) (Quota, error)
	// Observer records audit events (intent first: a refused intent stops
	// the action); nil: none.
	Observer sandbox.Observer
	// Runner and Fetcher run builds' RUN steps and ADD URLs; nil: refused.
	Runner  dockerfile.Runner
	Fetcher dockerfile.Fetcher
	// MaxUpload bounds an import archive or a build context (0: 8 GiB).
	MaxUpload int64
}

// Service acts on templates for callers.
type Service struct {
	o       Options
	log     *slog.Logger
	client  *oci.Client
	builder *dockerfile.Builder
	tmp     string

	mu     sync.Mutex // quota checks and installs, one tenant at a time
	tlocks map[string]*sync.Mutex
}

// New returns the service.
func New(o Options) (*Service, error) {
	if o.Registry == nil || o.Store == nil || o.DataDir == "" {
		return nil, errors.New("template service: registry, layer store and data directory are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxUpload <= 0 {
		o.MaxUpload = 8 << 30
	}
	s := &Service{o: o, log: o.Log, tmp: filepath.Join(o.DataDir, "template-tmp"), tlocks: map[string]*sync.Mutex{}}
	// Staging of uploads and builds: what a crash left is no one's.
	_ = os.RemoveAll(s.tmp)
	if err := os.MkdirAll(s.tmp, 0o700); err != nil {
		return nil, fmt.Errorf("template service: %w", err)
	}
	var err error
	if s.client, err = oci.New(oci.Options{Insecure: o.Insecure, Credentials: chain(o.Credentials)}); err != nil {
		return nil, fmt.Errorf("template service: %w", err)
	}
	if s.builder, err = dockerfile.New(dockerfile.Options{Store: o.Store, Runner: o.Runner, Fetcher: o.Fetcher,
		CacheDir: filepath.Join(o.DataDir, "build-cache"), TmpDir: filepath.Join(s.tmp, "build")}); err != nil {
		s.client.Close()
		return nil, fmt.Errorf("template service: %w", err)
	}
	return s, nil
}

// Close releases the registry client.
func (s *Service) Close() error {
	s.client.Close()
	return nil
}

// chain asks each credential source in turn.
func chain(fs []oci.CredentialFunc) oci.CredentialFunc {
	if len(fs) == 0 {
		return nil
	}
	return func(ctx context.Context, host string) (oci.Credential, error) {
		for _, f := range fs {
			if f == nil {
				continue
			}
			c, err := f(ctx, host)
			if err != nil || c != (oci.Credential{}) {
				return c, err
			}
		}
		return oci.Credential{}, nil
	}
}

// Resolve finds template name as tenant sees it: the manager's template
// lookup at create.
func (s *Service) Resolve(tenant, name string) (*template.Template, error) {
	if tenant != "" {
		if st, err := stored(tenant, name); err == nil {
			if t, err := s.o.Registry.Get(st); err == nil && t.Tenant == tenant {
				return t, nil
			}
		}
	}
	t, err := s.o.Registry.Get(name)
	if err != nil {
		return nil, s.notFound(tenant, name, err)
	}
	if t.Tenant != "" {
		return nil, s.notFound(tenant, name, nil)
	}
	return t, nil
}

// notFound is the error for a name tenant cannot see, listing what it can.
func (s *Service) notFound(tenant, name string, err error) error {
	if err != nil && errs.CodeOf(err) != errs.CodeNotFound {
		return err
	}
	var names []string
	if infos, lerr := s.visibleList(tenant); lerr == nil {
		for _, i := range infos {
			if i.Ready && len(names) < 20 {
				names = append(names, i.Name)
			}
		}
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return errs.NotFound("template %q not found (available: %s)", clip(name), list)
}

func (s *Service) visibleList(tenant string) ([]wire.Template, error) {
	infos, err := s.o.Registry.List()
	if err != nil {
		return nil, err
	}
	byName := map[string]wire.Template{}
	for _, i := range infos {
		n, shared, ok := visible(tenant, i)
		if !ok {
			continue
		}
		if prev, dup := byName[n]; dup && !prev.Shared && shared {
			continue // the tenant's own wins
		}
		byName[n] = wireInfo(n, shared, i)
	}
	out := make([]wire.Template, 0, len(byName))
	for _, t := range byName {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func wireInfo(name string, shared bool, i template.Info) wire.Template {
	t := wire.Template{Name: name, Description: i.Description, CreatedAt: i.CreatedAt, SizeBytes: i.SizeBytes,
		Ready: i.Ready, Kind: i.Kind, Shared: shared, Layers: i.Layers, SharedBytes: i.SharedBytes}
	if i.Kind == template.KindImage {
		t.Source = &wire.TemplateSource{Kind: i.Source.Kind, Ref: i.Source.Ref, Digest: i.Source.Digest, DockerfileDigest: i.Source.Dockerfile}
	}
	return t
}

func wireDefaults(d *template.Defaults) *wire.TemplateDefaults {
	if d == nil {
		return nil
	}
	w := &wire.TemplateDefaults{Env: d.Env, WorkingDir: d.WorkingDir, User: d.User, UID: d.UID, GID: d.GID, UserError: d.UserError,
		Entrypoint: d.Entrypoint, Cmd: d.Cmd, Labels: d.Labels, StartCmd: d.StartCmd, ReadyCmd: d.ReadyCmd}
	for _, p := range d.ExposedPorts {
		w.ExposedPorts = append(w.ExposedPorts, fmt.Sprintf("%d/%s", p.Port, p.Proto))
	}
	return w
}

// List returns the templates sc's tenant may use.
func (s *Service) List(ctx context.Context, sc Scope) ([]wire.Template, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	return s.visibleList(sc.Tenant)
}

// Get describes one template, with its defaults.
func (s *Service) Get(ctx context.Context, sc Scope, name string) (wire.Template, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.Template{}, err
	}
	t, err := s.Resolve(sc.Tenant, name)
	if err != nil {
		return wire.Template{}, err
	}
	infos, err := s.o.Registry.List()
	if err != nil {
		return wire.Template{}, err
	}
	for _, i := range infos {
		if i.Name == t.Name {
			w := wireInfo(name, t.Tenant == "", i)
			w.Defaults = wireDefaults(t.Defaults)
			return w, nil
		}
	}
	return wire.Template{}, s.notFound(sc.Tenant, name, nil)
}

// target is where a new template of sc goes: its tenant's, or shared
// (admins only).
func (s *Service) target(sc Scope, name string, shared bool) (storedName, tenant string, err error) {
	if shared {
		if err := sc.Need(rights.Admin); err != nil {
			return "", "", errs.New(errs.CodeForbidden, "publishing a shared template needs an admin key")
		}
	} else {
		tenant = sc.Tenant
	}
	if name == template.HostName || name == template.DefaultDebianName && shared {
		return "", "", errs.Invalid("template name %q is reserved", name)
	}
	st, err := stored(tenant, name)
	return st, tenant, err
}

// tenantLock serialises quota checks and installs of one tenant, so two
// concurrent pulls cannot both pass the last free slot.
func (s *Service) tenantLock(tenant string) func() {
	s.mu.Lock()
	l := s.tlocks[tenant]
	if l == nil {
		l = &sync.Mutex{}
		s.tlocks[tenant] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// checkQuota refuses a new template (of about addBytes) over tenant's
// quota. Replacing a template the tenant has does not add to its count.
func (s *Service) checkQuota(ctx context.Context, tenant, storedName string, addBytes int64) error {
	if tenant == "" || s.o.Quota == nil {
		return nil
	}
	q, err := s.o.Quota(ctx, tenant)
	if err != nil {
		return err
	}
	if q.MaxTemplates == 0 && q.MaxBytes == 0 {
		return nil
	}
	infos, err := s.o.Registry.List()
	if err != nil {
		return err
	}
	n, bytes, replacing := 0, int64(0), false
	for _, i := range infos {
		if i.Tenant != tenant {
			continue
		}
		if i.Name == storedName {
			replacing = true
			continue
		}
		n++
		bytes += i.SizeBytes
	}
	if q.MaxTemplates > 0 && !replacing && n+1 > q.MaxTemplates {
		return errs.New(errs.CodeLimit, "tenant %s: at its quota of %d templates (max_templates)", tenant, q.MaxTemplates)
	}
	if q.MaxBytes > 0 && bytes+addBytes > q.MaxBytes {
		return errs.New(errs.CodeLimit, "tenant %s: its templates would take %d MiB, over its quota of %d MiB (max_template_mb)",
			tenant, (bytes+addBytes)>>20, q.MaxBytes>>20)
	}
	return nil
}

// event records an audit event; an intent the log refuses stops the action.
func (s *Service) event(ctx context.Context, sc Scope, kind, phase string, data map[string]any, err error, d time.Duration) error {
	if s.o.Observer == nil {
		return nil
	}
	e := sandbox.Event{Time: time.Now(), Kind: kind, Phase: phase, Tenant: sc.Tenant, Actor: sc.Actor, Data: data, Duration: d}
	if err != nil {
		e.Error, e.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	if oerr := s.o.Observer.Event(ctx, e); oerr != nil && phase == "intent" {
		return errs.Wrap(errs.CodeUnavailable, oerr, "the audit log cannot be written; refusing to act")
	}
	return nil
}

// act runs f between an intent and a result event.
func (s *Service) act(ctx context.Context, sc Scope, kind string, data map[string]any, f func() (map[string]any, error)) error {
	if err := s.event(ctx, sc, kind, "intent", data, nil, 0); err != nil {
		return err
	}
	start := time.Now()
	more, err := f()
	res := map[string]any{}
	for k, v := range data {
		res[k] = v
	}
	for k, v := range more {
		res[k] = v
	}
	_ = s.event(context.WithoutCancel(ctx), sc, kind, "result", res, err, time.Since(start))
	return err
}

// Delete removes a template: refused while sandboxes use it. Its layers
// go at once unless other templates or the build cache hold them.
func (s *Service) Delete(ctx context.Context, sc Scope, name string) error {
	if err := sc.Need(rights.Templates); err != nil {
		return err
	}
	t, err := s.Resolve(sc.Tenant, name)
	if err != nil {
		return err
	}
	if t.Tenant == "" && !sc.Rights.Has(rights.Admin) {
		return errs.New(errs.CodeForbidden, "template %q is shared: only an admin can remove it", name)
	}
	return s.act(ctx, sc, "template.delete", map[string]any{"template": name, "shared": t.Tenant == ""}, func() (map[string]any, error) {
		if err := s.o.Registry.Remove(t.Name, s.o.InUse); err != nil {
			return nil, err
		}
		n, freed, err := s.o.Registry.GC()
		if err != nil {
			s.log.Warn("template delete: layer GC failed", "err", err)
		}
		return map[string]any{"layers_freed": n, "bytes_freed": freed}, nil
	})
}

// Pull pulls req.Ref as a template of sc's tenant (or shared).
func (s *Service) Pull(ctx context.Context, sc Scope, req wire.TemplatePullRequest, progress func(string)) (wire.Template, error) {
	if err := sc.Need(rights.Templates); err != nil {
		return wire.Template{}, err
	}
	if _, err := oci.ParseRef(req.Ref); err != nil {
		return wire.Template{}, err
	}
	if req.Name == "" {
		req.Name = defaultName(req.Ref)
	}
	st, tenant, err := s.target(sc, req.Name, req.Shared)
	if err != nil {
		return wire.Template{}, err
	}
	ctx = rights.WithScope(ctx, sc) // the secret store's credential is the caller's tenant's
	var out wire.Template
	err = s.act(ctx, sc, "template.pull", map[string]any{"template": req.Name, "ref": req.Ref, "shared": req.Shared}, func() (map[string]any, error) {
		unlock := s.tenantLock(tenant)
		defer unlock()
		if err := s.checkQuota(ctx, tenant, st, 0); err != nil {
			return nil, err
		}
		t, err := s.o.Registry.PullImage(ctx, s.client, req.Ref, s.imageOpts(st, tenant, req.Replace, req.StartCmd, req.ReadyCmd, progress))
		if err != nil {
			return nil, err
		}
		if err := s.afterInstall(ctx, tenant, st, t); err != nil {
			return nil, err
		}
		out, err = s.Get(ctx, sc, req.Name)
		return map[string]any{"digest": t.Source.Digest, "layers": len(t.DiffIDs)}, err
	})
	return out, err
}

// afterInstall enforces the byte quota once the size is known: a
// template over it is removed again.
func (s *Service) afterInstall(ctx context.Context, tenant, st string, t *template.Template) error {
	if tenant == "" || s.o.Quota == nil {
		return nil
	}
	if err := s.checkQuota(ctx, tenant, st, t.SizeBytes); err != nil {
		if rerr := s.o.Registry.Remove(st, nil); rerr != nil {
			s.log.Warn("template over quota: cannot remove it", "template", st, "err", rerr)
		}
		_, _, _ = s.o.Registry.GC()
		return err
	}
	return nil
}

func (s *Service) imageOpts(st, tenant string, replace bool, start, ready []string, progress func(string)) template.ImageOptions {
	o := template.ImageOptions{Name: st, Tenant: tenant, Replace: replace, StartCmd: start, ReadyCmd: ready}
	if progress != nil {
		// The caller knows its template by its own name, not the stored one.
		short := strings.TrimPrefix(st, tenant+".")
		o.Progress = func(m string) { progress(strings.ReplaceAll(m, `"`+st+`"`, `"`+short+`"`)) }
	}
	return o
}

// defaultName is a reference's last path element, made a valid name.
func defaultName(ref string) string {
	r := ref
	if i := strings.IndexAny(r, "@"); i >= 0 {
		r = r[:i]
	}
	if i := strings.LastIndex(r, "/"); i >= 0 {
		r = r[i+1:]
	}
	if i := strings.Index(r, ":"); i >= 0 {
		r = r[:i]
	}
	return strings.ToLower(r)
}

// Import installs an uploaded archive (docker save, OCI layout tar,
// oci-archive) as template name.
func (s *Service) Import(ctx context.Context, sc Scope, name, tag string, shared, replace bool, body io.Reader, progress func(string)) (wire.Template, error) {
	if err := sc.Need(rights.Templates); err != nil {
		return wire.Template{}, err
	}
	st, tenant, err := s.target(sc, name, shared)
	if err != nil {
		return wire.Template{}, err
	}
	var out wire.Template
	err = s.act(ctx, sc, "template.import", map[string]any{"template": name, "shared": shared}, func() (map[string]any, error) {
		f, err := os.CreateTemp(s.tmp, "import-*.tar")
		if err != nil {
			return nil, errs.Wrap(errs.CodeInternal, err, "cannot stage the archive")
		}
		defer os.Remove(f.Name())
		defer f.Close()
		n, err := io.Copy(f, io.LimitReader(body, s.o.MaxUpload+1))
		if err != nil {
			return nil, errs.Wrap(errs.CodeInvalid, err, "the archive upload failed")
		}
		if n > s.o.MaxUpload {
			return nil, errs.New(errs.CodeTooLarge, "the archive is over %d MiB", s.o.MaxUpload>>20)
		}
		if progress != nil {
			progress(fmt.Sprintf("received %d bytes", n))
		}
		unlock := s.tenantLock(tenant)
		defer unlock()
		if err := s.checkQuota(ctx, tenant, st, 0); err != nil {
			return nil, err
		}
		t, err := s.o.Registry.ImportImage(ctx, s.client, f.Name(), tag, s.imageOpts(st, tenant, replace, nil, nil, progress))
		if err != nil {
			return nil, err
		}
		if err := s.afterInstall(ctx, tenant, st, t); err != nil {
			return nil, err
		}
		out, err = s.Get(ctx, sc, name)
		return map[string]any{"kind": t.Source.Kind, "digest": t.Source.Digest, "bytes": n}, err
	})
	return out, err
}

// Export writes template name as an oci-archive to w.
func (s *Service) Export(ctx context.Context, sc Scope, name string, w io.Writer) error {
	if err := sc.Need(rights.Read); err != nil {
		return err
	}
	t, err := s.Resolve(sc.Tenant, name)
	if err != nil {
		return err
	}
	return s.act(ctx, sc, "template.export", map[string]any{"template": name}, func() (map[string]any, error) {
		return nil, s.o.Registry.ExportImage(ctx, t.Name, w)
	})
}

// Push uploads template name to ref.
func (s *Service) Push(ctx context.Context, sc Scope, name, ref string) error {
	if err := sc.Need(rights.Templates); err != nil {
		return err
	}
	if _, err := oci.ParseRef(ref); err != nil {
		return err
	}
	t, err := s.Resolve(sc.Tenant, name)
	if err != nil {
		return err
	}
	ctx = rights.WithScope(ctx, sc)
	return s.act(ctx, sc, "template.push", map[string]any{"template": name, "ref": ref}, func() (map[string]any, error) {
		return nil, s.o.Registry.PushImage(ctx, s.client, t.Name, ref)
	})
}

// Manager is the service as the sandbox manager looks templates up:
// Get for the server's own sandboxes (the warm pool: shared templates),
// GetFor a tenant's, Lease to pin a running sandbox's layers.
type Manager struct{ s *Service }

// ForManager returns the manager's view.
func (s *Service) ForManager() Manager { return Manager{s} }

// Get finds a shared template.
func (m Manager) Get(name string) (*template.Template, error) { return m.s.Resolve("", name) }

// GetFor finds template name as tenant sees it.
func (m Manager) GetFor(tenant, name string) (*template.Template, error) {
	return m.s.Resolve(tenant, name)
}

// List lists every stored template.
func (m Manager) List() ([]template.Info, error) { return m.s.o.Registry.List() }

// AtLayers is an image template on given layers (template.Registry.AtLayers).
func (m Manager) AtLayers(t *template.Template, name string, ids []string) (*template.Template, error) {
	return m.s.o.Registry.AtLayers(t, name, ids)
}

// Lease pins an image template's layers.
func (m Manager) Lease(t *template.Template) (func(), error) { return m.s.o.Registry.Lease(t) }
