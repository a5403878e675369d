package sandbox

// Filesystem snapshots (docs/state.md): capture a sandbox's writable layer
// into the snapshot store while it is frozen, list and delete snapshots,
// and start a sandbox from one.

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/wire"
)

// Snapshot is one snapshot's public view.
type Snapshot = wire.Snapshot

func snapshotView(m snapshot.Manifest) Snapshot {
	return Snapshot{Name: m.Name, Template: m.Template, Source: m.Source, CreatedAt: m.CreatedAt, Bytes: m.Bytes, Files: m.Files,
		Memory: m.MemoryBytes > 0, MemoryBytes: m.MemoryBytes}
}

func (m *Manager) snapStore() (*snapshot.Store, error) {
	if m.snaps == nil {
		return nil, errs.New(errs.CodeUnsupported, "this server keeps no snapshots")
	}
	return m.snaps, nil
}

// CreateSnapshot captures sandbox id's files as snapshot name: the sandbox
// is frozen for the copy (a paused one stays paused) and thawed after.
func (m *Manager) CreateSnapshot(ctx context.Context, sc Scope, id, name string) (Snapshot, error) {
	return m.CreateSnapshotWith(ctx, sc, id, name, false)
}

// CreateSnapshotWith is CreateSnapshot; with memory (gVisor only,
// memsnap.go) the snapshot also holds a checkpoint of the processes.
func (m *Manager) CreateSnapshotWith(ctx context.Context, sc Scope, id, name string, memory bool) (Snapshot, error) {
	if err := sc.Need(rights.Snapshots); err != nil {
		return Snapshot{}, err
	}
	st, err := m.snapStore()
	if err != nil {
		return Snapshot{}, err
	}
	if err := snapshot.ValidName(name); err != nil {
		return Snapshot{}, err
	}
	b, err := m.find(sc, id)
	if err != nil {
		return Snapshot{}, err
	}
	quota, err := m.snapshotRoom(ctx, sc.Tenant)
	if err != nil {
		return Snapshot{}, err
	}
	if memory {
		b.mu.Lock()
		spec := b.sb.Spec
		b.mu.Unlock()
		if _, err := m.imagerOf(spec, "take memory snapshots"); err != nil {
			return Snapshot{}, err
		}
	}
	data := map[string]any{"name": name, "memory": memory}
	if err := m.event(ctx, Event{Kind: "snapshot.create", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Data: data}); err != nil {
		return Snapshot{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	var man snapshot.Manifest
	if memory {
		man, err = m.captureMemory(ctx, b, st, snapshot.Meta{Tenant: sc.Tenant, Name: name}, quota) // memsnap.go
	} else {
		man, err = m.capture(ctx, b, st, snapshot.Meta{Tenant: sc.Tenant, Name: name}, quota)
	}
	res := Event{Kind: "snapshot.create", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Data: map[string]any{"name": name, "bytes": man.Bytes, "files": man.Files, "memory": memory, "memory_bytes": man.MemoryBytes}, Duration: time.Since(start)}
	if err != nil {
		res.Error, res.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(ctx, res)
	if err != nil {
		return Snapshot{}, err
	}
	return snapshotView(man), nil
}

// snapshotRoom is how many bytes tenant may still add to its snapshots
// (0: no bound); at or over its quota, a limit_exceeded error.
func (m *Manager) snapshotRoom(ctx context.Context, tenant string) (int64, error) {
	if m.snapQ == nil {
		return 0, nil
	}
	q, err := m.snapQ(ctx, tenant)
	if err != nil || q <= 0 {
		return 0, err
	}
	left := q - m.snaps.Bytes(tenant)
	if left <= 0 {
		return 0, errs.New(errs.CodeLimit, "tenant %s: its snapshots are at their quota of %d MiB (max_snapshot_mb)", tenant, q>>20)
	}
	return left, nil
}

// capture freezes b (unless paused), streams its layer into the store and
// thaws it. One pause or resume at a time (pz.op), so a concurrent resume
// cannot thaw it mid-copy.
func (m *Manager) capture(ctx context.Context, b *box, st *snapshot.Store, meta snapshot.Meta, maxBytes int64) (snapshot.Manifest, error) {
	var man snapshot.Manifest
	err := m.captureTo(ctx, b, func(sb Sandbox, r io.Reader) (err error) {
		meta.Template, meta.Source = sb.Spec.Template, sb.ID
		man, err = st.Put(ctx, meta, r, maxBytes)
		return err
	})
	return man, err
}

// captureTo freezes b (unless paused), hands its layer's capture stream to
// sink and thaws it.
func (m *Manager) captureTo(ctx context.Context, b *box, sink func(Sandbox, io.Reader) error) error {
	b.pz.op.Lock()
	defer b.pz.op.Unlock()
	b.mu.Lock()
	sb, gone := b.sb, b.gone
	b.mu.Unlock()
	switch {
	case gone:
		return errs.NotFound("sandbox not found")
	case sb.State != StateRunning && sb.State != StatePaused:
		return errs.New(errs.CodeSandboxNotActive, "sandbox is %s: %s", sb.State, sb.Reason)
	}
	be := m.backendOf(sb.Spec)
	c, err := runtime.CapturerOf(be.Name(), b.inst)
	if err != nil {
		return err
	}
	if sb.State == StateRunning {
		p, err := runtime.PauserOf(be.Name(), b.inst)
		if err != nil {
			return err
		}
		if err := p.Pause(ctx); err != nil {
			return errs.Wrap(errs.CodeOf(err), err, "the sandbox could not be frozen for the snapshot")
		}
		defer func() {
			if err := p.Resume(context.WithoutCancel(ctx)); err != nil {
				m.log.Error("thaw after snapshot", "sandbox", sb.ID, "err", err)
			}
		}()
	}
	pr, pw := io.Pipe()
	capErr := make(chan error, 1)
	go func() {
		err := c.CaptureFS(ctx, pw)
		pw.CloseWithError(err)
		capErr <- err
	}()
	err = sink(sb, pr)
	pr.CloseWithError(io.ErrClosedPipe) // a failed Put stops the capture
	if cerr := <-capErr; cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		if errs.CodeOf(err) == errs.CodeInternal {
			m.log.Error("snapshot", "sandbox", sb.ID, "err", err)
			return errs.Wrap(errs.CodeInternal, err, "the snapshot could not be taken")
		}
		return err
	}
	return nil
}

// ListSnapshots lists the tenant's snapshots by name.
func (m *Manager) ListSnapshots(ctx context.Context, sc Scope) ([]Snapshot, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	st, err := m.snapStore()
	if err != nil {
		return nil, err
	}
	list, err := st.List(sc.Tenant)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, 0, len(list))
	for _, s := range list {
		out = append(out, snapshotView(s))
	}
	return out, nil
}

// GetSnapshot returns one of the tenant's snapshots; another tenant's is
// not found.
func (m *Manager) GetSnapshot(ctx context.Context, sc Scope, name string) (Snapshot, error) {
	if err := sc.Need(rights.Read); err != nil {
		return Snapshot{}, err
	}
	st, err := m.snapStore()
	if err != nil {
		return Snapshot{}, err
	}
	man, err := st.Get(sc.Tenant, name)
	if err != nil {
		return Snapshot{}, err
	}
	return snapshotView(man), nil
}

// DeleteSnapshot deletes one of the tenant's snapshots and the files only
// it held. One a create is restoring answers conflict.
func (m *Manager) DeleteSnapshot(ctx context.Context, sc Scope, name string) error {
	if err := sc.Need(rights.Snapshots); err != nil {
		return err
	}
	st, err := m.snapStore()
	if err != nil {
		return err
	}
	if _, err := st.Get(sc.Tenant, name); err != nil {
		return err
	}
	data := map[string]any{"name": name}
	if err := m.event(ctx, Event{Kind: "snapshot.delete", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Data: data}); err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	err = st.Delete(sc.Tenant, name)
	res := Event{Kind: "snapshot.delete", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Data: data}
	if err != nil {
		res.Error, res.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(ctx, res)
	return err
}

// layerFrom is a snapshot a create restores, held (Acquire) until the
// create is done.
type layerFrom struct {
	name  string
	man   snapshot.Manifest
	spool string // a fork's capture, as the tar file itself (fork.go)
	// image is a gVisor checkpoint image to restore (processes and files,
	// memsnap.go) instead of a layer.
	image string
}

// source is the runtime's view of src (nil: an empty layer).
func (src *layerFrom) source(m *Manager) runtime.LayerSource {
	if src == nil {
		return nil
	}
	if src.spool != "" {
		return func(context.Context) (io.ReadCloser, error) { return os.Open(src.spool) }
	}
	return func(ctx context.Context) (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(m.snaps.WriteTarRefs(ctx, src.man, pw)) }()
		return blobStream{PipeReader: pr, st: m.snaps, tenant: src.man.Tenant}, nil
	}
}

// blobStream is a snapshot's capture whose files' contents are opened
// from the store by their keys (runtime.BlobOpener), for the backend to
// copy in the kernel.
type blobStream struct {
	*io.PipeReader
	st     *snapshot.Store
	tenant string
}

func (b blobStream) OpenBlob(key string) (*os.File, error) { return b.st.OpenBlob(b.tenant, key) }

// canRestore refuses a snapshot create on a runtime that cannot restore.
func canRestore(rt runtime.Backend, src *layerFrom) error {
	if src == nil {
		return nil
	}
	if src.image != "" {
		if _, ok := rt.(imager); !ok {
			if rt.Name() == wire.RuntimeNative {
				return errNativeMemory("restore a memory image")
			}
			return errs.New(errs.CodeUnsupported, "the %s runtime cannot restore memory images", rt.Name())
		}
		return nil
	}
	if r, ok := rt.(runtime.FSRestorer); ok && r.RestoresFS() {
		return nil
	}
	return errs.New(errs.CodeUnsupported, "the %s runtime cannot create sandboxes from snapshots", rt.Name())
}

// snapshotSource holds the snapshot a create spec names, and makes the
// spec's template the snapshot's (another one is refused: the snapshot is
// a layer over its own template). release is never nil.
func (m *Manager) snapshotSource(ctx context.Context, sc Scope, spec *Spec) (*layerFrom, func(), error) {
	if spec.Snapshot == "" {
		return nil, func() {}, nil
	}
	if err := sc.Need(rights.Snapshots); err != nil {
		return nil, func() {}, err
	}
	st, err := m.snapStore()
	if err != nil {
		return nil, func() {}, err
	}
	if err := snapshot.ValidName(spec.Snapshot); err != nil {
		return nil, func() {}, err
	}
	man, release, err := st.Acquire(sc.Tenant, spec.Snapshot)
	if err != nil {
		return nil, func() {}, err
	}
	if spec.Template == "" {
		spec.Template = man.Template
	} else if spec.Template != man.Template {
		release()
		return nil, func() {}, errs.Invalid("snapshot %s is of template %s, not %s", man.Name, man.Template, spec.Template)
	}
	if man.MemoryBytes > 0 {
		// Its processes come back: only the runtime that made it can.
		if err := memorySpec(spec, man.Name); err != nil {
			release()
			return nil, func() {}, err
		}
		return &layerFrom{name: man.Name, man: man, image: st.MemoryPath(man)}, release, nil
	}
	return &layerFrom{name: man.Name, man: man}, release, nil
}

// CreateSnapshot snapshots a sandbox's files (Manager.CreateSnapshot).
func (c *Caller) CreateSnapshot(ctx context.Context, id, name string) (Snapshot, error) {
	return c.m.CreateSnapshot(ctx, rights.FromContext(ctx), id, name)
}

// Snapshots lists the caller's snapshots (Manager.ListSnapshots).
func (c *Caller) Snapshots(ctx context.Context) ([]Snapshot, error) {
	return c.m.ListSnapshots(ctx, rights.FromContext(ctx))
}

// Snapshot returns one snapshot (Manager.GetSnapshot).
func (c *Caller) Snapshot(ctx context.Context, name string) (Snapshot, error) {
	return c.m.GetSnapshot(ctx, rights.FromContext(ctx), name)
}

// DeleteSnapshot deletes a snapshot (Manager.DeleteSnapshot).
func (c *Caller) DeleteSnapshot(ctx context.Context, name string) error {
	return c.m.DeleteSnapshot(ctx, rights.FromContext(ctx), name)
}

// Fork forks a sandbox count times (Manager.Fork).
func (c *Caller) Fork(ctx context.Context, id string, count int) ([]Sandbox, error) {
	return c.m.Fork(ctx, rights.FromContext(ctx), id, count)
}
