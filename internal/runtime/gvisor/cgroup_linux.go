//go:build linux

package gvisor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/cgroup"
)

// runsc is given the sandbox's cgroup by path (the spec's cgroupsPath):
// it joins its sentry and gofer to the groups Paddock made (and leaves
// their limits alone: it only writes limits to groups it creates), and
// derives the sentry's CPU count and total memory from them. In
// hierarchies Paddock does not use (cpuset, devices, blkio, ... on cgroup
// v1) runsc creates the group itself and removes it at `runsc delete`; a
// sandbox that died without one would leave those behind, so release and
// Sweep remove them too (removeRunscCgroups).

// runscCgroupsPath is sandbox id's group relative to each hierarchy's
// root: Prefix/id on v1; on v2 the group's leaf for processes ("agent":
// the sandbox group itself delegates controllers to its children, so by
// v2's no-internal-process rule it cannot hold any).
func runscCgroupsPath(h *cgroup.Host, id string) string {
	rel := "/" + h.Prefix() + "/" + id
	if h.Version() == cgroup.V2 {
		rel += "/agent"
	}
	return rel
}

// v1Mount is a cgroup v1 hierarchy.
type v1Mount struct {
	Dir         string
	Ours        bool // it has a controller Paddock manages
	Controllers []string
}

// paddockControllers are those internal/cgroup uses on v1.
var paddockControllers = map[string]bool{"memory": true, "pids": true, "cpu": true, "cpuacct": true, "freezer": true}

// v1Mounts lists the cgroup v1 hierarchies.
func v1Mounts() ([]v1Mount, error) {
	raw, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return parseV1Mounts(string(raw)), nil
}

func parseV1Mounts(mountinfo string) []v1Mount {
	var out []v1Mount
	for _, line := range strings.Split(mountinfo, "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, pf := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(pf) < 3 || pf[0] != "cgroup" {
			continue
		}
		m := v1Mount{Dir: unescapeMount(f[4])}
		for _, o := range strings.Split(pf[2], ",") {
			if paddockControllers[o] {
				m.Ours = true
			}
			if o != "rw" && o != "ro" && !strings.Contains(o, "=") {
				m.Controllers = append(m.Controllers, o)
			}
		}
		out = append(out, m)
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space...).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, ok := octal3(s[i+1 : i+4]); ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octal3(s string) (byte, bool) {
	v := 0
	for _, c := range s {
		if c < '0' || c > '7' {
			return 0, false
		}
		v = v*8 + int(c-'0')
	}
	if v > 255 {
		return 0, false
	}
	return byte(v), true
}

// removeRunscCgroups removes the (empty) groups of sandbox id that runsc
// made in the v1 hierarchies Paddock does not use, and the prefix group
// there once empty. Groups still holding a process stay (rmdir: EBUSY).
func removeRunscCgroups(h *cgroup.Host, id string) error {
	if h.Version() == cgroup.V2 {
		return nil // one hierarchy, Paddock's own group: Destroy removed it
	}
	mps, err := v1Mounts()
	if err != nil {
		return err
	}
	var errList []error
	for _, mp := range mps {
		if mp.Ours {
			continue // internal/cgroup's Destroy handles these
		}
		prefix := filepath.Join(mp.Dir, h.Prefix())
		if err := rmdirTree(filepath.Join(prefix, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errList = append(errList, err)
		}
		_ = os.Remove(prefix) // fails while other sandboxes have groups there
	}
	return errors.Join(errList...)
}

// runscCgroupIDs lists sandbox ids that have a group in a hierarchy
// Paddock does not use (runsc made it), for Sweep.
func runscCgroupIDs(h *cgroup.Host) []string {
	if h.Version() == cgroup.V2 {
		return nil
	}
	mps, err := v1Mounts()
	if err != nil {
		return nil
	}
	var ids []string
	for _, mp := range mps {
		if mp.Ours {
			continue
		}
		ents, _ := os.ReadDir(filepath.Join(mp.Dir, h.Prefix()))
		for _, e := range ents {
			if e.IsDir() {
				ids = append(ids, e.Name())
			}
		}
	}
	return ids
}

// rmdirTree removes an empty cgroup directory and its empty children
// (cgroupfs directories are removed with rmdir; their files go with them).
func rmdirTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := rmdirTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return os.Remove(dir)
}

// oomKills reads the OOM kills of sandbox id's own group. The sentry and
// gofer live there, not in the workloads' child group that
// cgroup.Group.Stats reads: inside gVisor every process is the sentry's,
// so an OOM kill on the host is the sandbox's end.
func oomKills(h *cgroup.Host, id string) int64 {
	if h.Version() == cgroup.V2 {
		return -1 // the unified group's memory.events counts its subtree: Stats has it
	}
	mps, err := v1Mounts()
	if err != nil {
		return -1
	}
	for _, mp := range mps {
		if !slices.Contains(mp.Controllers, "memory") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(mp.Dir, h.Prefix(), id, "memory.oom_control"))
		if err != nil {
			return -1
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err == nil {
					return n
				}
			}
		}
	}
	return -1
}
