//go:build !linux

package harden

import (
	"fmt"
	"runtime"

	"golang.org/x/net/bpf"

	"github.com/paddockhq/paddock/internal/errs"
)

func unsupported(what string) error {
	return fmt.Errorf("%s on %s: %w", what, runtime.GOOS, errs.ErrUnsupported)
}

// SetNoNewPrivs is Linux-only.
func SetNoNewPrivs() error { return unsupported("no_new_privs") }

// LimitCaps is Linux-only.
func LimitCaps(keep []Cap) error { return unsupported("capability limits") }

// PrepareExecThread is Linux-only.
func PrepareExecThread() error { return unsupported("capability limits") }

// RestrictFS is Linux-only.
func RestrictFS(r FSRules) error { return unsupported("landlock") }

// LoadSeccomp is Linux-only.
func LoadSeccomp() error { return unsupported("seccomp") }

// Program is Linux-only.
func Program() ([]bpf.RawInstruction, error) { return nil, unsupported("seccomp filter") }

// DeniedSyscalls returns nil: there is no filter off Linux.
func DeniedSyscalls() []string { return nil }

// CloseOnExecAll is Linux-only.
func CloseOnExecAll() error { return unsupported("close-on-exec sweep") }
