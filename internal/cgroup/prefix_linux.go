//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Prefix is the group under which sandbox groups live in every hierarchy
// ("paddock" unless configured). Backends that hand a group to another
// program (runsc) name it by Prefix()/id relative to the hierarchy root.
func (h *Host) Prefix() string { return h.prefix }

// Claim makes the prefix group and holds a lock on it (flock of its
// directory, in the first hierarchy) until release: a second server
// started with the same prefix is refused. Two servers sharing one would
// each sweep the other's sandboxes as leftovers at start (shared-resource
// collision between servers, issue 14).
func (h *Host) Claim() (release func() error, err error) {
	if err := h.prepare(); err != nil {
		return nil, err
	}
	dirs := h.prefixDirs()
	if len(dirs) == 0 {
		return nil, errors.New("cgroup: no hierarchy to claim")
	}
	f, err := os.Open(dirs[0])
	if err != nil {
		return nil, fmt.Errorf("cgroup: claim the prefix: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another paddock server uses the cgroup prefix %q (%s): give each server its own (--cgroup-prefix, or leave it unset: it then derives from the data directory)", h.prefix, dirs[0])
		}
		return nil, fmt.Errorf("cgroup: claim the prefix: %w", err)
	}
	return f.Close, nil
}
