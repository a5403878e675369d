//go:build !linux

package layers

import (
	"context"
	"io"

	"github.com/paddockhq/paddock/internal/errs"
)

// Extract needs Linux (openat2, overlayfs).
func Extract(ctx context.Context, r io.Reader, dir string, lim Limits) (Stats, error) {
	return Stats{}, errs.ErrUnsupported
}

// TarOptions configure WriteTar.
type TarOptions struct{ IDBase, IDRange int }

// WriteTar needs Linux.
func WriteTar(w io.Writer, dir string, o TarOptions) error { return errs.ErrUnsupported }
