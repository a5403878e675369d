package sandbox

// Volumes (docs/state.md): named volumes that outlive sandboxes, mounted
// at create. One sandbox may mount a volume read-write at a time, any
// number read-only; the table below is who holds what, rebuilt from the
// specs of the reattached sandboxes after a restart.

import (
	"context"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/internal/volume"
	"github.com/paddockhq/paddock/wire"
)

// Volume is one volume's public view.
type Volume = wire.Volume

// VolumeMount is one entry of a spec's volumes.
type VolumeMount = wire.VolumeMount

// DefaultVolumeMB is a volume's size when a create leaves it out.
const DefaultVolumeMB = 1024

// volUse is who mounts one volume: at most one writer, any readers.
type volUse struct {
	rw     string            // sandbox id (or a create's reservation)
	rwPath string            // where
	ro     map[string]string // sandbox id → path
}

// volTable is the manager's attachment table, by tenant/name.
type volTable struct {
	mu  sync.Mutex
	use map[string]*volUse
}

func volKey(tenant, name string) string { return tenant + "\x00" + name }

// reserve records holder's mounts, all or none: a second writer is
// refused with conflict.
func (t *volTable) reserve(tenant, holder string, vols []VolumeMount) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.use == nil {
		t.use = map[string]*volUse{}
	}
	for _, v := range vols {
		if u := t.use[volKey(tenant, v.Name)]; u != nil && !v.ReadOnly && u.rw != "" {
			return errs.New(errs.CodeConflict, "volume %s is mounted read-write by sandbox %s: one writer at a time (mount it read_only)", v.Name, shownHolder(u.rw))
		}
	}
	for _, v := range vols {
		k := volKey(tenant, v.Name)
		u := t.use[k]
		if u == nil {
			u = &volUse{ro: map[string]string{}}
			t.use[k] = u
		}
		if v.ReadOnly {
			u.ro[holder] = v.Path
		} else {
			u.rw, u.rwPath = holder, v.Path
		}
	}
	return nil
}

func shownHolder(h string) string {
	if strings.HasPrefix(h, "creating:") {
		return "(being created)"
	}
	return h
}

// release forgets holder's mounts.
func (t *volTable) release(tenant, holder string, vols []VolumeMount) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range vols {
		k := volKey(tenant, v.Name)
		u := t.use[k]
		if u == nil {
			continue
		}
		if u.rw == holder {
			u.rw, u.rwPath = "", ""
		}
		delete(u.ro, holder)
		if u.rw == "" && len(u.ro) == 0 {
			delete(t.use, k)
		}
	}
}

// rename moves holder's mounts to a new holder (a create's reservation
// to its sandbox id).
func (t *volTable) rename(tenant, from, to string, vols []VolumeMount) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range vols {
		u := t.use[volKey(tenant, v.Name)]
		if u == nil {
			continue
		}
		if u.rw == from {
			u.rw = to
		}
		if p, ok := u.ro[from]; ok {
			delete(u.ro, from)
			u.ro[to] = p
		}
	}
}

// attached lists who mounts tenant/name, sorted; reservations of creates
// in progress are left out.
func (t *volTable) attached(tenant, name string) []wire.VolumeAttachment {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := []wire.VolumeAttachment{}
	u := t.use[volKey(tenant, name)]
	if u == nil {
		return out
	}
	if u.rw != "" && !strings.HasPrefix(u.rw, "creating:") {
		out = append(out, wire.VolumeAttachment{Sandbox: u.rw, Path: u.rwPath})
	}
	for id, p := range u.ro {
		if !strings.HasPrefix(id, "creating:") {
			out = append(out, wire.VolumeAttachment{Sandbox: id, Path: p, ReadOnly: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sandbox < out[j].Sandbox })
	return out
}

// inUse reports whether anyone (a create in progress included) mounts it.
func (t *volTable) inUse(tenant, name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.use[volKey(tenant, name)] != nil
}

// reservedPaths are where a volume may not go: the guest's own mounts and
// the files it writes at setup.
var reservedPaths = []string{"/proc", "/dev", "/sys"}
var reservedExact = map[string]bool{"/": true, "/etc": true, "/etc/hosts": true, "/etc/hostname": true,
	"/etc/resolv.conf": true}

// normalizeVolumes validates a spec's volumes (Normalize): names, paths,
// count, no two at or under each other.
func normalizeVolumes(s *Spec) error {
	if len(s.Volumes) == 0 {
		s.Volumes = nil
		return nil
	}
	if len(s.Volumes) > wire.MaxVolumeMounts {
		return errs.Invalid("at most %d volumes per sandbox", wire.MaxVolumeMounts)
	}
	seen := map[string]bool{}
	for i, v := range s.Volumes {
		if err := volume.ValidName(v.Name); err != nil {
			return errs.Invalid("volumes[%d]: %s", i, errs.Public(err))
		}
		if seen[v.Name] {
			return errs.Invalid("volume %s is listed twice", v.Name)
		}
		seen[v.Name] = true
		if err := validVolumePath(v.Path); err != nil {
			return errs.Invalid("volumes[%d] (%s): %s", i, v.Name, errs.Public(err))
		}
		for _, w := range s.Volumes[:i] {
			if nested(v.Path, w.Path) {
				return errs.Invalid("volume paths %s and %s nest", clip(w.Path), clip(v.Path))
			}
		}
	}
	return nil
}

// validVolumePath refuses relative paths, "..", the root and the guest's
// own mounts (mounting over /proc or /dev would hide what the guest set
// up there, or let a volume's content stand in for it).
func validVolumePath(p string) error {
	switch {
	case p == "":
		return errs.Invalid("a volume needs a path")
	case len(p) > 1024 || strings.ContainsAny(p, "\x00\n") || strings.IndexFunc(p, func(r rune) bool { return r < 0x20 }) >= 0:
		return errs.Invalid("path is over 1024 bytes or has control characters")
	case !strings.HasPrefix(p, "/"):
		return errs.Invalid("path %q is relative: give an absolute path", clip(p))
	case strings.Contains("/"+p+"/", "/../") || strings.Contains("/"+p+"/", "/./"):
		return errs.Invalid("path %q has . or .. components", clip(p))
	case path.Clean(p) != p:
		return errs.Invalid("path %q is not clean (%q)", clip(p), path.Clean(p))
	case reservedExact[p]:
		return errs.Invalid("path %s is the sandbox's own (its root or files it writes at start)", p)
	}
	for _, r := range reservedPaths {
		if p == r || strings.HasPrefix(p, r+"/") {
			return errs.Invalid("path %s is under %s, which the sandbox mounts itself", clip(p), r)
		}
	}
	return nil
}

// nested: a and b are the same path or one is under the other.
func nested(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

func (m *Manager) volStore() (*volume.Store, error) {
	if m.vols == nil {
		return nil, errs.New(errs.CodeUnsupported, "this server keeps no volumes")
	}
	return m.vols, nil
}

// attachVolumes checks spec's volumes for a create (they exist for the
// tenant, the runtime can mount them, no path covers a template mount,
// no second writer), reserves them and returns their mounts and a done
// to call with the outcome: on success the reservation becomes the
// sandbox's, on failure it is released.
func (m *Manager) attachVolumes(ctx context.Context, sc Scope, spec Spec, tpl *template.Template) ([]runtime.VolumeMount, func(id string, err error), error) {
	if len(spec.Volumes) == 0 {
		return nil, func(string, error) {}, nil
	}
	st, err := m.volStore()
	if err != nil {
		return nil, nil, err
	}
	if err := sc.Need(rights.Volumes); err != nil {
		return nil, nil, err
	}
	rt, err := m.backendFor(spec)
	if err != nil {
		return nil, nil, err
	}
	if vm, ok := rt.(runtime.VolumeMounter); !ok || !vm.MountsVolumes() {
		return nil, nil, errs.New(errs.CodeUnsupported, "the %s runtime cannot mount volumes", rt.Name())
	}
	var out []runtime.VolumeMount
	for _, v := range spec.Volumes {
		for _, o := range tpl.Overlays {
			if nested(v.Path, path.Clean("/"+o.Path)) {
				return nil, nil, errs.Invalid("volume path %s covers the template's own mount at %s", clip(v.Path), o.Path)
			}
		}
		dir, err := st.DataDir(sc.Tenant, v.Name)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, runtime.VolumeMount{Name: v.Name, Source: dir, Path: v.Path, ReadOnly: v.ReadOnly})
	}
	holder := "creating:" + newID()
	if err := m.volUse.reserve(sc.Tenant, holder, spec.Volumes); err != nil {
		return nil, nil, err
	}
	return out, func(id string, err error) {
		if err != nil || id == "" {
			m.volUse.release(sc.Tenant, holder, spec.Volumes)
			return
		}
		m.volUse.rename(sc.Tenant, holder, id, spec.Volumes)
		for _, v := range spec.Volumes {
			_ = m.event(ctx, Event{Kind: "volume.attach", Phase: "event", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
				Data: map[string]any{"name": v.Name, "path": v.Path, "read_only": v.ReadOnly}})
		}
	}, nil
}

// detachVolumes releases a removed (or failed) sandbox's volumes.
func (m *Manager) detachVolumes(b *box) {
	b.mu.Lock()
	vols, tenant, id := b.sb.Spec.Volumes, b.sb.Tenant, b.sb.ID
	b.mu.Unlock()
	if len(vols) == 0 || !m.volUse.holds(tenant, id, vols) {
		return
	}
	m.volUse.release(tenant, id, vols)
	for _, v := range vols {
		_ = m.event(context.Background(), Event{Kind: "volume.detach", Phase: "event", Tenant: tenant, Sandbox: id,
			Data: map[string]any{"name": v.Name, "path": v.Path, "read_only": v.ReadOnly}})
	}
}

// holds reports whether holder still holds any of vols.
func (t *volTable) holds(tenant, holder string, vols []VolumeMount) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range vols {
		if u := t.use[volKey(tenant, v.Name)]; u != nil {
			if _, ok := u.ro[holder]; ok || u.rw == holder {
				return true
			}
		}
	}
	return false
}

// reattachVolumes re-records a sandbox reattached after a restart (its
// mounts live on in its own namespace).
func (m *Manager) reattachVolumes(b *box) {
	if len(b.sb.Spec.Volumes) == 0 {
		return
	}
	if err := m.volUse.reserve(b.sb.Tenant, b.sb.ID, b.sb.Spec.Volumes); err != nil {
		m.log.Warn("reattached sandbox's volumes conflict", "sandbox", b.sb.ID, "err", err)
	}
}

// forkVolumes is the volumes of a fork of a sandbox that has vols: a
// read-write volume is mounted read-only in the fork, since its source
// (and the other forks) would be a second writer.
func forkVolumes(vols []VolumeMount) []VolumeMount {
	if len(vols) == 0 {
		return nil
	}
	out := make([]VolumeMount, len(vols))
	for i, v := range vols {
		v.ReadOnly = true
		out[i] = v
	}
	return out
}

func (m *Manager) volumeView(tenant string, v volume.Volume) Volume {
	out := Volume{Name: v.Name, SizeMB: v.SizeBytes >> 20, CreatedAt: v.CreatedAt, Attached: m.volUse.attached(tenant, v.Name)}
	if used, _, err := m.vols.Usage(tenant, v.Name); err == nil {
		out.UsedBytes = used
	}
	return out
}

// CreateVolume makes volume name of sizeMB (0: DefaultVolumeMB) for the
// caller's tenant, within its max_volume_mb quota.
func (m *Manager) CreateVolume(ctx context.Context, sc Scope, name string, sizeMB int64) (Volume, error) {
	if err := sc.Need(rights.Volumes); err != nil {
		return Volume{}, err
	}
	if sc.Sandbox != "" {
		return Volume{}, errs.New(errs.CodeForbidden, "a sandbox-scoped token cannot create volumes")
	}
	st, err := m.volStore()
	if err != nil {
		return Volume{}, err
	}
	if err := volume.ValidName(name); err != nil {
		return Volume{}, err
	}
	if sizeMB == 0 {
		sizeMB = DefaultVolumeMB
	}
	if sizeMB < volume.MinSize>>20 || sizeMB > 1<<30 {
		return Volume{}, errs.Invalid("size_mb must be between %d and the server's ceiling", volume.MinSize>>20)
	}
	m.volCreate.Lock() // quota check and create as one step per server
	defer m.volCreate.Unlock()
	if m.volQ != nil {
		q, err := m.volQ(ctx, sc.Tenant)
		if err != nil {
			return Volume{}, err
		}
		have, err := st.Bytes(sc.Tenant)
		if err != nil {
			return Volume{}, err
		}
		if q > 0 && have+sizeMB<<20 > q {
			err := errs.New(errs.CodeLimit, "tenant %s: volume quota %d MiB reached (%d MiB in volumes, %d MiB asked)", sc.Tenant, q>>20, have>>20, sizeMB)
			_ = m.event(ctx, Event{Kind: "volume.create", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor,
				Data: map[string]any{"name": name, "size_mb": sizeMB}, Error: errs.Public(err), Code: string(errs.CodeLimit)})
			return Volume{}, err
		}
	}
	data := map[string]any{"name": name, "size_mb": sizeMB}
	if err := m.event(ctx, Event{Kind: "volume.create", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Data: data}); err != nil {
		return Volume{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	v, err := st.Create(sc.Tenant, name, sizeMB<<20)
	res := Event{Kind: "volume.create", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Data: data, Duration: time.Since(start)}
	if err != nil {
		res.Error, res.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(ctx, res)
	if err != nil {
		return Volume{}, err
	}
	return m.volumeView(sc.Tenant, v), nil
}

// ListVolumes lists the caller's tenant's volumes.
func (m *Manager) ListVolumes(ctx context.Context, sc Scope) ([]Volume, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	st, err := m.volStore()
	if err != nil {
		return nil, err
	}
	vs, err := st.List(sc.Tenant)
	if err != nil {
		return nil, err
	}
	out := make([]Volume, 0, len(vs))
	for _, v := range vs {
		out = append(out, m.volumeView(sc.Tenant, v))
	}
	return out, nil
}

// GetVolume returns one volume: another tenant's is not found.
func (m *Manager) GetVolume(ctx context.Context, sc Scope, name string) (Volume, error) {
	if err := sc.Need(rights.Read); err != nil {
		return Volume{}, err
	}
	st, err := m.volStore()
	if err != nil {
		return Volume{}, err
	}
	v, err := st.Get(sc.Tenant, name)
	if err != nil {
		return Volume{}, err
	}
	return m.volumeView(sc.Tenant, v), nil
}

// DeleteVolume deletes a volume no sandbox mounts (conflict otherwise).
func (m *Manager) DeleteVolume(ctx context.Context, sc Scope, name string) error {
	if err := sc.Need(rights.Volumes); err != nil {
		return err
	}
	if sc.Sandbox != "" {
		return errs.New(errs.CodeForbidden, "a sandbox-scoped token cannot delete volumes")
	}
	st, err := m.volStore()
	if err != nil {
		return err
	}
	if _, err := st.Get(sc.Tenant, name); err != nil {
		return err
	}
	data := map[string]any{"name": name}
	if err := m.event(ctx, Event{Kind: "volume.delete", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Data: data}); err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	// Held across the check and the delete, so no create can reserve the
	// volume in between.
	m.volUse.mu.Lock()
	var ids []string
	if u := m.volUse.use[volKey(sc.Tenant, name)]; u != nil {
		if u.rw != "" {
			ids = append(ids, shownHolder(u.rw))
		}
		for id := range u.ro {
			ids = append(ids, shownHolder(id))
		}
	}
	if len(ids) > 0 {
		m.volUse.mu.Unlock()
		sort.Strings(ids)
		err = errs.New(errs.CodeConflict, "volume %s is mounted by sandbox %s: delete or stop it first", name, strings.Join(ids, ", "))
	} else {
		err = st.Delete(sc.Tenant, name)
		m.volUse.mu.Unlock()
	}
	res := Event{Kind: "volume.delete", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Data: data}
	if err != nil {
		res.Error, res.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(ctx, res)
	return err
}

// CreateVolume makes a volume (Manager.CreateVolume).
func (c *Caller) CreateVolume(ctx context.Context, name string, sizeMB int64) (Volume, error) {
	return c.m.CreateVolume(ctx, rights.FromContext(ctx), name, sizeMB)
}

// Volumes lists the caller's volumes (Manager.ListVolumes).
func (c *Caller) Volumes(ctx context.Context) ([]Volume, error) {
	return c.m.ListVolumes(ctx, rights.FromContext(ctx))
}

// Volume returns one volume (Manager.GetVolume).
func (c *Caller) Volume(ctx context.Context, name string) (Volume, error) {
	return c.m.GetVolume(ctx, rights.FromContext(ctx), name)
}

// DeleteVolume deletes a volume (Manager.DeleteVolume).
func (c *Caller) DeleteVolume(ctx context.Context, name string) error {
	return c.m.DeleteVolume(ctx, rights.FromContext(ctx), name)
}
