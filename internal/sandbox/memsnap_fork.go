package sandbox

// Fork with memory (docs/state.md): one checkpoint of the running source
// (gVisor, left running), restored once per fork: each continues the
// source's processes from the same instant, as a sandbox of its own.

import (
	"context"
	"os"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// imager is a runtime that checkpoints running sandboxes into images and
// starts sandboxes from them (gvisor.Backend).
type imager interface {
	CheckpointTo(ctx context.Context, inst runtime.Instance, dir string) (int64, error)
	// CheckpointTemp is CheckpointTo for an image restored at once and
	// then removed (not flushed to disk).
	CheckpointTemp(ctx context.Context, inst runtime.Instance, dir string) (int64, error)
	Restore(ctx context.Context, cfg runtime.Config, dir string) (runtime.Instance, error)
}

// imagerOf is spec's runtime as an imager, or why not.
func (m *Manager) imagerOf(spec Spec, what string) (imager, error) {
	be := m.backendOf(spec)
	if im, ok := be.(imager); ok {
		if len(spec.Volumes) > 0 {
			return nil, errVolumeMemory(what) // hibernate.go
		}
		return im, nil
	}
	if isNative(spec) {
		return nil, errNativeMemory(what)
	}
	return nil, errs.New(errs.CodeUnsupported, "the %s runtime cannot %s", be.Name(), what)
}

// checkpointRunning checkpoints running b into a new image directory
// under the snapshot store's tmp directory (emptied at start: a crash
// leaves nothing) and returns it with its size; the caller removes it.
// A temporary image (a fork's, restored at once) is not flushed to disk.
// One pause, resume or hibernation at a time (pz.op).
func (m *Manager) checkpointRunning(ctx context.Context, b *box, temporary bool) (dir string, n int64, err error) {
	st, err := m.snapStore()
	if err != nil {
		return "", 0, err
	}
	b.pz.op.Lock()
	defer b.pz.op.Unlock()
	b.mu.Lock()
	sb, gone, inst := b.sb, b.gone, b.inst
	b.mu.Unlock()
	switch {
	case gone:
		return "", 0, errs.NotFound("sandbox not found")
	case sb.State == StatePaused || sb.State == StateHibernated:
		return "", 0, errs.New(errs.CodeSandboxPaused, "sandbox is %s: resume it first", sb.State)
	case sb.State != StateRunning:
		return "", 0, errs.New(errs.CodeSandboxNotActive, "sandbox is %s: %s", sb.State, sb.Reason)
	}
	im, err := m.imagerOf(sb.Spec, "checkpoint memory")
	if err != nil {
		return "", 0, err
	}
	parent, err := st.TempDir()
	if err != nil {
		return "", 0, errs.Wrap(errs.CodeInternal, err, "the memory image could not be prepared")
	}
	dir = filepath.Join(parent, "image")
	if temporary {
		n, err = im.CheckpointTemp(ctx, inst, dir)
	} else {
		n, err = im.CheckpointTo(ctx, inst, dir)
	}
	if err != nil {
		_ = os.RemoveAll(parent)
		m.log.Error("checkpoint", "sandbox", sb.ID, "err", err)
		if errs.CodeOf(err) == errs.CodeInternal {
			err = errs.Wrap(errs.CodeInternal, err, "the sandbox's memory could not be checkpointed")
		}
		return "", 0, err
	}
	return dir, n, nil
}

// forkMemory makes count forks of b, each restored from one checkpoint.
func (m *Manager) forkMemory(ctx context.Context, sc Scope, b *box, spec Spec, count int) ([]Sandbox, error) {
	dir, _, err := m.checkpointRunning(ctx, b, true)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(filepath.Dir(dir))
	fs := spec
	fs.Snapshot, fs.ForkOf = "", b.sb.ID
	return m.makeForks(ctx, sc, fs, &layerFrom{name: "memory fork of " + b.sb.ID, image: dir}, count)
}
