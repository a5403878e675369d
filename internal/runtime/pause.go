package runtime

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
)

// Pauser is an Instance that can be paused in place: every process of the
// sandbox stops (no CPU), memory and open connections stay as they are, and
// Resume lets it continue exactly where it was. It is optional — a backend
// whose instances lack it cannot pause (PauserOf says so). Both methods are
// idempotent. Paused reports the backend's own view, which after a restart
// is what Reattach found (a paused sandbox is reattached paused).
type Pauser interface {
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
	Paused() bool
}

// PauserOf returns inst as a Pauser, or an unsupported error naming the
// backend when it cannot pause.
func PauserOf(backend string, inst Instance) (Pauser, error) {
	if p, ok := inst.(Pauser); ok {
		return p, nil
	}
	return nil, errs.New(errs.CodeUnsupported, "the %s runtime cannot pause sandboxes", backend)
}
