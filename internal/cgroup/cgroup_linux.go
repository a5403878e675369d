//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

// Host is the cgroup layout of this machine, as detected.
type Host struct {
	l      layout
	prefix string

	mu    sync.Mutex
	ready bool // prefix groups exist (and, on v2, delegate controllers)
}

// Detect inspects /proc/self/mountinfo (root is normally "/sys/fs/cgroup")
// and returns the layout: v2 if the unified hierarchy has the memory, pids and
// cpu controllers available, else v1 if those hierarchies are mounted. It
// errors (wrapping ErrUnavailable) when neither is usable. Empty root and
// prefix mean DefaultRoot and DefaultPrefix; prefix may have several
// components ("a/b"), each a valid group name.
func Detect(root, prefix string) (*Host, error) {
	if root == "" {
		root = DefaultRoot
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if !validPrefix(prefix) {
		return nil, errs.Invalid("invalid cgroup prefix %q", prefix)
	}
	mi, err := readFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("cgroup: detect: %w: %w", errs.ErrUnavailable, err)
	}
	mounts, err := parseMountinfo(mi)
	if err != nil {
		return nil, fmt.Errorf("cgroup: detect: %w: %w", errs.ErrUnavailable, err)
	}
	l, err := chooseLayout(mounts, root, func(mp string) ([]string, error) {
		b, err := readFile(filepath.Join(mp, "cgroup.controllers"))
		if err != nil {
			return nil, err
		}
		return strings.Fields(string(b)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("cgroup: detect: %w: %w", errs.ErrUnavailable, err)
	}
	return &Host{l: l, prefix: prefix}, nil
}

func validPrefix(p string) bool {
	for c := range strings.SplitSeq(p, "/") {
		if !validName(c) {
			return false
		}
	}
	return true
}

// Version reports 1 or 2.
func (h *Host) Version() Version { return h.l.version }

// hierarchies returns the mount points the host uses, each once (cpu and
// cpuacct may be one hierarchy), in the order groups are joined.
func (h *Host) hierarchies() []string {
	if h.l.version == V2 {
		return []string{h.l.unified}
	}
	var out []string
	for _, mp := range []string{h.l.memory, h.l.cpu, h.l.cpuacct, h.l.freezer, h.l.pids} {
		if mp != "" && !slices.Contains(out, mp) {
			out = append(out, mp)
		}
	}
	return out
}

// prepare creates the prefix groups once. On v2 it also enables the memory,
// pids and cpu controllers in every group from the mount root down to the
// prefix, so that sandbox groups (children of the prefix) get them; the
// sandbox groups' own subtree_control stays empty, so the guest's
// sub-groups have no controllers and processes may live at every level.
func (h *Host) prepare() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ready {
		return nil
	}
	for _, mp := range h.hierarchies() {
		dir := mp
		if h.l.version == V2 {
			if err := enableControllers(dir); err != nil {
				return err
			}
		}
		for c := range strings.SplitSeq(h.prefix, "/") {
			dir = filepath.Join(dir, c)
			if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("cgroup: create prefix: %w", err)
			}
			if h.l.version == V2 {
				if err := enableControllers(dir); err != nil {
					return err
				}
			}
		}
	}
	h.ready = true
	return nil
}

// enableControllers adds the missing v2Required controllers to dir's
// cgroup.subtree_control.
func enableControllers(dir string) error {
	p := filepath.Join(dir, "cgroup.subtree_control")
	b, err := readFile(p)
	if err != nil {
		return fmt.Errorf("cgroup: enable controllers: %w", err)
	}
	have := strings.Fields(string(b))
	var add []string
	for _, c := range v2Required {
		if !slices.Contains(have, c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	if err := writeFile(p, strings.Join(add, " ")); err != nil {
		if errors.Is(err, unix.EBUSY) {
			// The "no internal processes" rule: a v2 group that holds
			// processes cannot hand controllers to its children.
			return fmt.Errorf("cgroup: enable %s in %s: the group holds processes: %w", strings.Join(add, " "), dir, err)
		}
		return fmt.Errorf("cgroup: enable %s in %s: %w", strings.Join(add, " "), dir, err)
	}
	return nil
}

// Group is one sandbox's control group(s).
//
// Inside it, the sandbox's workloads live in a child group "w" that carries
// the sandbox's limits; the group itself (v1) or its "agent" leaf (v2)
// holds the guest agent, with a little headroom above the workloads'
// limits. A fork bomb or a memory hog then hits "w" first: the OOM killer
// chooses among workloads only, and the agent can still create threads
// (the Go runtime aborts when it cannot).
type Group struct {
	h  *Host
	id string
	// v1: the group's directory in each hierarchy ("" when not mounted;
	// cpu == cpuacct when co-mounted). v2: unified only.
	memory, pids, cpu, cpuacct, freezer string
	unified                             string
}

// Headroom the agent gets above its workloads' limits.
const (
	AgentMemoryHeadroom = 64 << 20
	AgentPidsHeadroom   = 128
	workloadGroup       = "w"
	agentGroup          = "agent" // v2 only: the no-internal-processes rule
)

// workloadDirs returns the "w" groups: v1 memory and pids, or v2 unified.
func (g *Group) workloadDirs() []string {
	if g.unified != "" {
		return []string{filepath.Join(g.unified, workloadGroup)}
	}
	var out []string
	for _, d := range []string{g.memory, g.pids} {
		if d != "" {
			out = append(out, filepath.Join(d, workloadGroup))
		}
	}
	return out
}

// withHeadroom is the agent-level limit for workload limit l.
func withHeadroom(l Limits) Limits {
	if l.MemoryBytes > 0 {
		l.MemoryBytes += AgentMemoryHeadroom
	}
	if l.Pids > 0 {
		l.Pids += AgentPidsHeadroom
	}
	return l
}

func (h *Host) group(id string) *Group {
	g := &Group{h: h, id: id}
	at := func(mp string) string {
		if mp == "" {
			return ""
		}
		return filepath.Join(mp, h.prefix, id)
	}
	if h.l.version == V2 {
		g.unified = at(h.l.unified)
		return g
	}
	g.memory, g.pids, g.cpu, g.cpuacct, g.freezer = at(h.l.memory), at(h.l.pids), at(h.l.cpu), at(h.l.cpuacct), at(h.l.freezer)
	return g
}

// dirs returns the group's directories, each once, in join order (pids
// last, so a process is only counted against the sandbox's pids once it
// is in every other hierarchy).
func (g *Group) dirs() []string {
	if g.unified != "" {
		return []string{g.unified}
	}
	var out []string
	for _, d := range []string{g.memory, g.cpu, g.cpuacct, g.freezer, g.pids} {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// Create makes the group for sandbox id with limits l, delegated to
// uid/gid (see the package doc). It fails if the group already exists
// (wrapping errs.ErrConflict); on any failure nothing is left behind.
func (h *Host) Create(id string, l Limits, uid, gid int) (*Group, error) {
	if !validName(id) {
		return nil, errs.Invalid("invalid sandbox id %q for a cgroup", id)
	}
	if err := l.validate(); err != nil {
		return nil, err
	}
	if uid < 0 || gid < 0 {
		return nil, errs.Invalid("invalid delegate uid/gid %d/%d", uid, gid)
	}
	g, err := h.mkGroup(id)
	if err != nil {
		return nil, err
	}
	if err := g.SetLimits(l); err != nil {
		return nil, errors.Join(err, g.rollback())
	}
	if err := g.delegate(uid, gid); err != nil {
		return nil, errors.Join(err, g.rollback())
	}
	return g, nil
}

// mkGroup creates the group's directories; on failure it removes those it
// made.
func (h *Host) mkGroup(id string) (*Group, error) {
	if err := h.prepare(); err != nil {
		return nil, err
	}
	g := h.group(id)
	var made []string
	for _, d := range g.dirs() {
		if err := unix.Mkdir(d, 0o755); err != nil {
			for _, m := range made {
				_ = unix.Rmdir(m)
			}
			if errors.Is(err, unix.EEXIST) {
				return nil, errs.Wrap(errs.CodeConflict, fmt.Errorf("mkdir %s: %w", d, err), "cgroup of sandbox %s already exists", id)
			}
			return nil, fmt.Errorf("cgroup: create %s: %w", d, err)
		}
		made = append(made, d)
	}
	if g.unified != "" {
		// The sandbox group hands memory and pids to "w", so (v2 rule) it
		// holds no process itself: the agent lives in a leaf.
		if err := enableControllersOnly(g.unified, []string{"memory", "pids"}); err != nil {
			_ = g.rollback()
			return nil, err
		}
	}

	sub := g.workloadDirs()
	if g.unified != "" {
		sub = append(sub, filepath.Join(g.unified, agentGroup))
	}
	for _, d := range sub {
		if err := unix.Mkdir(d, 0o755); err != nil {
			_ = g.rollback()
			return nil, fmt.Errorf("cgroup: create %s: %w", d, err)
		}
	}
	return g, nil
}

// enableControllersOnly adds those of ctrls that dir offers to its
// cgroup.subtree_control.
func enableControllersOnly(dir string, ctrls []string) error {
	b, err := readFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroup: read controllers of %s: %w", dir, err)
	}
	have := strings.Fields(string(b))
	var add []string
	for _, c := range ctrls {
		if slices.Contains(have, c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(add, " ")); err != nil {
		return fmt.Errorf("cgroup: enable %s in %s: %w", strings.Join(add, " "), dir, err)
	}
	return nil
}

// rollback removes a group that Create just made (it holds no processes).
func (g *Group) rollback() error {
	var errList []error
	sub := g.workloadDirs()
	if g.unified != "" {
		sub = append(sub, filepath.Join(g.unified, agentGroup))
	}
	for _, d := range sub {
		_ = unix.Rmdir(d)
	}
	for _, d := range g.dirs() {
		if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			errList = append(errList, fmt.Errorf("cgroup: rollback %s: %w", d, err))
		}
	}
	return errors.Join(errList...)
}

// delegate chowns exactly what the guest must write. Everything else stays
// owned by host root: the limit files, so the sandbox cannot raise its own
// limits, and on v1 the hierarchy's release_agent, whose write is the
// CVE-2022-0492 escape (the guest's fds reach it through "..").
func (g *Group) delegate(uid, gid int) error {
	var paths []string
	if g.unified != "" {
		// cgroup-v2.rst "Delegation Containment": the workload group's
		// directory plus these three files, and nothing else; and the
		// sandbox group's cgroup.procs, because moving a process from the
		// agent leaf into "w" needs write access at the common ancestor.
		w := filepath.Join(g.unified, workloadGroup)
		paths = []string{w, filepath.Join(w, "cgroup.procs"), filepath.Join(w, "cgroup.threads"),
			filepath.Join(w, "cgroup.subtree_control"), filepath.Join(g.unified, "cgroup.procs")}
	} else {
		// v1: the pids "w" group, where exec sub-groups are made; and the
		// memory "w" group's task list, which the spawner thread joins.
		if g.pids != "" {
			w := filepath.Join(g.pids, workloadGroup)
			paths = append(paths, w, filepath.Join(w, "tasks"), filepath.Join(w, "cgroup.procs"))
		}
		if g.memory != "" {
			paths = append(paths, filepath.Join(g.memory, workloadGroup, "tasks"))
		}
	}
	for _, p := range paths {
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("cgroup: delegate: %w", err)
		}
	}
	return nil
}

// Open returns the existing group of sandbox id (after a server restart).
// It wraps errs.ErrNotFound when the group exists in no hierarchy.
func (h *Host) Open(id string) (*Group, error) {
	if !validName(id) {
		return nil, errs.Invalid("invalid sandbox id %q for a cgroup", id)
	}
	g := h.group(id)
	for _, d := range g.dirs() {
		if _, err := os.Stat(d); err == nil {
			return g, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cgroup: open %s: %w", d, err)
		}
	}
	return nil, errs.NotFound("cgroup of sandbox %s not found", id)
}

// List returns the ids of every sandbox group under the prefix, so that the
// caller can destroy those it has no record of. A group that exists in only
// some hierarchies (a crash half-way through Create or Destroy) is listed.
func (h *Host) List() ([]string, error) {
	var ids []string
	for _, mp := range h.hierarchies() {
		ents, err := os.ReadDir(filepath.Join(mp, h.prefix))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cgroup: list: %w", err)
		}
		for _, e := range ents {
			if e.IsDir() && validName(e.Name()) && !slices.Contains(ids, e.Name()) {
				ids = append(ids, e.Name())
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// AddProc moves the whole process pid (all its threads) into the group.
func (g *Group) AddProc(pid int) error {
	if pid <= 0 {
		return errs.Invalid("invalid pid %d", pid)
	}
	dirs := g.dirs()
	if g.unified != "" {
		dirs = []string{filepath.Join(g.unified, agentGroup)}
	}
	for _, d := range dirs {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("cgroup: add %d to %s: %w", pid, d, err)
		}
	}
	return nil
}

// AddWorkloadProc moves the whole process pid into the workload group
// ("w"), where the sandbox's limits apply, and into the group elsewhere.
// The guest's spawner joins "w" itself; this is for the host's own use.
func (g *Group) AddWorkloadProc(pid int) error {
	if pid <= 0 {
		return errs.Invalid("invalid pid %d", pid)
	}
	dirs := g.dirs()
	if g.unified != "" {
		dirs = nil
	}
	w := g.workloadDirs()
	for i, d := range dirs {
		for _, wd := range w {
			if filepath.Dir(wd) == d {
				dirs[i] = wd
			}
		}
	}
	if g.unified != "" {
		dirs = w
	}
	for _, d := range dirs {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("cgroup: add %d to %s: %w", pid, d, err)
		}
	}
	return nil
}

// Procs lists the pids in the group and all its sub-groups, in every
// hierarchy, sorted and without duplicates.
func (g *Group) Procs() ([]int, error) {
	p, err := g.procs()
	if err != nil {
		return nil, fmt.Errorf("cgroup: procs of %s: %w", g.id, err)
	}
	return p, nil
}

func (g *Group) procs() ([]int, error) {
	var all []int
	for _, d := range g.dirs() {
		p, err := treeProcs(d)
		if err != nil {
			return nil, err
		}
		all = append(all, p...)
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// Destroy kills every process in the group and its sub-groups (v2:
// cgroup.kill; v1: freeze when the freezer is available, SIGKILL every task,
// thaw, repeat until empty), then removes the sub-groups and the group. It is
// idempotent: a group that is already gone is not an error.
func (g *Group) Destroy() error {
	if err := g.killAll(); err != nil {
		return fmt.Errorf("cgroup: destroy %s: %w", g.id, err)
	}
	var errList []error
	for _, d := range g.dirs() {
		if err := removeTree(d); err != nil {
			errList = append(errList, err)
		}
	}
	if err := errors.Join(errList...); err != nil {
		return fmt.Errorf("cgroup: destroy %s: %w", g.id, err)
	}
	return nil
}

func (g *Group) killAll() error {
	// Fork bombs race every kill loop; with pids.max at 0 no task in the
	// subtree can fork any more, so each round strictly shrinks the set.
	pidsDir := g.pids
	if g.unified != "" {
		pidsDir = g.unified
	}
	if err := writeFile(filepath.Join(pidsDir, "pids.max"), "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stop forks: %w", err)
	}
	if g.unified != "" {
		done, err := g.killV2()
		if done || err != nil {
			return err
		}
		// No cgroup.kill (Linux < 5.14): fall through to the kill loop.
	}
	var around func(func() error) error
	if g.freezer != "" {
		around = g.frozen
	}
	_, err := killLoop(g.procs, around)
	return err
}

// killV2 uses cgroup.kill, which SIGKILLs the whole subtree atomically
// with respect to forks. It reports false when the kernel lacks the file.
func (g *Group) killV2() (bool, error) {
	kill := filepath.Join(g.unified, "cgroup.kill")
	events := filepath.Join(g.unified, "cgroup.events")
	for i := range killRounds {
		if err := writeFile(kill, "1"); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				if _, serr := os.Stat(g.unified); errors.Is(serr, os.ErrNotExist) {
					return true, nil // the group is gone already
				}
				return false, nil
			}
			return true, fmt.Errorf("cgroup.kill: %w", err)
		}
		pop, err := readKey(events, "populated")
		if errors.Is(err, os.ErrNotExist) {
			return true, nil
		}
		if err != nil {
			return true, err
		}
		if pop == 0 {
			return true, nil
		}
		time.Sleep(pause(i))
	}
	return true, fmt.Errorf("still populated after %d cgroup.kill rounds", killRounds)
}

// frozen runs kill with the v1 freezer group frozen: a frozen task cannot
// fork, so the list that kill reads is complete, and the SIGKILLs take
// effect on thaw. Freezing is best effort (a task in uninterruptible sleep
// can hold the group in FREEZING); the group is always thawed again.
func (g *Group) frozen(kill func() error) error {
	state := filepath.Join(g.freezer, "freezer.state")
	if err := writeFile(state, "FROZEN"); err != nil {
		// No freezer directory (a partial group), or a freezer that
		// refuses: pids.max=0 already stops forks, so kill unfrozen
		// rather than leave the sandbox running.
		return kill()
	}
	for i := 0; i < 50; i++ {
		b, err := readFile(state)
		if err != nil || strings.TrimSpace(string(b)) == "FROZEN" {
			break
		}
		time.Sleep(pause(i))
	}
	kerr := kill()
	if err := writeFile(state, "THAWED"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.Join(kerr, fmt.Errorf("thaw: %w", err))
	}
	return kerr
}

// DelegatedPaths returns the host paths of the directories the guest opens
// before it pivots away from the host's root: "pids" (v1) or "unified" (v2)
// is where exec sub-groups are made; "memory" (v1) or "unified" (v2) is where
// OOM counters are read.
func (g *Group) DelegatedPaths() map[string]string {
	if g.unified != "" {
		return map[string]string{"unified": filepath.Join(g.unified, workloadGroup)}
	}
	out := map[string]string{}
	if g.pids != "" {
		out["pids"] = filepath.Join(g.pids, workloadGroup)
	}
	if g.memory != "" {
		out["memory"] = filepath.Join(g.memory, workloadGroup)
	}
	return out
}

// RemovePrefix removes the prefix group of every hierarchy, and any empty
// groups left below it, for a caller that is done with the prefix (a test
// stack). A group still holding processes stays, and is reported.
func (h *Host) RemovePrefix() error {
	var errsOut []error
	for _, d := range h.prefixDirs() {
		if err := removeTree(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errsOut = append(errsOut, err)
		}
	}
	return errors.Join(errsOut...)
}

// prefixDirs returns the prefix group in every hierarchy (tests remove them).
func (h *Host) prefixDirs() []string {
	var out []string
	for _, mp := range h.hierarchies() {
		out = append(out, filepath.Join(mp, h.prefix))
	}
	return out
}
