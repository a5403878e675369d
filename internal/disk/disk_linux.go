//go:build linux

package disk

import (
	"errors"

	"github.com/paddockhq/paddock/internal/errs"
)

// Open tries OpenXFS. Where XFS project quotas are unavailable it returns
// a nil Store and the reason: the runtime then gives each sandbox a
// size-limited tmpfs mounted inside the sandbox's own mount namespace (see
// internal/runtime/native), whose pages count against the sandbox's memory
// cgroup. Invalid options are an error, not a reason to fall back.
func Open(o Options) (s Store, fallbackReason error, err error) {
	s, xerr := OpenXFS(o)
	if xerr == nil {
		return s, nil, nil
	}
	if errors.Is(xerr, errs.ErrInvalid) {
		return nil, nil, xerr
	}
	return nil, xerr, nil
}
