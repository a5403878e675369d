//go:build linux

package kubetest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fixedPaths are written by kubelet, containerd or the CNI plugins
// whatever their configuration says. Teardown restores each to what it
// was before the cluster started.
var fixedPaths = []string{
	"/var/lib/kubelet",    // device-plugins/, pod-resources/
	"/var/log/containers", // kubelet's symlinks to container logs
	"/var/log/pods",
	"/var/lib/cni", // libcni's result cache
	"/run/containerd",
	"/var/lib/containerd",
	"/etc/containerd",
	"/opt/containerd",
	"/var/run/kubernetes",
	"/etc/kubernetes",
	"/etc/cni",
	"/opt/cni",
}

// record is what a cluster leaves in stateFile while it runs, so that its
// leftovers can be removed when the test process died without tearing
// down (by the janitor, or by the next Start).
type record struct {
	Owner      int                 `json:"owner"` // pid of the test process
	Dir        string              `json:"dir"`
	CgroupRoot string              `json:"cgroup_root"`
	Bridge     string              `json:"bridge"`
	Table      string              `json:"table"`
	Fixed      map[string][]string `json:"fixed"` // path → entries it had before; absent key: did not exist
}

const (
	stateDir  = "/run/paddock-kubetest"
	stateFile = stateDir + "/state.json"
	lockFile  = stateDir + "/lock"
)

func snapshotFixed() map[string][]string {
	out := map[string][]string{}
	for _, p := range fixedPaths {
		ents, err := os.ReadDir(p)
		if err != nil {
			if _, serr := os.Lstat(p); serr == nil {
				out[p] = []string{} // exists, not a directory
			}
			continue
		}
		names := []string{}
		for _, e := range ents {
			names = append(names, e.Name())
		}
		out[p] = names
	}
	return out
}

func (r *record) save() error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := stateFile + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, stateFile)
}

func loadRecord() (*record, error) {
	b, err := os.ReadFile(stateFile)
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", stateFile, err)
	}
	if !filepath.IsAbs(r.Dir) || !strings.HasPrefix(filepath.Base(r.Dir), "pkt-") || !strings.HasPrefix(r.CgroupRoot, "/paddock-kubetest-") || !strings.HasPrefix(r.Bridge, "pkt") {
		return nil, fmt.Errorf("%s does not describe a kubetest cluster", stateFile)
	}
	return &r, nil
}

// cleanup removes everything r describes, whatever state it is in:
// processes (by pid, found by their command line naming r.Dir or by their
// cgroup under r.CgroupRoot), mounts under r.Dir, cgroups, the pod
// network, the fixed paths' new entries and r.Dir. It returns what it
// could not remove.
func (r *record) cleanup() []string {
	var problems []string
	// kubelet first, so that it does not restart what is killed next.
	killMatching(func(p proc) bool { return p.mentions(r.Dir) && p.comm == "kubelet" }, 5*time.Second)
	killCgroupTree(r.CgroupRoot, 10*time.Second)
	killMatching(func(p proc) bool { return p.mentions(r.Dir) }, 5*time.Second)
	if left := processesOf(r); len(left) > 0 {
		problems = append(problems, "processes still alive: "+strings.Join(left, ", "))
	}
	if err := unmountUnder(r.Dir); err != nil {
		problems = append(problems, err.Error())
	}
	if err := removeCgroups(r.CgroupRoot); err != nil {
		problems = append(problems, err.Error())
	}
	n := &hostNet{Bridge: r.Bridge, Table: r.Table}
	if err := n.teardown(); err != nil {
		problems = append(problems, err.Error())
	}
	for _, p := range fixedPaths {
		before, existed := r.Fixed[p]
		if !existed {
			if err := os.RemoveAll(p); err != nil {
				problems = append(problems, err.Error())
			}
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !slices.Contains(before, e.Name()) {
				if err := os.RemoveAll(filepath.Join(p, e.Name())); err != nil {
					problems = append(problems, err.Error())
				}
			}
		}
	}
	if err := os.RemoveAll(r.Dir); err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// leftovers lists what of r is still there (empty after a clean teardown).
func (r *record) leftovers() []string {
	var out []string
	if p := processesOf(r); len(p) > 0 {
		out = append(out, "processes: "+strings.Join(p, ", "))
	}
	if m := mountsUnder(r.Dir); len(m) > 0 {
		out = append(out, "mounts: "+strings.Join(m, ", "))
	}
	for _, h := range cgroupHierarchies() {
		if _, err := os.Stat(filepath.Join(h, r.CgroupRoot)); err == nil {
			out = append(out, "cgroup "+filepath.Join(h, r.CgroupRoot))
		}
	}
	if _, err := os.Stat("/sys/class/net/" + r.Bridge); err == nil {
		out = append(out, "bridge "+r.Bridge)
	}
	if _, err := os.Stat(r.Dir); err == nil {
		out = append(out, "directory "+r.Dir)
	}
	now := snapshotFixed()
	for _, p := range fixedPaths {
		before, existed := r.Fixed[p]
		after, exists := now[p]
		switch {
		case !existed && exists:
			out = append(out, "created "+p)
		case existed:
			for _, e := range after {
				if !slices.Contains(before, e) {
					out = append(out, "created "+filepath.Join(p, e))
				}
			}
		}
	}
	return out
}

// proc is a process seen in /proc.
type proc struct {
	pid     int
	comm    string
	cmdline string
}

func (p proc) mentions(s string) bool { return strings.Contains(p.cmdline, s) }

func listProcs() []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(cl) == 0 {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		out = append(out, proc{pid: pid, comm: strings.TrimSpace(string(comm)), cmdline: strings.ReplaceAll(string(cl), "\x00", " ")})
	}
	return out
}

// killMatching SIGTERMs the matching processes, then SIGKILLs those left
// after grace. Each is re-read just before each signal, so a pid reused
// by an unrelated process is never hit.
func killMatching(match func(proc) bool, grace time.Duration) {
	signal := func(sig syscall.Signal) int {
		n := 0
		for _, p := range listProcs() {
			if match(p) {
				_ = syscall.Kill(p.pid, sig)
				n++
			}
		}
		return n
	}
	if signal(syscall.SIGTERM) == 0 {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if n := countMatching(match); n == 0 {
			return
		}
	}
	signal(syscall.SIGKILL)
	for i := 0; i < 100 && countMatching(match) > 0; i++ {
		time.Sleep(50 * time.Millisecond)
	}
}

func countMatching(match func(proc) bool) int {
	n := 0
	for _, p := range listProcs() {
		if match(p) && !zombie(p.pid) {
			n++
		}
	}
	return n
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

func cgroupHierarchies() []string {
	ents, _ := os.ReadDir("/sys/fs/cgroup")
	var out []string
	for _, e := range ents {
		p := filepath.Join("/sys/fs/cgroup", e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.procs"); err == nil {
		out = append(out, "/sys/fs/cgroup") // unified (v2) host
	}
	return out
}

// cgroupPids lists the processes in every cgroup under root.
func cgroupPids(root string) []int {
	seen := map[int]bool{}
	for _, h := range cgroupHierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, root), func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	out := make([]int, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// killCgroupTree SIGKILLs every process in the cgroups under root (the
// pods' containers) until none is left or timeout passes.
func killCgroupTree(root string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		pids := cgroupPids(root)
		live := 0
		for _, pid := range pids {
			if !zombie(pid) {
				live++
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if live == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func processesOf(r *record) []string {
	var out []string
	for _, p := range listProcs() {
		if p.mentions(r.Dir) && !zombie(p.pid) {
			out = append(out, fmt.Sprintf("%d (%s)", p.pid, p.comm))
		}
	}
	for _, pid := range cgroupPids(r.CgroupRoot) {
		if !zombie(pid) {
			out = append(out, fmt.Sprintf("%d (in %s)", pid, r.CgroupRoot))
		}
	}
	return out
}

// mountsUnder lists mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 {
			continue
		}
		mp := unescapeMount(fs[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unmountUnder(dir string) error {
	for i := 0; i < 10; i++ {
		ms := mountsUnder(dir)
		if len(ms) == 0 {
			return nil
		}
		for _, m := range ms {
			_ = unix.Unmount(m, unix.MNT_DETACH)
		}
	}
	if ms := mountsUnder(dir); len(ms) > 0 {
		return fmt.Errorf("still mounted: %s", strings.Join(ms, ", "))
	}
	return nil
}

// removeCgroups removes root and every cgroup below it in every
// hierarchy, deepest first.
func removeCgroups(root string) error {
	var problems []string
	for _, h := range cgroupHierarchies() {
		top := filepath.Join(h, root)
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			var err error
			for try := 0; try < 20; try++ {
				if err = unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) {
					err = nil
					break
				}
				time.Sleep(50 * time.Millisecond) // a just-killed task may linger
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("rmdir %s: %v", d, err))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
