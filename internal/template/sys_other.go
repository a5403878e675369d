//go:build !linux

package template

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/paddockhq/paddock/internal/errs"
)

const noFollowFlags = 0

func supported() error {
	return fmt.Errorf("templates need Linux: %w", errs.ErrUnsupported)
}

func openNoFollow(string) (*os.File, error)     { return nil, supported() }
func exchange(string, string) error             { return supported() }
func exchangeUnsupported(error) bool            { return false }
func lockFile(string) (*os.File, error)         { return nil, supported() }
func tryLockDir(string) (*os.File, bool, error) { return nil, false, supported() }
func builderProcAttr() *syscall.SysProcAttr     { return nil }
func killTree(p *os.Process) error              { return p.Kill() }
func fileOwner(fs.FileInfo) (int, int, bool)    { return 0, 0, false }
func removeTree(string) error                   { return supported() }
