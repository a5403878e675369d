//go:build !linux

package native

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

// Options configure the native backend.
type Options struct{}

// New reports that native sandboxes need Linux.
func New(Options) (any, error) {
	return nil, fmt.Errorf("native backend: %w", errs.ErrUnsupported)
}
