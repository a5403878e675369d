//go:build linux

package gvisor

import (
	"slices"
	"testing"
)

func TestParseV1Mounts(t *testing.T) {
	mi := `25 30 0:23 / /sys rw,nosuid shared:7 - sysfs sysfs rw
33 25 0:28 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755
35 33 0:30 / /sys/fs/cgroup/memory rw,nosuid shared:13 - cgroup cgroup rw,memory
36 33 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:14 - cgroup cgroup rw,cpu,cpuacct
37 33 0:32 / /sys/fs/cgroup/cpuset rw,nosuid shared:15 - cgroup cgroup rw,cpuset
38 33 0:33 / /sys/fs/cgroup/with\040space rw - cgroup cgroup rw,devices
39 33 0:34 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
40 33 0:35 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd`
	got := parseV1Mounts(mi)
	want := []v1Mount{
		{Dir: "/sys/fs/cgroup/memory", Ours: true, Controllers: []string{"memory"}},
		{Dir: "/sys/fs/cgroup/cpu,cpuacct", Ours: true, Controllers: []string{"cpu", "cpuacct"}},
		{Dir: "/sys/fs/cgroup/cpuset", Controllers: []string{"cpuset"}},
		{Dir: "/sys/fs/cgroup/with space", Controllers: []string{"devices"}},
		{Dir: "/sys/fs/cgroup/systemd", Controllers: []string{"xattr"}},
	}
	if !slices.EqualFunc(got, want, func(a, b v1Mount) bool {
		return a.Dir == b.Dir && a.Ours == b.Ours && slices.Equal(a.Controllers, b.Controllers)
	}) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}
