package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// mount is one line of /proc/self/mountinfo, reduced to what Detect needs.
type mount struct {
	Root       string   // root of the mount within its filesystem
	MountPoint string   // where it is mounted
	ReadOnly   bool     // per-mount "ro" option
	FSType     string   // "cgroup" or "cgroup2" for the lines we care about
	SuperOpts  []string // per-superblock options: the v1 controllers
}

// maxMountinfoLines bounds parsing of a hostile or pathological table.
const maxMountinfoLines = 100000

// parseMountinfo parses the format of proc(5) /proc/<pid>/mountinfo:
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// Malformed lines are errors: the kernel never writes them, so one means we
// are not reading what we think we are.
func parseMountinfo(data []byte) ([]mount, error) {
	var out []mount
	for n := 1; len(data) > 0; n++ {
		if n > maxMountinfoLines {
			return nil, fmt.Errorf("mountinfo: more than %d lines", maxMountinfoLines)
		}
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f := strings.Split(string(line), " ")
		sep := slices.Index(f, "-")
		// Six fixed fields before the optional ones, three after "-".
		if sep < 6 || len(f) < sep+4 {
			return nil, fmt.Errorf("mountinfo line %d: malformed", n)
		}
		root, err := unescapeMount(f[3])
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: root: %w", n, err)
		}
		mp, err := unescapeMount(f[4])
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: mount point: %w", n, err)
		}
		out = append(out, mount{
			Root:       root,
			MountPoint: mp,
			ReadOnly:   slices.Contains(strings.Split(f[5], ","), "ro"),
			FSType:     f[sep+1],
			SuperOpts:  strings.Split(f[sep+3], ","),
		})
	}
	return out, nil
}

// unescapeMount undoes the kernel's octal escaping (\040 for space, \011,
// \012, \134) of paths in mountinfo.
func unescapeMount(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+4 > len(s) {
			return "", errors.New("truncated escape")
		}
		v, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape %q", s[i:i+4])
		}
		b.WriteByte(byte(v))
		i += 3
	}
	return b.String(), nil
}

// layout is the result of detection: which hierarchy serves which
// controller.
type layout struct {
	version Version
	unified string // v2 mount point
	// v1 mount points per controller; cpu and cpuacct are the same when
	// co-mounted ("cpu,cpuacct"). cpuacct and freezer may be empty.
	memory, pids, cpu, cpuacct, freezer string
}

// v2Required are the controllers a v2 host must offer.
var v2Required = []string{"memory", "pids", "cpu"}

// chooseLayout picks v2 when a writable cgroup2 mount under root offers the
// memory, pids and cpu controllers (controllersOf reads its
// cgroup.controllers), else v1 when writable v1 hierarchies under root carry
// memory, pids and cpu.
func chooseLayout(mounts []mount, root string, controllersOf func(mountPoint string) ([]string, error)) (layout, error) {
	root = path.Clean(root)
	under := func(mp string) bool {
		mp = path.Clean(mp)
		return mp == root || root == "/" || strings.HasPrefix(mp, root+"/")
	}
	var l layout
	var v2Err error
	for _, m := range mounts {
		if m.ReadOnly || !under(m.MountPoint) {
			continue
		}
		switch m.FSType {
		case "cgroup2":
			if l.unified != "" {
				continue
			}
			l.unified = m.MountPoint
			have, err := controllersOf(m.MountPoint)
			if err != nil {
				v2Err = err
				continue
			}
			if hasAll(have, v2Required) {
				return layout{version: V2, unified: m.MountPoint}, nil
			}
		case "cgroup":
			for _, o := range m.SuperOpts {
				var dst *string
				switch o {
				case "memory":
					dst = &l.memory
				case "pids":
					dst = &l.pids
				case "cpu":
					dst = &l.cpu
				case "cpuacct":
					dst = &l.cpuacct
				case "freezer":
					dst = &l.freezer
				default:
					continue
				}
				if *dst == "" {
					*dst = m.MountPoint
				}
			}
		}
	}
	if l.memory != "" && l.pids != "" && l.cpu != "" {
		l.version = V1
		l.unified = ""
		return l, nil
	}
	var missing []string
	for _, c := range []struct{ name, mp string }{{"memory", l.memory}, {"pids", l.pids}, {"cpu", l.cpu}} {
		if c.mp == "" {
			missing = append(missing, c.name)
		}
	}
	msg := fmt.Sprintf("no cgroup2 mount under %s with memory, pids and cpu, and no v1 hierarchy for %s", root, strings.Join(missing, ", "))
	if v2Err != nil {
		return layout{}, fmt.Errorf("%s (reading cgroup2 controllers: %w)", msg, v2Err)
	}
	return layout{}, errors.New(msg)
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// parseValue parses a single-value control file ("123\n"); "max" (v2) and
// "-1" read as -1, meaning unlimited.
func parseValue(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad value %q", truncate(s))
	}
	if v < -1 {
		return 0, fmt.Errorf("bad value %q", truncate(s))
	}
	return v, nil
}

// flatKeyed finds key in a flat-keyed file ("key value" per line: cpu.stat,
// memory.events, memory.oom_control). A key that is absent is reported by
// ok=false; one whose value is not a non-negative integer is an error.
func flatKeyed(b []byte, key string) (v int64, ok bool, err error) {
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		k, val, found := strings.Cut(strings.TrimSpace(string(line)), " ")
		if !found || k != key {
			continue
		}
		val = strings.TrimSpace(val)
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%s: bad value %q", key, truncate(val))
		}
		return n, true, nil
	}
	return 0, false, nil
}

// parsePids parses cgroup.procs / tasks: one decimal id per line. Zero is
// skipped: the kernel writes it for tasks that are not visible in the
// reader's pid namespace, and pid 0 must never reach kill(2).
func parsePids(b []byte) ([]int, error) {
	var out []int
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		s := strings.TrimSpace(string(line))
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad pid %q", truncate(s))
		}
		if n > 0 {
			out = append(out, int(n))
		}
	}
	return out, nil
}

// parseCPUMax parses v2 cpu.max ("max 100000" or "20000 100000"); quota is
// -1 when unlimited.
func parseCPUMax(b []byte) (quota, period int64, err error) {
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("cpu.max: bad format %q", truncate(string(b)))
	}
	if quota, err = parseValue([]byte(f[0])); err != nil {
		return 0, 0, fmt.Errorf("cpu.max quota: %w", err)
	}
	if period, err = strconv.ParseInt(f[1], 10, 64); err != nil || period <= 0 {
		return 0, 0, fmt.Errorf("cpu.max: bad period %q", truncate(f[1]))
	}
	return quota, period, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// cpuStatV1 reads throttled_time (nanoseconds) from a v1 cpu.stat.
func cpuStatV1(b []byte) (throttled time.Duration, err error) {
	ns, _, err := flatKeyed(b, "throttled_time")
	if err != nil {
		return 0, fmt.Errorf("cpu.stat: %w", err)
	}
	return time.Duration(ns), nil
}

// cpuStatV2 reads usage_usec and throttled_usec from a v2 cpu.stat. The
// throttling keys only appear once the cpu controller is enabled, so their
// absence reads as zero.
func cpuStatV2(b []byte) (usage, throttled time.Duration, err error) {
	u, _, err := flatKeyed(b, "usage_usec")
	if err != nil {
		return 0, 0, fmt.Errorf("cpu.stat: %w", err)
	}
	t, _, err := flatKeyed(b, "throttled_usec")
	if err != nil {
		return 0, 0, fmt.Errorf("cpu.stat: %w", err)
	}
	return usecs(u), usecs(t), nil
}

// usecs converts microseconds to a Duration, saturating instead of
// overflowing on absurd values.
func usecs(u int64) time.Duration {
	if u > math.MaxInt64/int64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(u) * time.Microsecond
}
