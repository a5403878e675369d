//go:build !linux

package server

import (
	"context"
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Backend is the sandboxes' runtime; there is none off Linux.
type Backend struct{ runtime.Backend }

// supported refuses to open anything: sandboxes need Linux.
func supported() error {
	return fmt.Errorf("paddock's server runs sandboxes with Linux namespaces: %w", errs.ErrUnsupported)
}

func (s *Server) openRuntime(context.Context) error {
	return fmt.Errorf("paddock's sandboxes need Linux: %w", errs.ErrUnsupported)
}

func lockDataDir(string) (func() error, error) {
	return nil, fmt.Errorf("paddock's server needs Linux: %w", errs.ErrUnsupported)
}

func raiseNoFile() {}

func (s *Server) runtimes() map[string]runtime.Backend { return nil }
