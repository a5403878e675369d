//go:build !linux

package server

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

// Backend is the sandboxes' runtime; there is none off Linux.
type Backend struct{}

func (s *Server) openRuntime() error {
	return fmt.Errorf("paddock's sandboxes need Linux: %w", errs.ErrUnsupported)
}

func lockDataDir(string) (func() error, error) {
	return nil, fmt.Errorf("paddock's server needs Linux: %w", errs.ErrUnsupported)
}

func raiseNoFile() {}
