//go:build linux

package disk

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/errs"
)

// TmpfsDirName is where, under Options.Dir, Open puts the tmpfs fallback.
const TmpfsDirName = "tmpfs"

// Open tries OpenXFS and falls back to OpenTmpfs (reporting why through
// the returned reason, for the log). Invalid options are an error, not a
// reason to fall back.
func Open(o Options) (s Store, fallbackReason error, err error) {
	s, xerr := OpenXFS(o)
	if xerr == nil {
		return s, nil, nil
	}
	if errors.Is(xerr, errs.ErrInvalid) {
		return nil, nil, xerr
	}
	s, terr := OpenTmpfs(filepath.Join(o.Dir, TmpfsDirName))
	if terr != nil {
		return nil, nil, fmt.Errorf("disk: no store: %w", errors.Join(xerr, terr))
	}
	return s, xerr, nil
}
