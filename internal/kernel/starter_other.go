//go:build !linux

package kernel

import "github.com/paddockhq/paddock/internal/errs"

// ExecStarter is Linux-only; elsewhere it refuses with errs.ErrUnsupported.
type ExecStarter struct{}

// Start implements Starter.
func (ExecStarter) Start(ProcSpec) (Process, error) {
	return nil, errs.Wrap(errs.CodeUnsupported, errs.ErrUnsupported, "code contexts need Linux")
}
