//go:build !linux

package gvisor

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

// Options configure the gVisor backend (Linux only).
type Options struct {
	DataDir string
	Runsc   string
}

// Backend is the gVisor runtime; there is none off Linux.
type Backend struct{}

// New reports that gVisor sandboxes need Linux.
func New(Options) (*Backend, error) {
	return nil, fmt.Errorf("gvisor backend: %w", errs.ErrUnsupported)
}
