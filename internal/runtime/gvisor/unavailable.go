package gvisor

import (
	"context"
	"encoding/json"

	"github.com/paddockhq/paddock/internal/runtime"
)

// Unavailable is the gVisor runtime of a server that cannot run gVisor
// (no runsc, or the wrong one): every create and restore is refused with
// why, as an unsupported error that names the install command (the error
// New or FindRunsc returned). It lets the server offer the runtime by name
// and answer requests for it clearly, rather than not knowing it.
type Unavailable struct{ Err error }

var _ runtime.Backend = Unavailable{}

// Name implements runtime.Backend.
func (u Unavailable) Name() string { return "gvisor" }

// Create implements runtime.Backend: refused.
func (u Unavailable) Create(context.Context, runtime.Config) (runtime.Instance, error) {
	return nil, u.Err
}

// Reattach implements runtime.Backend: a gVisor sandbox from an earlier
// server cannot be reattached without runsc (the caller cleans up).
func (u Unavailable) Reattach(context.Context, string, json.RawMessage) (runtime.Instance, error) {
	return nil, u.Err
}

// Destroy implements runtime.Backend (there is never an instance).
func (u Unavailable) Destroy(context.Context, runtime.Instance) error { return u.Err }

// Cleanup implements runtime.Backend: nothing this server can release.
func (u Unavailable) Cleanup(context.Context, string, json.RawMessage) error { return nil }

// Sweep implements runtime.Backend: nothing to sweep.
func (u Unavailable) Sweep(context.Context, map[string]bool) (int, error) { return 0, nil }

// Close implements runtime.Backend.
func (u Unavailable) Close() error { return nil }

// Refused is why this runtime cannot run sandboxes (the manager refuses a
// create with it before recording anything).
func (u Unavailable) Refused() error { return u.Err }
