//go:build !linux

package server

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

// permFix is one mode the server changed (datadir_linux.go).
type permFix struct {
	Path string `json:"path"`
	From string `json:"from"`
	To   string `json:"to"`
}

// secureDataDir needs Linux, as the server does.
func secureDataDir(string) ([]permFix, error) {
	return nil, fmt.Errorf("paddock's server needs Linux: %w", errs.ErrUnsupported)
}
