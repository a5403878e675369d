package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock/internal/network"
)

// Two servers on one host (issue 14, shared-resource collision between
// servers): each server has an instance identity derived from its data
// directory (network.InstanceID). The network stack names its table,
// interfaces, pools and egress ports after it; the cgroup prefix, unless
// set, is "paddock-<id>" — so that neither server's start-up sweep, which
// removes the groups under its prefix that it does not know, ever reaches
// the other's sandboxes (the prefix is also locked while a server runs:
// cgroup.Host.Claim). Run directories and layers live in the data
// directory, which one server holds at a time (its lock).

// cgroupPrefixFile records the prefix a data directory's sandboxes use.
const cgroupPrefixFile = "cgroup-prefix"

// LegacyCgroupPrefix is the prefix of servers from before instance
// identities (and of a data directory whose sandboxes already use it).
const LegacyCgroupPrefix = "paddock"

// Instance is this server's identity (network.InstanceID of its data
// directory).
func (s *Server) Instance() string { return network.InstanceID(s.cfg.DataDir) }

// chooseCgroupPrefix settles the prefix when none is configured: the
// recorded one; else the legacy one if the store already holds sandboxes
// (an upgrade: their groups are under it); else one of the instance's
// own. The choice is recorded for the next start.
func (s *Server) chooseCgroupPrefix(ctx context.Context) (string, error) {
	if s.cfg.CgroupPrefix != "" {
		return s.cfg.CgroupPrefix, nil
	}
	path := filepath.Join(s.cfg.DataDir, cgroupPrefixFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if p := strings.TrimSpace(string(b)); p != "" {
			return p, nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("cgroup prefix: %w", err)
	}
	prefix := LegacyCgroupPrefix + "-" + s.Instance()
	var n int
	if err := s.Store.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM sandboxes`).Scan(&n); err != nil {
		return "", fmt.Errorf("cgroup prefix: %w", err)
	}
	if n > 0 {
		prefix = LegacyCgroupPrefix
	}
	if err := os.WriteFile(path, []byte(prefix+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("cgroup prefix: %w", err)
	}
	return prefix, nil
}
