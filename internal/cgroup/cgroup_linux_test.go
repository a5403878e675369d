//go:build linux

package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestDetect(t *testing.T) {
	h := testHost(t)
	// A controller is bound to one hierarchy: if memory is a v1 hierarchy,
	// v2 cannot have it, and v1 must be chosen (the case on our hybrid
	// machines, whose unified tree has no controllers).
	want := V2
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(mi), "\n") {
		if _, after, ok := strings.Cut(line, " - cgroup "); ok && slices.Contains(strings.Split(after, ","), "memory") {
			want = V1
		}
	}
	if h.Version() != want {
		t.Fatalf("Version() = %d, want %d", h.Version(), want)
	}
	t.Logf("cgroup v%d: %+v", h.Version(), h.l)
	magic := map[Version]int64{V1: unix.CGROUP_SUPER_MAGIC, V2: unix.CGROUP2_SUPER_MAGIC}[want]
	for _, mp := range h.hierarchies() {
		var st unix.Statfs_t
		if err := unix.Statfs(mp, &st); err != nil {
			t.Fatal(err)
		}
		if st.Type != magic {
			t.Errorf("%s: filesystem type %#x, want %#x", mp, st.Type, magic)
		}
	}
	if want == V1 {
		for name, p := range map[string]string{"memory": "memory.usage_in_bytes", "pids": "cgroup.procs", "cpu": "cpu.cfs_period_us"} {
			mp := map[string]string{"memory": h.l.memory, "pids": h.l.pids, "cpu": h.l.cpu}[name]
			if _, err := os.Stat(filepath.Join(mp, p)); err != nil {
				t.Errorf("%s hierarchy at %q: %v", name, mp, err)
			}
		}
	}

	if _, err := Detect(DefaultRoot, "../etc"); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("Detect with prefix ../etc = %v, want ErrInvalid", err)
	}
	if _, err := Detect("/nonexistent/cgroup", "x"); !errors.Is(err, errs.ErrUnavailable) {
		t.Errorf("Detect under a root with no cgroups = %v, want ErrUnavailable", err)
	}
}

// rawLimits reads the limit files as text, the way the kernel shows them.
func rawLimits(t *testing.T, g *Group) map[string]string {
	t.Helper()
	r := map[string]string{}
	if g.unified != "" {
		w := filepath.Join(g.unified, workloadGroup)
		for _, f := range []string{"memory.max", "memory.swap.max", "pids.max"} {
			if b, err := os.ReadFile(filepath.Join(w, f)); err == nil {
				r[f] = strings.TrimSpace(string(b))
			}
		}
		if b, err := os.ReadFile(filepath.Join(g.unified, "cpu.max")); err == nil {
			r["cpu.max"] = strings.TrimSpace(string(b))
		}
		return r
	}
	wmem, wpids := filepath.Join(g.memory, workloadGroup), filepath.Join(g.pids, workloadGroup)
	r["memory.limit_in_bytes"] = readString(t, filepath.Join(wmem, "memory.limit_in_bytes"))
	if b, err := os.ReadFile(filepath.Join(wmem, "memory.memsw.limit_in_bytes")); err == nil {
		r["memory.memsw.limit_in_bytes"] = strings.TrimSpace(string(b))
	}
	r["pids.max"] = readString(t, filepath.Join(wpids, "pids.max"))
	// The agent's level: the same limits plus its headroom.
	r["agent.memory.limit_in_bytes"] = readString(t, filepath.Join(g.memory, "memory.limit_in_bytes"))
	r["agent.pids.max"] = readString(t, filepath.Join(g.pids, "pids.max"))
	r["cpu.cfs_period_us"] = readString(t, filepath.Join(g.cpu, "cpu.cfs_period_us"))
	r["cpu.cfs_quota_us"] = readString(t, filepath.Join(g.cpu, "cpu.cfs_quota_us"))
	return r
}

func TestCreateAndSetLimits(t *testing.T) {
	h := testHost(t)
	l := Limits{CPU: 0.5, MemoryBytes: 64 << 20, Pids: 50}
	g, err := h.Create("limits", l, delegateID, delegateID)
	if err != nil {
		t.Fatal(err)
	}
	check := func(want Limits) {
		t.Helper()
		got, err := g.limits()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("limits (-want +got):\n%s\nraw: %v", d, rawLimits(t, g))
		}
		raw := rawLimits(t, g)
		if g.unified != "" {
			if s, ok := raw["memory.swap.max"]; ok && s != "0" {
				t.Errorf("memory.swap.max = %q, want 0", s)
			}
			return
		}
		if sw, ok := raw["memory.memsw.limit_in_bytes"]; ok && sw != raw["memory.limit_in_bytes"] {
			t.Errorf("memsw %s != limit %s: swap would extend the limit", sw, raw["memory.limit_in_bytes"])
		}
		if raw["cpu.cfs_period_us"] != "100000" {
			t.Errorf("cpu.cfs_period_us = %s", raw["cpu.cfs_period_us"])
		}
	}
	check(l)
	raw := rawLimits(t, g)
	if g.unified == "" && (raw["cpu.cfs_quota_us"] != "50000" || raw["pids.max"] != "50" || raw["memory.limit_in_bytes"] != "67108864" ||
		raw["agent.pids.max"] != strconv.Itoa(50+AgentPidsHeadroom) || raw["agent.memory.limit_in_bytes"] != strconv.Itoa(64<<20+AgentMemoryHeadroom)) {
		t.Errorf("raw limits %v", raw)
	}

	if _, err := h.Create("limits", l, delegateID, delegateID); !errors.Is(err, errs.ErrConflict) {
		t.Errorf("second Create = %v, want ErrConflict", err)
	}

	for _, nl := range []Limits{
		{CPU: 2, MemoryBytes: 256 << 20, Pids: 100},  // growing
		{CPU: 0.25, MemoryBytes: 32 << 20, Pids: 10}, // shrinking (memsw order reversed)
		{},                      // unlimited
		{MemoryBytes: 48 << 20}, // from unlimited down
	} {
		if err := g.SetLimits(nl); err != nil {
			t.Fatalf("SetLimits(%+v): %v", nl, err)
		}
		check(nl)
	}
	raw = rawLimits(t, g)
	if g.unified == "" && (raw["cpu.cfs_quota_us"] != "-1" || raw["pids.max"] != "max") {
		t.Errorf("unlimited raw limits %v", raw)
	}
	if err := g.SetLimits(Limits{Pids: -1}); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("SetLimits(negative) = %v, want ErrInvalid", err)
	}
}

func TestCreateRejects(t *testing.T) {
	h := testHost(t)
	for _, tt := range []struct {
		id string
		l  Limits
		u  int
	}{
		{"../x", Limits{}, 1},
		{"", Limits{}, 1},
		{"a/b", Limits{}, 1},
		{"cgroup.procs", Limits{}, 1},
		{"ok", Limits{MemoryBytes: -5}, 1},
		{"ok", Limits{}, -1},
	} {
		if _, err := h.Create(tt.id, tt.l, tt.u, tt.u); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("Create(%q, %+v, %d) = %v, want ErrInvalid", tt.id, tt.l, tt.u, err)
		}
	}
	if _, err := h.Open("../x"); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("Open(../x) = %v", err)
	}
	if ids, err := h.List(); err != nil || len(ids) != 0 {
		t.Errorf("List after rejected creates = %v, %v", ids, err)
	}
}

func TestDelegatedOwnership(t *testing.T) {
	h := testHost(t)
	g, err := h.Create("own", Limits{Pids: 10, MemoryBytes: 64 << 20}, delegateID, delegateID+1)
	if err != nil {
		t.Fatal(err)
	}
	var dir string
	var mine, roots []string
	if h.Version() == V2 {
		dir = filepath.Join(g.unified, workloadGroup)
		mine = []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"}
		roots = []string{"memory.max", "pids.max", "cgroup.kill", "cgroup.freeze", "cgroup.max.depth"}
	} else {
		dir = filepath.Join(g.pids, workloadGroup)
		mine = []string{"", "tasks", "cgroup.procs"}
		roots = []string{"pids.max", "notify_on_release"}
		for _, p := range []string{"", "memory.limit_in_bytes", "cgroup.procs"} {
			if u := fileOwner(t, filepath.Join(g.memory, p)); u != 0 {
				t.Errorf("memory group %q owned by %d, want root", p, u)
			}
		}
		// The agent level stays root's in every hierarchy.
		for _, p := range []string{"", "pids.max", "tasks", "cgroup.procs"} {
			if u := fileOwner(t, filepath.Join(g.pids, p)); u != 0 {
				t.Errorf("pids group %q owned by %d, want root", p, u)
			}
		}
		if u := fileOwner(t, filepath.Join(g.memory, workloadGroup, "tasks")); u != delegateID {
			t.Errorf("memory w/tasks owned by %d, want the delegate", u)
		}
		if u := fileOwner(t, filepath.Join(g.memory, workloadGroup, "memory.limit_in_bytes")); u != 0 {
			t.Errorf("memory w/memory.limit_in_bytes owned by %d, want root", u)
		}
		if u := fileOwner(t, filepath.Join(g.cpu, "cpu.cfs_quota_us")); u != 0 {
			t.Errorf("cpu.cfs_quota_us owned by %d", u)
		}
	}
	for _, p := range mine {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != delegateID || st.Gid != delegateID+1 {
			t.Errorf("%q owned by %d:%d, want %d:%d", p, st.Uid, st.Gid, delegateID, delegateID+1)
		}
	}
	for _, p := range roots {
		if _, err := os.Stat(filepath.Join(dir, p)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if u := fileOwner(t, filepath.Join(dir, p)); u != 0 {
			t.Errorf("limit file %q owned by %d, want root", p, u)
		}
	}
}

// TestDelegationPermissions runs as the delegate: it may make sub-groups
// (and set limits in them, which are nested under ours), but not change
// the sandbox's own limits, make memory groups or leave the group.
func TestDelegationPermissions(t *testing.T) {
	h := testHost(t)
	g, err := h.Create("deleg", Limits{Pids: 50, MemoryBytes: 64 << 20}, delegateID, delegateID)
	if err != nil {
		t.Fatal(err)
	}
	paths := g.DelegatedPaths()
	dirs := []string{paths["pids"], paths["memory"]}
	env := []string{"PROBE_PIDS_MAX=pids.max", "PROBE_MEM_MAX=memory.limit_in_bytes", "PROBE_SUB_LIMIT=pids.max", "PROBE_RELEASE_AGENT=1"}
	if h.Version() == V2 {
		dirs = []string{paths["unified"], paths["unified"]}
		env = []string{"PROBE_PIDS_MAX=pids.max", "PROBE_MEM_MAX=memory.max", "PROBE_SUB_LIMIT=cgroup.max.depth"}
	}
	// Positive control: the limit files are writable — by root.
	if err := writeFile(filepath.Join(dirs[0], "pids.max"), "49"); err != nil {
		t.Fatalf("root cannot write pids.max: %v", err)
	}
	var got map[string]string
	runAsDelegate(t, "probe", dirs, env, nil, &got)
	want := map[string]string{
		"mkdir-sub":            "ok",
		"write-sub-limit":      "ok",
		"write-group-pids.max": "EACCES",
		"write-group-memory":   "EACCES",
		"mkdir-memory":         "EACCES",
		"write-parent-procs":   "EACCES",
		"rmdir-sub":            "ok",
		"write-release-agent":  "EACCES",
	}
	if h.Version() == V2 {
		// One directory serves both; sub-groups are allowed there. No
		// release_agent exists in v2.
		delete(want, "write-release-agent")
		delete(want, "mkdir-memory")
		delete(got, "mkdir-memory")
		_ = unix.Rmdir(filepath.Join(dirs[1], "probe-mem"))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("delegate probe (-want +got):\n%s", d)
	}
	l, err := g.limits()
	if err != nil {
		t.Fatal(err)
	}
	if l.Pids != 49 || l.MemoryBytes != 64<<20 {
		t.Errorf("limits changed by the delegate: %+v", l)
	}
}

func TestProcsAndStats(t *testing.T) {
	h := testHost(t)
	g, err := h.Create("procs", Limits{Pids: 20}, delegateID, delegateID)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := g.AddWorkloadProc(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := g.AddWorkloadProc(0); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("AddProc(0) = %v", err)
	}
	procs, err := g.Procs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(procs, []int{cmd.Process.Pid}) {
		t.Errorf("Procs = %v, want [%d]", procs, cmd.Process.Pid)
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Pids != 1 {
		t.Errorf("Stats.Pids = %d, want 1", st.Pids)
	}
	// The process is in every hierarchy the group uses.
	cg := readString(t, "/proc/"+strconv.Itoa(cmd.Process.Pid)+"/cgroup")
	in := 0
	for line := range strings.SplitSeq(cg, "\n") {
		if strings.HasSuffix(line, ":/"+h.prefix+"/procs") || strings.HasSuffix(line, ":/"+h.prefix+"/procs/w") {
			in++
		}
	}
	if in != len(g.dirs()) {
		t.Errorf("in %d hierarchies, want %d; /proc/pid/cgroup:\n%s", in, len(g.dirs()), cg)
	}
	for _, d := range g.dirs() {
		if d == g.memory || d == g.pids || d == g.unified {
			d = filepath.Join(d, workloadGroup)
		}
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(cmd.Process.Pid) {
			t.Errorf("%s/cgroup.procs = %q, %v", d, b, err)
		}
	}

	// After a restart the group is found again.
	g2, err := h.Open("procs")
	if err != nil {
		t.Fatal(err)
	}
	if p2, err := g2.Procs(); err != nil || !slices.Equal(p2, procs) {
		t.Errorf("Open().Procs = %v, %v", p2, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	eventually(t, 5*time.Second, "group empties", func() bool {
		p, err := g.Procs()
		return err == nil && len(p) == 0
	})
}

func TestList(t *testing.T) {
	h := testHost(t)
	if ids, err := h.List(); err != nil || len(ids) != 0 {
		t.Fatalf("List of a fresh prefix = %v, %v", ids, err)
	}
	for _, id := range []string{"b", "a", "c"} {
		if _, err := h.Create(id, Limits{}, delegateID, delegateID); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := h.List()
	if err != nil || !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("List = %v, %v", ids, err)
	}
	g, _ := h.Open("b")
	if err := g.Destroy(); err != nil {
		t.Fatal(err)
	}
	if ids, err := h.List(); err != nil || !slices.Equal(ids, []string{"a", "c"}) {
		t.Fatalf("List after destroying b = %v, %v", ids, err)
	}
	// A group left in only one hierarchy (a crash mid-Destroy) is listed.
	if h.Version() == V1 {
		g, _ := h.Open("c")
		for _, d := range g.workloadDirs() {
			if filepath.Dir(d) != g.memory {
				_ = unix.Rmdir(d)
			}
		}
		for _, d := range g.dirs() {
			if d != g.memory {
				if err := unix.Rmdir(d); err != nil {
					t.Fatal(err)
				}
			}
		}
		if ids, err := h.List(); err != nil || !slices.Equal(ids, []string{"a", "c"}) {
			t.Fatalf("List with a partial group = %v, %v", ids, err)
		}
		if _, err := h.Open("c"); err != nil {
			t.Fatalf("Open of a partial group: %v", err)
		}
	}
}

func TestDestroyIdempotent(t *testing.T) {
	h := testHost(t)
	g, err := h.Create("idem", Limits{Pids: 10}, delegateID, delegateID)
	if err != nil {
		t.Fatal(err)
	}
	// A sub-group, as the guest makes them.
	if err := os.Mkdir(filepath.Join(g.DelegatedPaths()[map[Version]string{V1: "pids", V2: "unified"}[h.Version()]], "e1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := g.Destroy(); err != nil {
			t.Fatalf("Destroy #%d: %v", i+1, err)
		}
	}
	for _, d := range g.dirs() {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there: %v", d, err)
		}
	}
	if _, err := h.Open("idem"); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("Open after Destroy = %v, want ErrNotFound", err)
	}
	if _, err := h.Create("idem", Limits{}, delegateID, delegateID); err != nil {
		t.Errorf("re-Create after Destroy: %v", err)
	}
}

func TestMemoryLimitOOMKills(t *testing.T) {
	h := testHost(t)
	// tail keeps its whole input when there is no newline: a 300 MiB hog.
	const hog = "head -c 300M /dev/zero | tail > /dev/null"
	run := func(id string, l Limits) (int, Stats) {
		g, err := h.Create(id, l, delegateID, delegateID)
		if err != nil {
			t.Fatal(err)
		}
		p := startGated(t, hog)
		if err := g.AddWorkloadProc(p.cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		p.release(t)
		_ = p.wait(t, 60*time.Second)
		st, err := g.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return p.cmd.ProcessState.ExitCode(), st
	}
	// Positive control: without a limit the hog completes.
	if code, st := run("nolimit", Limits{}); code != 0 || st.OOMKills != 0 {
		t.Fatalf("unlimited hog: exit %d, %d OOM kills", code, st.OOMKills)
	}
	code, st := run("oom", Limits{MemoryBytes: 64 << 20})
	if code != 128+int(unix.SIGKILL) {
		t.Errorf("limited hog exit code %d, want %d (SIGKILL)", code, 128+int(unix.SIGKILL))
	}
	if st.OOMKills < 1 {
		t.Errorf("Stats.OOMKills = %d, want >= 1", st.OOMKills)
	}
	// The peak is the whole sandbox's: the workloads' 64 MiB plus at
	// most the agent's headroom.
	if st.MemoryPeakBytes > 64<<20+AgentMemoryHeadroom {
		t.Errorf("peak %d above the 64 MiB limit plus the agent's headroom", st.MemoryPeakBytes)
	}
	t.Logf("stats after OOM: %+v", st)
}

func TestPidsLimitStopsForks(t *testing.T) {
	h := testHost(t)
	// Each iteration forks a sleep and prints how many it has started.
	const forks = "n=0; while [ $n -lt 20 ]; do sleep 30 >/dev/null 2>&1 & n=$((n+1)); echo $n; done"
	run := func(id string, l Limits) (last int, p *gated, g *Group) {
		g, err := h.Create(id, l, delegateID, delegateID)
		if err != nil {
			t.Fatal(err)
		}
		p = startGated(t, forks)
		if err := g.AddWorkloadProc(p.cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		p.release(t)
		_ = p.wait(t, 30*time.Second)
		lines := strings.Fields(p.stdout.String())
		if len(lines) > 0 {
			last, _ = strconv.Atoi(lines[len(lines)-1])
		}
		return last, p, g
	}
	// Positive control: unlimited, all 20 forks succeed.
	if last, p, g := run("nopids", Limits{}); last != 20 || p.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("unlimited: %d forks, exit %d, stderr %q", last, p.cmd.ProcessState.ExitCode(), p.stderr.String())
	} else if err := g.Destroy(); err != nil {
		t.Fatal(err)
	}
	last, p, g := run("pids", Limits{Pids: 5})
	if last >= 20 || p.cmd.ProcessState.ExitCode() == 0 {
		t.Errorf("pids.max 5: %d forks, exit %d", last, p.cmd.ProcessState.ExitCode())
	}
	if !strings.Contains(strings.ToLower(p.stderr.String()), "fork") {
		t.Errorf("no fork failure reported: %q", p.stderr.String())
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Pids > 5 {
		t.Errorf("Stats.Pids = %d above pids.max 5", st.Pids)
	}
	t.Logf("forks before failure: %d; stderr %q", last, p.stderr.String())
}

func TestCPUQuotaThrottles(t *testing.T) {
	h := testHost(t)
	spin := func(id string, l Limits) *Group {
		g, err := h.Create(id, l, delegateID, delegateID)
		if err != nil {
			t.Fatal(err)
		}
		p := startGated(t, "while :; do :; done")
		if err := g.AddWorkloadProc(p.cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		p.release(t)
		return g
	}
	// 0.02 cores: 2 ms of every 100 ms period. Small enough that the
	// spinner exceeds it even on a host so busy that it gets only a few
	// per cent of a core (0.2 cores was never reached at load 20).
	limited := spin("cpu", Limits{CPU: 0.02})
	free := spin("nocpu", Limits{})
	var st Stats
	eventually(t, 20*time.Second, "the limited spinner is throttled", func() bool {
		var err error
		st, err = limited.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st.CPUThrottled > 0 && st.CPUUsage > 0
	})
	// Positive control: a spinner without a quota is never throttled.
	var fst Stats
	eventually(t, 20*time.Second, "the free spinner uses CPU", func() bool {
		var err error
		fst, err = free.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return fst.CPUUsage > 200*time.Millisecond
	})
	if fst.CPUThrottled != 0 {
		t.Errorf("unlimited spinner throttled for %v", fst.CPUThrottled)
	}
	t.Logf("limited %+v; free %+v", st, fst)
}

func TestDestroyKillsForkBomb(t *testing.T) {
	h := testHost(t)
	// Every process forks copies of itself forever; forks fail at pids.max
	// and the failing shell exits, so the tree churns at the limit.
	const bomb = "b() { while :; do b & done; }; b"
	cases := []struct {
		name string
		host *Host
	}{{"kill loop", &Host{l: h.l, prefix: h.prefix}}}
	cases[0].host.l.freezer = ""
	if h.l.freezer != "" {
		cases = append(cases, struct {
			name string
			host *Host
		}{"freezer", h})
	}
	if h.Version() == V2 {
		cases = []struct {
			name string
			host *Host
		}{{"cgroup.kill", h}}
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := "bomb" + strconv.Itoa(i)
			g, err := c.host.Create(id, Limits{Pids: 64, MemoryBytes: 256 << 20}, delegateID, delegateID)
			if err != nil {
				t.Fatal(err)
			}
			p := startGated(t, bomb)
			if err := g.AddWorkloadProc(p.cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			p.release(t)
			eventually(t, 20*time.Second, "the bomb fills the group", func() bool {
				st, err := g.Stats()
				return err == nil && st.Pids >= 32
			})
			if err := g.Destroy(); err != nil {
				t.Fatalf("Destroy: %v", err)
			}
			if err := p.wait(t, 10*time.Second); err == nil {
				t.Error("the bomb's root shell exited cleanly; want killed")
			}
			for _, d := range g.dirs() {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s remains: %v", d, err)
				}
			}
			if err := g.Destroy(); err != nil {
				t.Errorf("second Destroy: %v", err)
			}
		})
	}
}

// TestDelegatedSub is the guest's path end to end, as the delegate uid
// through directory fds only: an exec in its own sub-group double-forks a
// daemon, which is listed and killed, and the sub-group removed.
func TestDelegatedSub(t *testing.T) {
	h := testHost(t)
	g, err := h.Create("guest", Limits{Pids: 64, MemoryBytes: 256 << 20}, delegateID, delegateID)
	if err != nil {
		t.Fatal(err)
	}
	paths := g.DelegatedPaths()
	dirs := []string{paths["pids"], paths["memory"]}
	if h.Version() == V2 {
		dirs = []string{paths["unified"], paths["unified"]}
	}
	r := runGuest(t, g, h.Version(), dirs)
	if r.OOMBefore != 0 || r.OOMAfter != 0 {
		t.Errorf("OOMKills = %d before, %d after; want 0", r.OOMBefore, r.OOMAfter)
	}
	if h.Version() == V1 {
		if !strings.Contains(r.MoveBackErr, "move thread back") || !r.LockedThreadInSub {
			t.Errorf("failed move back: error %q, thread still locked in the sub-group: %v", r.MoveBackErr, r.LockedThreadInSub)
		}
		if r.OnMainThread {
			t.Fatal("Spawn ran on the main thread despite the helper's init lock")
		}
		if !r.ThreadGone || !r.RemovedAfterExit {
			t.Errorf("the stranded thread was not discarded: gone %v, sub-group removed %v", r.ThreadGone, r.RemovedAfterExit)
		}
	}
}

func TestFreezerFreezes(t *testing.T) {
	h := testHost(t)
	if h.Version() != V1 || h.l.freezer == "" {
		t.Skip("needs the v1 freezer hierarchy")
	}
	g, err := h.Create("freeze", Limits{}, delegateID, delegateID)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := g.AddWorkloadProc(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(g.freezer, "freezer.state")
	var during string
	if err := g.frozen(func() error { during = readString(t, state); return nil }); err != nil {
		t.Fatal(err)
	}
	if during != "FROZEN" {
		t.Errorf("freezer.state during kill = %q, want FROZEN", during)
	}
	if s := readString(t, state); s != "THAWED" {
		t.Errorf("freezer.state after = %q, want THAWED", s)
	}
	// Thawed even when the kill fails.
	if err := g.frozen(func() error { return errors.New("boom") }); err == nil {
		t.Error("frozen swallowed the kill error")
	}
	if s := readString(t, state); s != "THAWED" {
		t.Errorf("freezer.state after a failed kill = %q, want THAWED", s)
	}
}

func runGuest(t *testing.T, g *Group, v Version, dirs []string) *guestReport {
	t.Helper()
	var r guestReport
	runAsDelegate(t, "guest", dirs, []string{"GUEST_VERSION=" + strconv.Itoa(int(v))}, func(pid int) {
		if err := g.AddWorkloadProc(pid); err != nil {
			t.Fatal(err)
		}
	}, &r)
	t.Logf("guest report: %+v", r)
	if r.SleepPid <= 0 {
		t.Fatal("no daemon found")
	}
	// Positive control: the daemon escaped the exec's process tree, so
	// killing the exec's children would have missed it.
	if r.SleepPpid == r.ShellPid || r.SleepPpid == r.Self {
		t.Errorf("daemon's parent %d is in the exec's tree; the test proves nothing", r.SleepPpid)
	}
	if r.SelfInSub || r.ThreadsInSub != 0 {
		t.Errorf("guest left in the sub-group: process %v, %d threads", r.SelfInSub, r.ThreadsInSub)
	}
	if r.Killed < 1 {
		t.Errorf("Kill reported %d", r.Killed)
	}
	if len(r.After) != 0 {
		t.Errorf("Procs after Kill = %v", r.After)
	}
	if !r.Removed {
		t.Error("Remove did not remove the sub-group")
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "e1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sub-group still on the host: %v", err)
	}
	eventually(t, 10*time.Second, "the daemon is dead", func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(r.SleepPid) + "/stat")
		if err != nil {
			return true
		}
		i := strings.LastIndexByte(string(b), ')')
		return i > 0 && strings.HasPrefix(string(b[i:]), ") Z") || !strings.Contains(string(b), "(sleep)")
	})
	return &r
}

// TestV2OnUnifiedTree exercises the v2 code paths for real on a hybrid host:
// its unified hierarchy has no controllers, but sub-groups, delegation,
// CLONE_INTO_CGROUP and cgroup.kill all work there.
func TestV2OnUnifiedTree(t *testing.T) {
	h := testHost(t)
	if h.Version() == V2 {
		t.Skip("a v2 host: the other tests cover v2")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := parseMountinfo(mi)
	if err != nil {
		t.Fatal(err)
	}
	var unified string
	for _, m := range mounts {
		if m.FSType == "cgroup2" && !m.ReadOnly && strings.HasPrefix(m.MountPoint, DefaultRoot) {
			unified = m.MountPoint
			break
		}
	}
	if unified == "" {
		t.Skip("no cgroup2 mount on this v1 host")
	}
	h2 := &Host{l: layout{version: V2, unified: unified}, prefix: h.prefix, ready: true}
	if err := os.Mkdir(filepath.Join(unified, h.prefix), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanupHost(t, h2) })
	g, err := h2.mkGroup("v2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(g.unified, "cgroup.kill")); err != nil {
		t.Skipf("kernel without cgroup.kill: %v", err)
	}
	if err := g.delegate(delegateID, delegateID); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(g.unified, workloadGroup)
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if u := fileOwner(t, filepath.Join(w, f)); u != delegateID {
			t.Errorf("%q owned by %d", f, u)
		}
	}
	if u := fileOwner(t, filepath.Join(g.unified, "cgroup.kill")); u != 0 {
		t.Errorf("cgroup.kill owned by %d", u)
	}

	r := runGuest(t, g, V2, []string{w, w})
	if r.OOMBefore != -1 {
		t.Errorf("OOMKills without a memory controller = %d, want -1", r.OOMBefore)
	}

	// Host side: Procs over sub-groups and Destroy through cgroup.kill.
	p := startGated(t, "sleep 60")
	if err := g.AddWorkloadProc(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(g.unified, "e9")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	s2 := exec.Command("sleep", "60")
	if err := s2.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { s2.Process.Kill(); s2.Wait() }()
	if err := writeFile(filepath.Join(sub, "cgroup.procs"), strconv.Itoa(s2.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	p.release(t)
	eventually(t, 10*time.Second, "sleep runs", func() bool {
		procs, err := g.Procs()
		return err == nil && len(procs) >= 3 // shell, its sleep, the sub-group's sleep
	})
	procs, _ := g.Procs()
	if !slices.Contains(procs, s2.Process.Pid) || !slices.Contains(procs, p.cmd.Process.Pid) {
		t.Errorf("Procs = %v, want %d and %d among them", procs, s2.Process.Pid, p.cmd.Process.Pid)
	}
	if err := g.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, 10*time.Second); err == nil {
		t.Error("shell survived Destroy")
	}
	if _, err := os.Stat(g.unified); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("group remains: %v", err)
	}
}

func BenchmarkCreateDestroy(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	h, err := Detect(DefaultRoot, "paddock-bench-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		b.Skip(err)
	}
	defer func() {
		for _, d := range h.prefixDirs() {
			_ = unix.Rmdir(d)
		}
	}()
	l := Limits{CPU: 1, MemoryBytes: 256 << 20, Pids: 128}
	for i := 0; b.Loop(); i++ {
		g, err := h.Create("b"+strconv.Itoa(i), l, delegateID, delegateID)
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Destroy(); err != nil {
			b.Fatal(err)
		}
	}
}
