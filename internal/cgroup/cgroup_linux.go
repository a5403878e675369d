//go:build linux

package cgroup

// Host is the cgroup layout of this machine, as detected.
type Host struct{}

// Detect inspects /proc/self/mountinfo (root is normally "/sys/fs/cgroup")
// and returns the layout: v2 if the unified hierarchy has the memory, pids and
// cpu controllers available, else v1 if those hierarchies are mounted. It
// errors (wrapping ErrUnavailable) when neither is usable.
func Detect(root, prefix string) (*Host, error) { panic("helper: implement") }

// Version reports 1 or 2.
func (h *Host) Version() Version { panic("helper") }

// Create makes the group for sandbox id with limits l, delegated to
// uid/gid (see the package doc). It fails if the group already exists.
func (h *Host) Create(id string, l Limits, uid, gid int) (*Group, error) { panic("helper") }

// Open returns the existing group of sandbox id (after a server restart).
func (h *Host) Open(id string) (*Group, error) { panic("helper") }

// List returns the ids of every sandbox group under the prefix, so that the
// caller can destroy those it has no record of.
func (h *Host) List() ([]string, error) { panic("helper") }

// Group is one sandbox's control group(s).
type Group struct{}

// AddProc moves the whole process pid (all its threads) into the group.
func (g *Group) AddProc(pid int) error { panic("helper") }

// SetLimits changes the limits of a live group.
func (g *Group) SetLimits(l Limits) error { panic("helper") }

// Stats reads the group's counters.
func (g *Group) Stats() (Stats, error) { panic("helper") }

// Procs lists the pids in the group and all its sub-groups.
func (g *Group) Procs() ([]int, error) { panic("helper") }

// Destroy kills every process in the group and its sub-groups (v2:
// cgroup.kill; v1: freeze when the freezer is available, SIGKILL every task,
// thaw, repeat until empty), then removes the sub-groups and the group. It is
// idempotent: a group that is already gone is not an error.
func (g *Group) Destroy() error { panic("helper") }

// DelegatedPaths returns the host paths of the directories the guest opens
// before it pivots away from the host's root: "pids" (v1) or "unified" (v2)
// is where exec sub-groups are made; "memory" (v1) or "unified" (v2) is where
// OOM counters are read.
func (g *Group) DelegatedPaths() map[string]string { panic("helper") }

// Delegated is the guest-side view of a delegated group: directory file
// descriptors opened before pivot_root, used after it.
type Delegated struct{}

// NewDelegated wraps directory fds. version is that of the host. pidsDir is
// the group in which exec sub-groups are made (v1 pids, v2 unified);
// memoryDir is where OOM counters are read (v1 memory, v2 unified). Either
// may be -1 when unavailable; the methods then degrade as documented.
func NewDelegated(version Version, pidsDir, memoryDir int) *Delegated { panic("helper") }

// Sub is one exec's sub-group.
type Sub struct{}

// NewSub creates sub-group name ("e<N>").
func (d *Delegated) NewSub(name string) (*Sub, error) { panic("helper") }

// Spawn runs start (which must fork exactly one child, e.g. exec.Cmd.Start)
// so that the child is born inside s: on v1 the calling goroutine is locked
// to its thread, that thread alone is moved into s (writing its tid to
// "tasks"), start runs, and the thread is moved back to the group's root; if
// moving back fails the thread is left locked so the runtime discards it. On
// v2 it returns the sub-group's directory fd through cgroupFD so the caller
// can use SysProcAttr.UseCgroupFD/CgroupFD (CLONE_INTO_CGROUP); start is then
// called with that fd.
func (s *Sub) Spawn(start func(cgroupFD int) error) error { panic("helper") }

// Procs lists the pids in s.
func (s *Sub) Procs() ([]int, error) { panic("helper") }

// Kill stops new forks in s (pids.max=0 on v1), SIGKILLs every process in it
// until it is empty (v2: cgroup.kill), and returns how many it killed.
func (s *Sub) Kill() (int, error) { panic("helper") }

// Remove deletes s if it is empty; it reports whether it did.
func (s *Sub) Remove() (bool, error) { panic("helper") }

// OOMKills reads the OOM-kill counter of the sandbox's memory group (-1 if
// unavailable). The guest compares it before and after an exec.
func (d *Delegated) OOMKills() int64 { panic("helper") }
