package mcp

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// volumeBackend is what the volume tools need of a Backend (both the
// client and the manager's Caller have it).
type volumeBackend interface {
	CreateVolume(ctx context.Context, name string, sizeMB int64) (wire.Volume, error)
	Volumes(ctx context.Context) ([]wire.Volume, error)
	DeleteVolume(ctx context.Context, name string) error
}

func volumes(c *Call) (volumeBackend, error) {
	if vb, ok := c.Backend().(volumeBackend); ok {
		return vb, nil
	}
	return nil, newToolError(errs.CodeUnsupported, "This server's MCP backend has no volumes.")
}

type volumeCreateIn struct {
	Name   string `json:"name" jsonschema:"Name of the new volume: letters, digits, '.', '_' and '-' (at most 63)."`
	SizeMB int64  `json:"size_mb,omitempty" jsonschema:"Its size in MiB, 16 or more (default 1024). Writing past it fails with 'No space left on device'."`
}

type volumeNameIn struct {
	Name string `json:"name" jsonschema:"Name of the volume (volume_list shows them)."`
}

type volumeListOut struct {
	Volumes []wire.Volume `json:"volumes"`
}

// volumeTools are the volume tools (docs/state.md, "Volumes").
func volumeTools(tb *Toolbox) {
	Add(tb, Tool{Name: "volume_create", Need: rights.Of(rights.Volumes), Title: "Create a volume", Additive: true,
		Description: "Create a named volume: storage that outlives every sandbox. Mount it with sandbox_create's `volumes` " +
			"([{name, path, read_only}]); one sandbox may mount it read-write at a time, any number read-only."},
		func(c *Call, in volumeCreateIn) (wire.Volume, error) {
			if in.Name == "" {
				return wire.Volume{}, newToolError(errs.CodeInvalid, "Give `name`: what to call the volume.")
			}
			vb, err := volumes(c)
			if err != nil {
				return wire.Volume{}, err
			}
			return vb.CreateVolume(c.Context(), in.Name, in.SizeMB)
		})
	Add(tb, Tool{Name: "volume_list", Need: rights.Of(rights.Read), Title: "List volumes", ReadOnly: true,
		Description: "List the volumes: name, size, bytes used, the sandboxes mounting each."},
		func(c *Call, _ listIn) (volumeListOut, error) {
			vb, err := volumes(c)
			if err != nil {
				return volumeListOut{}, err
			}
			list, err := vb.Volumes(c.Context())
			if list == nil {
				list = []wire.Volume{}
			}
			return volumeListOut{Volumes: list}, err
		})
	Add(tb, Tool{Name: "volume_delete", Need: rights.Of(rights.Volumes), Title: "Delete a volume", Idempotent: true,
		Description: "Delete a volume and everything in it. Refused while a sandbox mounts it: delete that sandbox first."},
		func(c *Call, in volumeNameIn) (deletedOut, error) {
			if in.Name == "" {
				return deletedOut{}, newToolError(errs.CodeInvalid, "Give `name`: the volume to delete (volume_list shows them).")
			}
			vb, err := volumes(c)
			if err != nil {
				return deletedOut{}, err
			}
			return deletedOut{Deleted: in.Name}, vb.DeleteVolume(c.Context(), in.Name)
		})
}
