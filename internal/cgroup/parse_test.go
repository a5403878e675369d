package cgroup

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockhq/paddock/internal/errs"
)

// Sample /proc/self/mountinfo tables of the three kinds of host.
const (
	// Older systemd host: v1 only, cpu and cpuacct co-mounted.
	mountinfoV1 = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
25 18 0:21 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
26 25 0:22 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd
28 25 0:24 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,cpu,cpuacct
29 25 0:25 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,memory
30 25 0:26 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,pids
31 25 0:27 / /sys/fs/cgroup/freezer rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,freezer
`
	// Hybrid host (this machine): v1 controllers, an empty unified tree.
	mountinfoHybrid = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	// Modern host: the unified hierarchy only.
	mountinfoV2 = `24 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 master:3 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
	// A container whose runtime mounted cgroupfs read-only.
	mountinfoV2ReadOnly = `900 800 0:30 /docker/abc /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate
`
)

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []mount
		err  bool
	}{
		{
			name: "optional fields and escapes",
			in:   "36 35 98:0 /mnt\\0401 /srv/my\\040cg rw,noatime shared:1 master:2 - cgroup cgroup rw,memory\n",
			want: []mount{{Root: "/mnt 1", MountPoint: "/srv/my cg", FSType: "cgroup", SuperOpts: []string{"rw", "memory"}}},
		},
		{
			name: "no optional fields, read-only",
			in:   "1 0 0:1 / /sys/fs/cgroup ro,relatime - cgroup2 cgroup2 rw\n",
			want: []mount{{Root: "/", MountPoint: "/sys/fs/cgroup", ReadOnly: true, FSType: "cgroup2", SuperOpts: []string{"rw"}}},
		},
		{name: "blank lines skipped", in: "\n\n", want: nil},
		{name: "no separator", in: "1 0 0:1 / /x rw cgroup cgroup rw\n", err: true},
		{name: "too few after separator", in: "1 0 0:1 / /x rw - cgroup cgroup\n", err: true},
		{name: "too few before separator", in: "1 0 / /x - cgroup cgroup rw\n", err: true},
		{name: "truncated escape", in: "1 0 0:1 / /x\\04 rw - cgroup cgroup rw\n", err: true},
		{name: "bad escape", in: "1 0 0:1 / /x\\999 rw - cgroup cgroup rw\n", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMountinfo([]byte(tt.in))
			if tt.err {
				if err == nil {
					t.Fatalf("parseMountinfo = %+v, want error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("parseMountinfo (-want +got):\n%s", d)
			}
		})
	}
}

func TestChooseLayout(t *testing.T) {
	all := "cpuset cpu io memory hugetlb pids rdma misc"
	tests := []struct {
		name        string
		mountinfo   string
		root        string
		controllers map[string]string // cgroup.controllers per cgroup2 mount point
		want        layout
		err         bool
	}{
		{
			name:      "v1 only, cpu,cpuacct co-mounted",
			mountinfo: mountinfoV1,
			root:      "/sys/fs/cgroup",
			want: layout{version: V1, memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids",
				cpu: "/sys/fs/cgroup/cpu,cpuacct", cpuacct: "/sys/fs/cgroup/cpu,cpuacct", freezer: "/sys/fs/cgroup/freezer"},
		},
		{
			name:        "hybrid with an empty unified tree picks v1",
			mountinfo:   mountinfoHybrid,
			root:        "/sys/fs/cgroup/",
			controllers: map[string]string{"/sys/fs/cgroup/unified": "\n"},
			want: layout{version: V1, memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids",
				cpu: "/sys/fs/cgroup/cpu", cpuacct: "/sys/fs/cgroup/cpuacct", freezer: "/sys/fs/cgroup/freezer"},
		},
		{
			name:        "hybrid whose unified tree has the controllers picks v2",
			mountinfo:   mountinfoHybrid,
			root:        "/sys/fs/cgroup",
			controllers: map[string]string{"/sys/fs/cgroup/unified": "memory pids cpu"},
			want:        layout{version: V2, unified: "/sys/fs/cgroup/unified"},
		},
		{
			name:        "pure v2",
			mountinfo:   mountinfoV2,
			root:        "/sys/fs/cgroup",
			controllers: map[string]string{"/sys/fs/cgroup": all},
			want:        layout{version: V2, unified: "/sys/fs/cgroup"},
		},
		{
			name:        "pure v2 without pids is unusable",
			mountinfo:   mountinfoV2,
			root:        "/sys/fs/cgroup",
			controllers: map[string]string{"/sys/fs/cgroup": "cpu memory io"},
			err:         true,
		},
		{
			name:        "cgroup2 unreadable and no v1",
			mountinfo:   mountinfoV2,
			root:        "/sys/fs/cgroup",
			controllers: map[string]string{},
			err:         true,
		},
		{
			name:        "read-only mount is skipped",
			mountinfo:   mountinfoV2ReadOnly,
			root:        "/sys/fs/cgroup",
			controllers: map[string]string{"/sys/fs/cgroup": all},
			err:         true,
		},
		{
			name:        "mounts outside root are ignored",
			mountinfo:   mountinfoV1,
			root:        "/srv/cgroup",
			controllers: map[string]string{},
			err:         true,
		},
		{
			name:      "root / accepts everything",
			mountinfo: mountinfoV1,
			root:      "/",
			want: layout{version: V1, memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids",
				cpu: "/sys/fs/cgroup/cpu,cpuacct", cpuacct: "/sys/fs/cgroup/cpu,cpuacct", freezer: "/sys/fs/cgroup/freezer"},
		},
		{
			name:      "root is a path prefix, not a string prefix",
			mountinfo: "1 0 0:1 / /sys/fs/cgroupx/memory rw - cgroup cgroup rw,memory,pids,cpu\n",
			root:      "/sys/fs/cgroup",
			err:       true,
		},
		{
			name: "first of two mounts of a controller wins",
			mountinfo: "1 0 0:1 / /sys/fs/cgroup/a rw - cgroup cgroup rw,memory,pids,cpu\n" +
				"2 0 0:1 / /sys/fs/cgroup/b rw - cgroup cgroup rw,memory,pids,cpu\n",
			root: "/sys/fs/cgroup",
			want: layout{version: V1, memory: "/sys/fs/cgroup/a", pids: "/sys/fs/cgroup/a", cpu: "/sys/fs/cgroup/a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mounts, err := parseMountinfo([]byte(tt.mountinfo))
			if err != nil {
				t.Fatal(err)
			}
			got, err := chooseLayout(mounts, tt.root, func(mp string) ([]string, error) {
				c, ok := tt.controllers[mp]
				if !ok {
					return nil, errors.New("no such file")
				}
				return strings.Fields(c), nil
			})
			if tt.err {
				if err == nil {
					t.Fatalf("chooseLayout = %+v, want error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(layout{})); d != "" {
				t.Errorf("chooseLayout (-want +got):\n%s", d)
			}
		})
	}
}

func TestFlatKeyed(t *testing.T) {
	const (
		cpuStatV1Sample   = "nr_periods 120\nnr_throttled 37\nthrottled_time 2891551234\nnr_bursts 0\nburst_time 0\n"
		cpuStatV2Sample   = "usage_usec 8123456\nuser_usec 8000000\nsystem_usec 123456\ncore_sched.force_idle_usec 0\nnr_periods 60\nnr_throttled 48\nthrottled_usec 4400123\nnr_bursts 0\nburst_usec 0\n"
		memEventsSample   = "low 0\nhigh 0\nmax 1432\noom 3\noom_kill 2\noom_group_kill 0\n"
		oomControlSample  = "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n"
		cgroupEventsEmpty = "populated 0\nfrozen 0\n"
	)
	tests := []struct {
		name, in, key string
		want          int64
		ok, err       bool
	}{
		{"v1 cpu.stat nr_throttled", cpuStatV1Sample, "nr_throttled", 37, true, false},
		{"v1 cpu.stat throttled_time", cpuStatV1Sample, "throttled_time", 2891551234, true, false},
		{"v2 cpu.stat usage_usec", cpuStatV2Sample, "usage_usec", 8123456, true, false},
		{"v2 cpu.stat throttled_usec", cpuStatV2Sample, "throttled_usec", 4400123, true, false},
		{"memory.events oom_kill, not oom or oom_group_kill", memEventsSample, "oom_kill", 2, true, false},
		{"memory.oom_control oom_kill, not oom_kill_disable", oomControlSample, "oom_kill", 5, true, false},
		{"cgroup.events populated", cgroupEventsEmpty, "populated", 0, true, false},
		{"absent key", memEventsSample, "nope", 0, false, false},
		{"no trailing newline", "a 1\nb 2", "b", 2, true, false},
		{"bad value", "oom_kill x\n", "oom_kill", 0, false, true},
		{"negative value", "oom_kill -3\n", "oom_kill", 0, false, true},
		{"empty", "", "oom_kill", 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := flatKeyed([]byte(tt.in), tt.key)
			if (err != nil) != tt.err || ok != tt.ok || got != tt.want {
				t.Errorf("flatKeyed(%q) = %d, %v, %v; want %d, %v, err=%v", tt.key, got, ok, err, tt.want, tt.ok, tt.err)
			}
		})
	}

	u, th, err := cpuStatV2([]byte(cpuStatV2Sample))
	if err != nil || u != 8123456*time.Microsecond || th != 4400123*time.Microsecond {
		t.Errorf("cpuStatV2 = %v, %v, %v", u, th, err)
	}
	// Before the cpu controller is enabled, v2 cpu.stat has no throttling.
	u, th, err = cpuStatV2([]byte("usage_usec 47098723\nuser_usec 27046742\nsystem_usec 20051980\n"))
	if err != nil || u != 47098723*time.Microsecond || th != 0 {
		t.Errorf("cpuStatV2 (no cpu controller) = %v, %v, %v", u, th, err)
	}
	th, err = cpuStatV1([]byte(cpuStatV1Sample))
	if err != nil || th != 2891551234 {
		t.Errorf("cpuStatV1 = %v, %v", th, err)
	}
	if _, _, err := cpuStatV2([]byte("usage_usec nope\n")); err == nil {
		t.Error("cpuStatV2 accepted a bad value")
	}
	if got := usecs(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("usecs saturates: got %v", got)
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"123\n", 123, false},
		{"max\n", -1, false},
		{"-1\n", -1, false},
		{"9223372036854771712\n", 9223372036854771712, false},
		{"", 0, true},
		{"12 34", 0, true},
		{"-2", 0, true},
		{"max max", 0, true},
	}
	for _, tt := range tests {
		got, err := parseValue([]byte(tt.in))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseValue(%q) = %d, %v; want %d, err=%v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestParsePids(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{"1\n22\n333\n", []int{1, 22, 333}, false},
		{"", nil, false},
		{"0\n7\n", []int{7}, false}, // 0: not visible in our pid namespace
		{"7\n\n8", []int{7, 8}, false},
		{"-1\n", nil, true},
		{"x\n", nil, true},
		{"99999999999\n", nil, true},
	}
	for _, tt := range tests {
		got, err := parsePids([]byte(tt.in))
		if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
			t.Errorf("parsePids(%q) = %v, %v; want %v, err=%v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestCPUMax(t *testing.T) {
	tests := []struct {
		cpu    float64
		quota  int64
		cpuMax string
	}{
		{0, -1, "max 100000"},
		{0.2, 20000, "20000 100000"},
		{1, 100000, "100000 100000"},
		{2.5, 250000, "250000 100000"},
		{0.001, 1000, "1000 100000"}, // the kernel's minimum quota is 1 ms
	}
	for _, tt := range tests {
		if got := cpuQuota(tt.cpu); got != tt.quota {
			t.Errorf("cpuQuota(%v) = %d, want %d", tt.cpu, got, tt.quota)
		}
		s := v2CPUMax(tt.cpu)
		if s != tt.cpuMax {
			t.Errorf("v2CPUMax(%v) = %q, want %q", tt.cpu, s, tt.cpuMax)
		}
		q, p, err := parseCPUMax([]byte(s + "\n"))
		if err != nil || q != tt.quota || p != cfsPeriod {
			t.Errorf("parseCPUMax(%q) = %d, %d, %v", s, q, p, err)
		}
	}
	for _, bad := range []string{"", "max", "1 2 3", "x 100000", "max 0", "max -5"} {
		if _, _, err := parseCPUMax([]byte(bad)); err == nil {
			t.Errorf("parseCPUMax(%q) accepted", bad)
		}
	}
	if v2Max(0) != "max" || v2Max(64) != "64" || v1Mem(0) != "-1" || v1Mem(4096) != "4096" {
		t.Error("limit formatting wrong")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		l  Limits
		ok bool
	}{
		{Limits{}, true},
		{Limits{CPU: 0.5, MemoryBytes: 64 << 20, Pids: 64}, true},
		{Limits{CPU: -1}, false},
		{Limits{CPU: math.NaN()}, false},
		{Limits{CPU: math.Inf(1)}, false},
		{Limits{CPU: maxCPU + 1}, false},
		{Limits{MemoryBytes: -1}, false},
		{Limits{Pids: -1}, false},
	}
	for _, tt := range tests {
		err := tt.l.validate()
		if (err == nil) != tt.ok {
			t.Errorf("validate(%+v) = %v, want ok=%v", tt.l, err, tt.ok)
		}
		if err != nil && !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("validate(%+v) = %v, want ErrInvalid", tt.l, err)
		}
	}
}

func TestValidName(t *testing.T) {
	good := []string{"e1", "sbx-01HX", "a.b_c", strings.Repeat("a", maxNameLen)}
	bad := []string{"", ".", "..", "a/b", "../x", "cgroup.procs", "a b", "a\x00", strings.Repeat("a", maxNameLen+1), "é"}
	for _, s := range good {
		if !validName(s) {
			t.Errorf("validName(%q) = false", s)
		}
	}
	for _, s := range bad {
		if validName(s) {
			t.Errorf("validName(%q) = true", s)
		}
	}
}

func FuzzParseMountinfo(f *testing.F) {
	for _, s := range []string{mountinfoV1, mountinfoHybrid, mountinfoV2, mountinfoV2ReadOnly,
		"36 35 98:0 /mnt\\0401 /srv/my\\040cg rw,noatime shared:1 master:2 - cgroup cgroup rw,memory\n", "- - - - - - -", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := parseMountinfo([]byte(s))
		if err != nil {
			return
		}
		// Malformed lines are errors, so every non-blank line is a mount.
		lines := 0
		for l := range strings.SplitSeq(s, "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if len(ms) != lines {
			t.Fatalf("%d mounts from %d lines", len(ms), lines)
		}
		// Whatever parsed must be safe to lay out.
		_, _ = chooseLayout(ms, "/sys/fs/cgroup", func(string) ([]string, error) { return []string{"memory", "pids", "cpu"}, nil })
	})
}

func FuzzFlatKeyed(f *testing.F) {
	for _, s := range []string{"nr_periods 120\nnr_throttled 37\nthrottled_time 2891551234\n",
		"usage_usec 8123456\nthrottled_usec 4400123\n", "oom 3\noom_kill 2\n", "oom_kill -1", "oom_kill 99999999999999999999"} {
		f.Add(s, "oom_kill")
		f.Add(s, "throttled_usec")
	}
	f.Fuzz(func(t *testing.T, s, key string) {
		v, ok, err := flatKeyed([]byte(s), key)
		if err != nil {
			if ok {
				t.Fatal("ok with error")
			}
			return
		}
		if !ok {
			return
		}
		if v < 0 {
			t.Fatalf("negative value %d", v)
		}
		// The value came from a line whose first field is key.
		found := false
		for l := range strings.SplitSeq(s, "\n") {
			k, val, _ := strings.Cut(strings.TrimSpace(l), " ")
			if n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); k == key && err == nil && n == v {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("flatKeyed(%q, %q) = %d: no such line", s, key, v)
		}
		_, _, _ = cpuStatV2([]byte(s))
		_, _ = cpuStatV1([]byte(s))
	})
}

func FuzzParsePids(f *testing.F) {
	for _, s := range []string{"1\n22\n333\n", "0\n", "-1", "", "2147483647\n2147483648\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parsePids([]byte(s))
		if err != nil {
			return
		}
		for _, p := range ps {
			// Anything <= 0 would make kill(2) signal a process group or
			// every process.
			if p <= 0 {
				t.Fatalf("parsePids yielded %d", p)
			}
		}
	})
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"123\n", "max\n", "-1", "", "1 100000", "max 100000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := parseValue([]byte(s)); err == nil && v < -1 {
			t.Fatalf("parseValue(%q) = %d", s, v)
		}
		if q, p, err := parseCPUMax([]byte(s)); err == nil && (p <= 0 || q < -1) {
			t.Fatalf("parseCPUMax(%q) = %d, %d", s, q, p)
		}
	})
}

func BenchmarkDetectParse(b *testing.B) {
	for b.Loop() {
		ms, err := parseMountinfo([]byte(mountinfoHybrid))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := chooseLayout(ms, DefaultRoot, func(string) ([]string, error) { return nil, nil }); err != nil {
			b.Fatal(err)
		}
	}
}
