//go:build linux

package testenv

import "golang.org/x/sys/unix"

func unmountDetach(p string) error { return unix.Unmount(p, unix.MNT_DETACH) }
