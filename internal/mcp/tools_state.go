package mcp

import (
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

type fsSnapshotIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to snapshot; default: this session's sandbox."`
	Name    string `json:"name" jsonschema:"Name of the new snapshot: letters, digits, '.', '_' and '-' (at most 63)."`
}

type fsSnapshotOut struct {
	Name      string    `json:"name"`
	Template  string    `json:"template"`
	Source    string    `json:"source"`
	Bytes     int64     `json:"bytes"`
	Files     int       `json:"files"`
	CreatedAt time.Time `json:"created_at"`
}

func snapOut(s wire.Snapshot) fsSnapshotOut {
	return fsSnapshotOut{Name: s.Name, Template: s.Template, Source: s.Source, Bytes: s.Bytes, Files: s.Files, CreatedAt: s.CreatedAt}
}

type fsSnapshotListOut struct {
	Snapshots []fsSnapshotOut `json:"snapshots"`
}

type snapshotNameIn struct {
	Name string `json:"name" jsonschema:"Name of the snapshot (snapshot_list shows them)."`
}

type deletedOut struct {
	Deleted string `json:"deleted"`
}

type forkIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to fork; default: this session's sandbox."`
	Count   int    `json:"count,omitempty" jsonschema:"How many forks, 1 to 100 (default 1)."`
}

type forkOut struct {
	Sandboxes []sandboxInfo `json:"sandboxes"`
}

// stateTools are the snapshot and fork tools (docs/state.md).
func stateTools(tb *Toolbox) {
	Add(tb, Tool{Name: "sandbox_snapshot", Need: rights.Of(rights.Snapshots), Title: "Snapshot a sandbox's files", Additive: true,
		Description: "Save a sandbox's files (everything written since it was created from its template) as a named, immutable " +
			"snapshot that outlives the sandbox. Processes and memory are not saved. Start a new sandbox from it with " +
			"sandbox_create's `snapshot`."},
		func(c *Call, in fsSnapshotIn) (fsSnapshotOut, error) {
			if in.Name == "" {
				return fsSnapshotOut{}, newToolError(errs.CodeInvalid, "Give `name`: what to call the snapshot (letters, digits, '.', '_', '-').")
			}
			var s wire.Snapshot
			_, err := c.On(in.Sandbox, func(id string) (err error) {
				s, err = c.Backend().CreateSnapshot(c.Context(), id, in.Name)
				return err
			})
			return snapOut(s), err
		})
	Add(tb, Tool{Name: "snapshot_list", Need: rights.Of(rights.Read), Title: "List snapshots", ReadOnly: true,
		Description: "List the saved snapshots: name, template, the sandbox each was taken of, size."},
		func(c *Call, _ listIn) (fsSnapshotListOut, error) {
			list, err := c.Backend().Snapshots(c.Context())
			out := fsSnapshotListOut{Snapshots: []fsSnapshotOut{}}
			for _, s := range list {
				out.Snapshots = append(out.Snapshots, snapOut(s))
			}
			return out, err
		})
	Add(tb, Tool{Name: "snapshot_delete", Need: rights.Of(rights.Snapshots), Title: "Delete a snapshot", Idempotent: true,
		Description: "Delete a snapshot. Sandboxes created from it keep their files."},
		func(c *Call, in snapshotNameIn) (deletedOut, error) {
			if in.Name == "" {
				return deletedOut{}, newToolError(errs.CodeInvalid, "Give `name`: the snapshot to delete (snapshot_list shows them).")
			}
			return deletedOut{Deleted: in.Name}, c.Backend().DeleteSnapshot(c.Context(), in.Name)
		})
	Add(tb, Tool{Name: "sandbox_fork", Need: rights.Of(rights.Write, rights.Snapshots), Title: "Fork a sandbox", Additive: true,
		Description: "Make `count` new sandboxes that each start with a copy of a sandbox's files, spec, env and network " +
			"policy, to try different approaches in parallel. The forks are independent: writes in one are invisible " +
			"to the others and to the source, which keeps running. Delete them with sandbox_delete when done."},
		func(c *Call, in forkIn) (forkOut, error) {
			var forks []wire.Sandbox
			_, err := c.On(in.Sandbox, func(id string) (err error) {
				forks, err = c.Backend().Fork(c.Context(), id, in.Count)
				return err
			})
			out := forkOut{Sandboxes: []sandboxInfo{}}
			for _, f := range forks {
				out.Sandboxes = append(out.Sandboxes, infoOf(f, ""))
			}
			return out, err
		})
}
