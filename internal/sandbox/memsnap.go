package sandbox

// Memory snapshots (docs/state.md): a filesystem snapshot that also holds
// a gVisor checkpoint image of the sandbox's processes, in the snapshot
// store beside its manifest and counted in the tenant's snapshot quota. A
// create from it restores the processes (runtime gvisor).

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/wire"
)

// captureMemory checkpoints running b (left running) and stores the image
// as a snapshot. Its files are in the image (gVisor's overlay layers are
// part of a checkpoint, taken at the same instant as the memory), so the
// snapshot's own file list is empty. maxBytes (0: none) bounds the image.
func (m *Manager) captureMemory(ctx context.Context, b *box, st *snapshot.Store, meta snapshot.Meta, maxBytes int64) (snapshot.Manifest, error) {
	dir, n, err := m.checkpointRunning(ctx, b, false) // memsnap_fork.go
	if err != nil {
		return snapshot.Manifest{}, err
	}
	defer os.RemoveAll(filepath.Dir(dir)) // Put moved the image out, or it goes
	if maxBytes > 0 {
		if n >= maxBytes {
			return snapshot.Manifest{}, errs.New(errs.CodeLimit, "the memory image (%d MiB) is over the %d MiB the tenant may still store (max_snapshot_mb)", n>>20, maxBytes>>20)
		}
	}
	b.mu.Lock()
	meta.Template, meta.Source = b.sb.Spec.Template, b.sb.ID
	b.mu.Unlock()
	meta.MemoryDir, meta.MemoryBytes = dir, n
	return st.Put(ctx, meta, bytes.NewReader(emptyTar[:]), 0)
}

// memorySpec makes a create from memory snapshot name run on gVisor (an
// unnamed runtime becomes gvisor; native is refused with why).
func memorySpec(spec *Spec, name string) error {
	if len(spec.Volumes) > 0 {
		return errVolumeMemory("start from memory snapshot " + name) // hibernate.go
	}
	switch spec.Runtime {
	case "":
		spec.Runtime = wire.RuntimeGVisor
	case wire.RuntimeGVisor:
	default:
		if isNative(*spec) {
			return errNativeMemory("restore memory snapshot " + name)
		}
		return errs.New(errs.CodeUnsupported, "memory snapshot %s restores on runtime gvisor only", name)
	}
	return nil
}

// emptyTar is a tar stream of no files (its end: two zero blocks).
var emptyTar [1024]byte

// CreateSnapshotWith snapshots a sandbox, with its memory if asked
// (Manager.CreateSnapshotWith).
func (c *Caller) CreateSnapshotWith(ctx context.Context, id, name string, memory bool) (Snapshot, error) {
	return c.m.CreateSnapshotWith(ctx, rights.FromContext(ctx), id, name, memory)
}

// ForkWith forks a sandbox, with its memory if asked (Manager.ForkWith).
func (c *Caller) ForkWith(ctx context.Context, id string, count int, memory bool) ([]Sandbox, error) {
	return c.m.ForkWith(ctx, rights.FromContext(ctx), id, count, memory)
}
