package bench

import (
	"bufio"
	"bytes"
	"os"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
)

// Machine describes where the numbers were measured.
type Machine struct {
	CPUModel  string `json:"cpu_model"`
	Cores     int    `json:"cores"`
	MemoryMiB int64  `json:"memory_mib"`
	Kernel    string `json:"kernel"`
	OS        string `json:"os"`
	GoVersion string `json:"go_version"`
	// PaddockVersion is the bench binary's version.
	PaddockVersion string `json:"paddock_version"`
	// CgroupVersion and LayerStore are the embedded stack's; against a
	// server they are read on the bench's host (the server's may differ).
	CgroupVersion string `json:"cgroup_version"`
	LayerStore    string `json:"layer_store"`
	// LoadStart and LoadEnd are /proc/loadavg at the start and end of the
	// run: the machine may be shared, and the numbers should say so.
	LoadStart [3]float64 `json:"load_avg_start"`
	LoadEnd   [3]float64 `json:"load_avg_end"`
}

// CollectMachine reads this host's description; fields it cannot read
// stay empty. cgroup and layers are filled by the caller when known.
func CollectMachine(paddockVersion string) Machine {
	m := Machine{Cores: goruntime.NumCPU(), GoVersion: goruntime.Version(), PaddockVersion: paddockVersion,
		Kernel: kernelRelease(), LayerStore: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = CPUModel(b)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kb, ok := ParseKV(b)["MemTotal"]; ok {
			m.MemoryMiB = parseKB(kb) >> 20
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		m.OS = osPretty(b)
	}
	m.CgroupVersion = hostCgroupVersion()
	m.LoadStart = LoadAvg()
	return m
}

// ParseKV parses "Key: value" lines (/proc/meminfo, /proc/PID/status, one
// block of /proc/cpuinfo): keys and values trimmed, the first occurrence
// of a key wins, lines without a colon ignored. At most 4096 keys.
func ParseKV(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() && len(out) < 4096 {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if _, dup := out[k]; !dup {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// CPUModel is the "model name" of /proc/cpuinfo (x86), else its
// "Processor"/"CPU part" (arm), else "unknown".
func CPUModel(cpuinfo []byte) string {
	kv := ParseKV(cpuinfo)
	for _, k := range []string{"model name", "Model", "Processor", "cpu model", "CPU part"} {
		if v := kv[k]; v != "" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "unknown"
}

// parseKB turns a meminfo value ("123456 kB", or bytes without a unit)
// into bytes; -1 if it is not a number.
func parseKB(v string) int64 {
	f := strings.Fields(v)
	if len(f) == 0 {
		return -1
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n < 0 || n > 1<<52 {
		return -1
	}
	if len(f) > 1 && strings.EqualFold(f[1], "kB") {
		return n << 10
	}
	return n
}

// MemAvailable is /proc/meminfo's MemAvailable in bytes (-1 unknown).
func MemAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	v, ok := ParseKV(b)["MemAvailable"]
	if !ok {
		return -1
	}
	return parseKB(v)
}

// RSS is the resident set of process pid in bytes (VmRSS; -1 unknown).
func RSS(pid int) int64 {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	v, ok := ParseKV(b)["VmRSS"]
	if !ok {
		return -1
	}
	return parseKB(v)
}

// LoadAvg is /proc/loadavg's three averages (zeros when unreadable).
func LoadAvg() [3]float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return [3]float64{}
	}
	return ParseLoadAvg(b)
}

// ParseLoadAvg parses the first three fields of /proc/loadavg; a field
// that is not a finite non-negative number reads as 0.
func ParseLoadAvg(b []byte) [3]float64 {
	var out [3]float64
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		v, err := strconv.ParseFloat(f[i], 64)
		if err == nil && v >= 0 && v < 1e9 {
			out[i] = round3(v)
		}
	}
	return out
}

func osPretty(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// hostCgroupVersion tells v2 from v1 as the cgroup package does: v2 only
// when the unified hierarchy offers the memory controller.
func hostCgroupVersion() string {
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		if strings.Contains(" "+string(b)+" ", " memory") {
			return "v2"
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err == nil {
		return "v1"
	}
	return "unknown"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
