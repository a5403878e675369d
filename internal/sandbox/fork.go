package sandbox

// Fork (docs/state.md): N new sandboxes from one consistent capture of a
// source, each a sandbox of its own (id, uid range, tokens, CA, audit
// identity); the fork tree is each fork's spec.fork_of.

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/wire"
)

// MaxForks is the most sandboxes one fork makes.
const MaxForks = wire.MaxForks

// forkWorkers bounds the creates a fork runs at once.
const forkWorkers = 2

// Fork makes count sandboxes (1 … MaxForks) from one capture of sandbox
// id: same files, spec, env and network policy. The source keeps running
// (it is frozen only for the capture). Forks already made are
// undone if one fails (the first error is answered); a fork of an
// unknown sandbox is not found before anything happens.
func (m *Manager) Fork(ctx context.Context, sc Scope, id string, count int) ([]Sandbox, error) {
	return m.ForkWith(ctx, sc, id, count, false)
}

// ForkWith is Fork; with memory (gVisor only, memsnap_fork.go) each fork
// also continues the source's running processes from one checkpoint.
func (m *Manager) ForkWith(ctx context.Context, sc Scope, id string, count int, memory bool) ([]Sandbox, error) {
	if err := sc.Need(rights.Write); err != nil {
		return nil, err
	}
	if err := sc.Need(rights.Snapshots); err != nil {
		return nil, err
	}
	if count == 0 {
		count = 1
	}
	if count < 1 || count > MaxForks {
		return nil, errs.Invalid("count must be between 1 and %d", MaxForks)
	}
	b, err := m.find(sc, id) // a sandbox-scoped token sees only its own: 404 for another
	if err != nil {
		return nil, err
	}
	if sc.Sandbox != "" {
		return nil, errs.New(errs.CodeForbidden, "a sandbox-scoped token cannot create sandboxes")
	}
	st, err := m.snapStore()
	if err != nil {
		return nil, err
	}
	if err := m.admitForks(ctx, sc.Tenant, count); err != nil { // quotas.go: max_forks
		return nil, err
	}
	b.mu.Lock()
	spec := b.sb.Spec
	b.mu.Unlock()
	if memory {
		if _, err := m.imagerOf(spec, "fork sandboxes with their memory"); err != nil {
			return nil, err
		}
	}
	data := map[string]any{"count": count, "memory": memory}
	if err := m.event(ctx, Event{Kind: "sandbox.fork", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Data: data}); err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	var forks []Sandbox
	if memory {
		forks, err = m.forkMemory(ctx, sc, b, spec, count) // memsnap_fork.go
	} else {
		forks, err = m.fork(ctx, sc, b, st, spec, count)
	}
	ids := make([]string, len(forks))
	for i, f := range forks {
		ids[i] = f.ID
	}
	res := Event{Kind: "sandbox.fork", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Data: map[string]any{"count": count, "memory": memory, "forks": ids}, Duration: time.Since(start)}
	if err != nil {
		res.Error, res.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(ctx, res)
	return forks, err
}

func (m *Manager) fork(ctx context.Context, sc Scope, b *box, st *snapshot.Store, spec Spec, count int) ([]Sandbox, error) {
	// The capture is spooled as its tar stream, not stored as a snapshot:
	// it lives only while the forks are made (no hashing, no fsync, not
	// counted against the snapshot quota; the source's disk limit bounds
	// it), and a crash meanwhile leaves it in the store's tmp directory,
	// which the next start empties.
	f, err := st.Spool()
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "the fork could not be prepared")
	}
	defer os.Remove(f.Name())
	err = m.captureTo(ctx, b, func(_ Sandbox, r io.Reader) error {
		_, err := io.Copy(f, r)
		return err
	})
	if cerr := f.Close(); err == nil && cerr != nil {
		err = errs.Wrap(errs.CodeInternal, cerr, "the fork could not be prepared")
	}
	if err != nil {
		return nil, err
	}
	fs := spec
	fs.Snapshot, fs.ForkOf = "", b.sb.ID
	fs.Volumes = forkVolumes(fs.Volumes) // volumes.go: read-write ones read-only
	return m.makeForks(ctx, sc, fs, &layerFrom{name: "fork of " + b.sb.ID, spool: f.Name()}, count)
}

// makeForks creates count sandboxes of spec fs from src, all or nothing.
func (m *Manager) makeForks(ctx context.Context, sc Scope, fs Spec, src *layerFrom, count int) ([]Sandbox, error) {
	out := make([]Sandbox, count)
	errsOf := make([]error, count)
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(forkWorkers, count) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errsOf[i] = m.createFrom(ctx, sc, fs, src)
			}
		}()
	}
	for i := range count {
		next <- i
	}
	close(next)
	wg.Wait()
	made := make([]Sandbox, 0, count)
	var first error
	for i := range out {
		if errsOf[i] == nil {
			made = append(made, out[i])
		} else if first == nil {
			first = errsOf[i]
		}
	}
	if first != nil {
		// All or nothing: a caller told "failed" must not be left paying
		// for forks it never learnt the ids of.
		for _, f := range made {
			if err := m.Delete(context.WithoutCancel(ctx), sc, f.ID); err != nil {
				m.log.Error("undo fork", "sandbox", f.ID, "err", err)
			}
		}
		return nil, first
	}
	return made, nil
}

// forksOf lists the live sandboxes forked from id.
func (m *Manager) forksOf(tenant, id string) []string {
	var out []string
	for _, sb := range m.tenantList(tenant, "", nil) {
		if sb.Spec.ForkOf == id {
			out = append(out, sb.ID)
		}
	}
	return out
}
