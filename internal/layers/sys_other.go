//go:build !linux

package layers

import (
	"io"

	"github.com/paddockhq/paddock/internal/errs"
)

func tryLock(p string) (io.Closer, bool, error) { return nil, false, errs.ErrUnsupported }
