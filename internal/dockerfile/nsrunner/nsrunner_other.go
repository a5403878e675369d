//go:build !linux

package nsrunner

import (
	"context"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/errs"
)

// Runner needs Linux namespaces.
type Runner struct{}

// Run returns an unsupported error.
func (Runner) Run(context.Context, dockerfile.RunRequest) (dockerfile.RunResult, error) {
	return dockerfile.RunResult{}, errs.ErrUnsupported
}

// Main does nothing off Linux.
func Main() {}
