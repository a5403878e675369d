package mcp

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// memoryBackend is what the memory tools need of a Backend (gVisor's
// hibernation, memory snapshots and forks; docs/state.md).
type memoryBackend interface {
	Hibernate(ctx context.Context, id string) (wire.Sandbox, error)
	CreateSnapshotWith(ctx context.Context, id, name string, memory bool) (wire.Snapshot, error)
	ForkWith(ctx context.Context, id string, count int, memory bool) ([]wire.Sandbox, error)
}

type memSnapshotOut struct {
	fsSnapshotOut
	MemoryBytes int64 `json:"memory_bytes"`
}

func memoryOf(c *Call) (memoryBackend, error) {
	if mb, ok := c.Backend().(memoryBackend); ok {
		return mb, nil
	}
	return nil, newToolError(errs.CodeUnsupported, "This server cannot hibernate, snapshot or fork sandboxes with their memory.")
}

// memoryTools are sandbox_hibernate, sandbox_memory_snapshot and
// sandbox_fork_memory.
func memoryTools(tb *Toolbox) {
	Add(tb, Tool{Name: "sandbox_hibernate", Need: rights.Of(rights.Write), Title: "Hibernate a sandbox", Idempotent: true,
		Description: "gVisor sandboxes only. Save a sandbox's processes, memory and files to disk and release its RAM; its " +
			"timeout clock stops. sandbox_resume restores it exactly where it was (same id); so does any tool on it if it " +
			"was created with auto_resume. Survives server restarts."},
		lifecycle("hibernate", func(c *Call) (func(context.Context, string) (wire.Sandbox, error), error) {
			mb, err := memoryOf(c)
			if err != nil {
				return nil, err
			}
			return mb.Hibernate, nil
		}))
	Add(tb, Tool{Name: "sandbox_memory_snapshot", Need: rights.Of(rights.Snapshots), Title: "Snapshot a sandbox with its memory", Additive: true,
		Description: "gVisor sandboxes only. Save a sandbox's files and its running processes with their memory as a named " +
			"snapshot (the sandbox keeps running). sandbox_create with this `snapshot` starts a sandbox whose processes " +
			"continue from that instant."},
		func(c *Call, in fsSnapshotIn) (memSnapshotOut, error) {
			if in.Name == "" {
				return memSnapshotOut{}, newToolError(errs.CodeInvalid, "Give `name`: what to call the snapshot (letters, digits, '.', '_', '-').")
			}
			mb, err := memoryOf(c)
			if err != nil {
				return memSnapshotOut{}, err
			}
			var s wire.Snapshot
			_, err = c.On(in.Sandbox, func(id string) (err error) {
				s, err = mb.CreateSnapshotWith(c.Context(), id, in.Name, true)
				return err
			})
			return memSnapshotOut{fsSnapshotOut: snapOut(s), MemoryBytes: s.MemoryBytes}, err
		})
	Add(tb, Tool{Name: "sandbox_fork_memory", Need: rights.Of(rights.Write, rights.Snapshots), Title: "Fork a sandbox with its memory", Additive: true,
		Description: "gVisor sandboxes only. Make `count` new sandboxes whose running processes (an interpreter with its " +
			"state, a server) each continue from one checkpoint of the sandbox, independently. The source keeps running."},
		func(c *Call, in forkIn) (forkOut, error) {
			mb, err := memoryOf(c)
			if err != nil {
				return forkOut{}, err
			}
			var forks []wire.Sandbox
			_, err = c.On(in.Sandbox, func(id string) (err error) {
				forks, err = mb.ForkWith(c.Context(), id, in.Count, true)
				return err
			})
			out := forkOut{Sandboxes: []sandboxInfo{}}
			for _, f := range forks {
				out.Sandboxes = append(out.Sandboxes, infoOf(f, ""))
			}
			return out, err
		})
}
