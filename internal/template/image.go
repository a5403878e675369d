package template

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/internal/durable"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci"
)

// KindImage marks templates made from OCI images (pulled, imported or
// built); their root is their layer stack in the layer store.
const KindImage = "image"

const (
	imageConfigFile = "image-config.json"
	maxImageConfig  = 8 << 20
	refOwnerPrefix  = "tpl:"
)

// InUse reports whether sandboxes use template name; the manager
// implements it. Remove calls it with the registry lock held.
type InUse func(name string) bool

// ImageOptions configure PullImage, ImportImage and InstallImage.
type ImageOptions struct {
	Name     string   // template name (required)
	Tenant   string   // the owning tenant, recorded in the template; "" for a shared one
	Replace  bool     // replace an existing template of that name
	StartCmd []string // overrides the image's sh.paddock.start-cmd label
	ReadyCmd []string // overrides sh.paddock.ready-cmd / HEALTHCHECK
	Limits   layers.Limits
	Progress func(string)
}

// Source records where an image template came from (no credentials).
type Source struct {
	Kind       string `json:"kind"` // "registry", "docker-save", "oci-layout", "oci-archive", "build"
	Ref        string `json:"ref,omitempty"`
	Digest     string `json:"digest,omitempty"`
	Dockerfile string `json:"dockerfile_digest,omitempty"`
}

// imageMeta is the image part of template.json.
type imageMeta struct {
	Layers   []string `json:"layers"`           // diff ids, bottom first
	Tenant   string   `json:"tenant,omitempty"` // owner; "" for a shared template
	RefOwner string   `json:"ref_owner"`
	Source   Source   `json:"source"`
	Defaults Defaults `json:"defaults"`
}

// UseLayerStore enables image templates, kept in st. It drops layer
// references that no installed template owns (a crash between taking
// references and installing the template).
func (r *Registry) UseLayerStore(st *layers.Store) {
	r.mu.Lock()
	r.store = st
	r.mu.Unlock()
	unlock, err := r.lock()
	if err != nil {
		r.log.Warn("template registry: cannot lock to sweep layer references", "err", err)
		return
	}
	defer unlock()
	owned := map[string]bool{}
	if ents, err := os.ReadDir(r.dir); err == nil {
		for _, e := range ents {
			if m, _, ok := r.readyImage(e.Name()); ok {
				owned[m.Image.RefOwner] = true
			}
		}
	}
	for _, o := range st.Owners(refOwnerPrefix) {
		if !owned[o] {
			r.log.Info("template registry: dropping orphaned layer references", "owner", o)
			_ = st.DropRefs(o)
		}
	}
}

func (r *Registry) layerStore() (*layers.Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store == nil {
		return nil, errs.New(errs.CodeUnsupported, "image templates are not enabled on this server")
	}
	return r.store, nil
}

// PullImage pulls ref and installs it as template o.Name.
func (r *Registry) PullImage(ctx context.Context, c *oci.Client, ref string, o ImageOptions) (*Template, error) {
	st, err := r.layerStore()
	if err != nil {
		return nil, err
	}
	if err := r.checkNewName(o); err != nil {
		return nil, err
	}
	progress(o, "resolving %s", ref)
	img, err := c.Pull(ctx, ref)
	if err != nil {
		return nil, err
	}
	return r.unpackInstall(ctx, c, st, img, Source{Kind: "registry", Ref: img.Ref, Digest: img.Digest}, o)
}

// ImportImage imports an archive (docker save, OCI layout, oci-archive)
// as template o.Name; tag picks one image when it holds several.
func (r *Registry) ImportImage(ctx context.Context, c *oci.Client, path, tag string, o ImageOptions) (*Template, error) {
	st, err := r.layerStore()
	if err != nil {
		return nil, err
	}
	if err := r.checkNewName(o); err != nil {
		return nil, err
	}
	a, err := c.OpenArchive(path, tag, r.dir)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return r.unpackInstall(ctx, c, st, a.Image, Source{Kind: a.Kind, Digest: a.Image.Digest}, o)
}

func (r *Registry) unpackInstall(ctx context.Context, c *oci.Client, st *layers.Store, img *oci.Image, src Source, o ImageOptions) (*Template, error) {
	lease := st.NewLease()
	defer lease.Release()
	n := 0
	ls, err := c.Unpack(ctx, img, st, lease, oci.UnpackOptions{Limits: o.Limits, Progress: func(e oci.Event) {
		n++
		state := "unpacked"
		if e.Cached {
			state = "already stored"
		}
		progress(o, "layer %d/%d %s %s", n, len(img.Layers), e.DiffID[:19], state)
	}})
	if err != nil {
		return nil, err
	}
	return r.InstallImage(ctx, ls, img.Config, src, o)
}

// InstallImage installs layers (bottom first, held by the caller's
// lease) with cfg as template o.Name. The builder calls it with its
// result.
func (r *Registry) InstallImage(ctx context.Context, ls []layers.Layer, cfg *v1.ConfigFile, src Source, o ImageOptions) (*Template, error) {
	st, err := r.layerStore()
	if err != nil {
		return nil, err
	}
	if err := r.checkNewName(o); err != nil {
		return nil, err
	}
	if !r.claim(o.Name) {
		return nil, errs.New(errs.CodeConflict, "template %q is already being made", o.Name)
	}
	defer r.release(o.Name)
	ids := make([]string, len(ls))
	lowers := make([]string, len(ls))
	var size int64
	for i, l := range ls {
		ids[i] = l.DiffID
		lowers[len(ls)-1-i] = l.Dir
		size += l.DiskBytes
	}
	staging, lockf, err := r.newStaging(o.Name, false)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "template %q: cannot create a staging directory", o.Name)
	}
	defer lockf.Close()
	installed := false
	defer func() {
		if !installed {
			os.RemoveAll(staging)
		}
	}()
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "template %q: cannot encode its image config", o.Name)
	}
	if err := os.WriteFile(filepath.Join(staging, imageConfigFile), raw, 0o644); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "template %q: cannot write its image config", o.Name)
	}
	desc := src.Ref
	if desc == "" {
		desc = src.Kind
	}
	m := meta{
		Name:        o.Name,
		Kind:        KindImage,
		Description: fmt.Sprintf("image %s (%d layers)", desc, len(ls)),
		CreatedAt:   time.Now().UTC().Truncate(time.Second),
		SizeBytes:   size,
		Builder:     src.Kind,
		Image: &imageMeta{
			Layers:   ids,
			Tenant:   o.Tenant,
			RefOwner: refOwnerPrefix + o.Name + ":" + durable.RandHex(),
			Source:   src,
			Defaults: defaultsFrom(cfg, lowers, o.StartCmd, o.ReadyCmd),
		},
	}
	if err := writeMeta(staging, m); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "template %q: cannot write its metadata", o.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, cancelled(o.Name, err)
	}
	// References first: a crash after this leaves an orphaned owner that
	// UseLayerStore drops, never an installed template without its layers.
	if err := st.SetRefs(m.Image.RefOwner, ids); err != nil {
		return nil, err
	}
	unlock, err := r.lock()
	if err != nil {
		st.DropRefs(m.Image.RefOwner)
		return nil, err
	}
	old, _, hadOld := r.readyImage(o.Name)
	if _, _, exists := r.ready(o.Name); exists && !o.Replace {
		unlock()
		st.DropRefs(m.Image.RefOwner)
		return nil, errs.New(errs.CodeConflict, "template %q already exists", o.Name)
	}
	err = r.installLocked(staging, o.Name)
	unlock()
	if err != nil {
		st.DropRefs(m.Image.RefOwner)
		return nil, errs.Wrap(errs.CodeInternal, err, "template %q: cannot install it", o.Name)
	}
	installed = true
	if hadOld {
		_ = st.DropRefs(old.Image.RefOwner)
	}
	progress(o, "template %q ready (%s)", o.Name, humanBytes(size))
	return r.Get(o.Name)
}

func (r *Registry) checkNewName(o ImageOptions) error {
	if !ValidName(o.Name) {
		return errs.Invalid("invalid template name %s: use lower-case letters, digits, '.', '_' and '-', at most %d characters", quoteName(o.Name), MaxNameLen)
	}
	if o.Name == HostName {
		return errs.Invalid("template name %q is reserved for the built-in host template", HostName)
	}
	if _, _, exists := r.ready(o.Name); exists && !o.Replace {
		return errs.New(errs.CodeConflict, "template %q already exists (remove it first, or replace it)", o.Name)
	}
	return nil
}

func progress(o ImageOptions, format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// readyImage returns the metadata of an installed image template.
func (r *Registry) readyImage(name string) (*meta, string, bool) {
	if !ValidName(name) {
		return nil, "", false
	}
	dir := filepath.Join(r.dir, name)
	m, err := readMeta(dir)
	if err != nil || m.Kind != KindImage || m.Image == nil {
		return nil, "", false
	}
	return m, dir, true
}

// imageTemplate completes t (an image template) from the store.
func (r *Registry) imageTemplate(t *Template, m *meta) error {
	st, err := r.layerStore()
	if err != nil {
		return err
	}
	t.Kind = KindImage
	t.Layers = make([]string, len(m.Image.Layers))
	for i, id := range m.Image.Layers {
		l, ok := st.Get(id)
		if !ok {
			return errs.New(errs.CodeUnavailable, "template %q is damaged: its layer %s is missing from the store", t.Name, id[:min(len(id), 19)])
		}
		t.Layers[len(m.Image.Layers)-1-i] = l.Dir
	}
	t.DiffIDs = append([]string(nil), m.Image.Layers...)
	t.Tenant = m.Image.Tenant
	d := m.Image.Defaults
	t.Defaults = &d
	t.Source = m.Image.Source
	return nil
}

// ImageConfig returns an image template's layers (bottom first) and
// config: the builder's FROM <template> and export use it.
func (r *Registry) ImageConfig(name string) ([]layers.Layer, *v1.ConfigFile, error) {
	st, err := r.layerStore()
	if err != nil {
		return nil, nil, err
	}
	m, dir, ok := r.readyImage(name)
	if !ok {
		if _, _, exists := r.ready(name); exists {
			return nil, nil, errs.New(errs.CodeUnsupported, "template %q is not an image template", name)
		}
		return nil, nil, r.notFound(name)
	}
	f, err := openNoFollow(filepath.Join(dir, imageConfigFile))
	if err != nil {
		return nil, nil, errs.Wrap(errs.CodeInternal, err, "template %q: cannot read its image config", name)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxImageConfig))
	if err != nil {
		return nil, nil, errs.Wrap(errs.CodeInternal, err, "template %q: cannot read its image config", name)
	}
	cfg, err := v1.ParseConfigFile(strings.NewReader(string(raw)))
	if err != nil {
		return nil, nil, errs.Wrap(errs.CodeInternal, err, "template %q: its image config is damaged", name)
	}
	out := make([]layers.Layer, len(m.Image.Layers))
	for i, id := range m.Image.Layers {
		l, ok := st.Get(id)
		if !ok {
			return nil, nil, errs.New(errs.CodeUnavailable, "template %q is damaged: its layer %s is missing from the store", name, id[:min(len(id), 19)])
		}
		out[i] = l
	}
	return out, cfg, nil
}

// ExportImage writes template name as an oci-archive to w.
func (r *Registry) ExportImage(ctx context.Context, name string, w io.Writer) error {
	ex, err := r.exportImage(ctx, name)
	if err != nil {
		return err
	}
	defer ex.Close()
	return oci.WriteOCIArchive(w, ex.Image, name)
}

// PushImage pushes template name to ref.
func (r *Registry) PushImage(ctx context.Context, c *oci.Client, name, ref string) error {
	ex, err := r.exportImage(ctx, name)
	if err != nil {
		return err
	}
	defer ex.Close()
	return c.Push(ctx, ref, ex.Image)
}

func (r *Registry) exportImage(ctx context.Context, name string) (*oci.Export, error) {
	st, err := r.layerStore()
	if err != nil {
		return nil, err
	}
	ls, cfg, err := r.ImageConfig(name)
	if err != nil {
		return nil, err
	}
	lease := st.NewLease()
	defer lease.Release()
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.DiffID
	}
	if err := lease.Hold(ids...); err != nil {
		return nil, err
	}
	return oci.StoreImage(ctx, ls, *cfg, r.dir)
}

// Remove deletes template name unless inUse says sandboxes use it. Its
// layers stay in the store while other templates share them; GC frees
// the rest.
func (r *Registry) Remove(name string, inUse InUse) error {
	if !ValidName(name) {
		return errs.Invalid("invalid template name %s", quoteName(name))
	}
	if name == HostName {
		return errs.New(errs.CodeForbidden, "the built-in host template cannot be removed")
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if r.isBuilding(name) {
		return errs.New(errs.CodeConflict, "template %q is being made", name)
	}
	dir := filepath.Join(r.dir, name)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return r.notFound(name)
	}
	if inUse != nil && inUse(name) {
		return errs.New(errs.CodeConflict, "template %q is in use by sandboxes; remove them first", name)
	}
	m, _, isImage := r.readyImage(name)
	old := filepath.Join(r.dir, oldPrefix+name+"-"+durable.RandHex())
	if err := os.Rename(dir, old); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "template %q: cannot remove it", name)
	}
	_ = durable.SyncDir(r.dir)
	if isImage {
		if st, err := r.layerStore(); err == nil {
			if err := st.DropRefs(m.Image.RefOwner); err != nil {
				r.log.Warn("template remove: cannot drop layer references", "name", name, "err", err)
			}
		}
	}
	if err := removeTree(old); err != nil {
		r.log.Warn("template remove: cannot remove its directory", "name", name, "err", err)
	}
	return nil
}

func (r *Registry) isBuilding(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.building[name]
}

// GC removes layers no template or build-cache entry holds.
func (r *Registry) GC() (removed int, freed int64, err error) {
	st, err := r.layerStore()
	if err != nil {
		return 0, 0, err
	}
	return st.GC()
}

// imageInfo fills an image template's sizes from the store: its layers'
// disk bytes, and how many of them other owners (templates, the build
// cache) hold too. A template whose layers are missing is not ready.
func (r *Registry) imageInfo(info *Info, m *meta) {
	info.Kind = KindImage
	info.Layers = len(m.Image.Layers)
	info.Tenant = m.Image.Tenant
	info.Source = m.Image.Source
	st, err := r.layerStore()
	if err != nil {
		info.Ready = false
		return
	}
	info.SizeBytes = 0
	for _, id := range m.Image.Layers {
		l, ok := st.Get(id)
		if !ok {
			info.Ready = false
			continue
		}
		info.SizeBytes += l.DiskBytes
		if st.Refs(id) > 1 {
			info.SharedBytes += l.DiskBytes
		}
	}
}

// AtLayers is image template t (nil: one named name, gone since) on the
// layers ids (diff ids, bottom first) as they are in the store: a
// hibernated sandbox wakes on the layers it was made from, whatever its
// template's name points to now (a pull --replace). A layer no longer in
// the store is invalid_argument.
func (r *Registry) AtLayers(t *Template, name string, ids []string) (*Template, error) {
	st, err := r.layerStore()
	if err != nil {
		return nil, err
	}
	out := &Template{Name: name}
	if t != nil {
		c := *t
		out = &c
	}
	out.Kind, out.Root, out.Overlays = KindImage, "", nil
	out.Layers = make([]string, len(ids))
	for i, id := range ids {
		l, ok := st.Get(id)
		if !ok {
			return nil, errs.New(errs.CodeInvalid, "template %q: layer %s the sandbox was made from is no longer in the store", name, id[:min(len(id), 19)])
		}
		out.Layers[len(ids)-1-i] = l.Dir
	}
	out.DiffIDs = append([]string(nil), ids...)
	return out, nil
}

// Lease pins image template t's layers (a running sandbox's root) until
// the returned release is called; other templates pin nothing.
func (r *Registry) Lease(t *Template) (release func(), err error) {
	if t == nil || t.Kind != KindImage {
		return func() {}, nil
	}
	st, err := r.layerStore()
	if err != nil {
		return nil, err
	}
	l := st.NewLease()
	if err := l.Hold(t.DiffIDs...); err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "template %q is damaged: a layer is missing from the store", t.Name)
	}
	return l.Release, nil
}
