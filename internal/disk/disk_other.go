//go:build !linux

package disk

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

// MinImageSize is the smallest image mkfs.xfs agrees to make.
const MinImageSize = 300 << 20

// OpenXFS needs Linux (XFS, loop devices, project quotas).
func OpenXFS(o Options) (Store, error) {
	return nil, fmt.Errorf("disk: xfs layer store: %w", errs.ErrUnsupported)
}

// Open needs Linux.
func Open(o Options) (s Store, fallbackReason error, err error) {
	return nil, nil, fmt.Errorf("disk: layer store: %w", errs.ErrUnsupported)
}
