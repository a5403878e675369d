//go:build !linux

package disk

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

// MinImageSize is the smallest image mkfs.xfs agrees to make.
const MinImageSize = 300 << 20

// TmpfsDirName is where, under Options.Dir, Open puts the tmpfs fallback.
const TmpfsDirName = "tmpfs"

// OpenXFS needs Linux (XFS, loop devices, project quotas).
func OpenXFS(o Options) (Store, error) {
	return nil, fmt.Errorf("disk: xfs layer store: %w", errs.ErrUnsupported)
}

// OpenTmpfs needs Linux (tmpfs mounts).
func OpenTmpfs(dir string) (Store, error) {
	return nil, fmt.Errorf("disk: tmpfs layer store: %w", errs.ErrUnsupported)
}

// Open needs Linux.
func Open(o Options) (s Store, fallbackReason error, err error) {
	return nil, nil, fmt.Errorf("disk: layer store: %w", errs.ErrUnsupported)
}
