package cgroup

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// Limits are the resource ceilings of one sandbox. Zero means "no limit" for
// that resource.
type Limits struct {
	CPU         float64 // cores (CFS quota = CPU * period)
	MemoryBytes int64   // hard limit; swap is limited to the same value (no swap use)
	Pids        int64   // maximum number of tasks
}

// Stats is a point-in-time reading of one sandbox's group.
type Stats struct {
	MemoryBytes     int64         // current usage
	MemoryPeakBytes int64         // high-water mark (0 if the kernel does not report it)
	OOMKills        int64         // processes killed by the OOM killer in this group, ever
	Pids            int64         // current number of tasks
	CPUUsage        time.Duration // total CPU time consumed
	CPUThrottled    time.Duration // time spent throttled by the CPU limit
}

// ErrThreadStranded is returned by Sub.Spawn when the spawning thread could
// not leave the sub-group: the caller's goroutine must end without
// unlocking its thread, so the runtime discards the thread.
var ErrThreadStranded = errors.New("spawning thread stranded in an exec sub-group")

// Version is 1 or 2.
type Version int

// The cgroup versions.
const (
	V1 Version = 1
	V2 Version = 2
)

// Defaults for Detect's arguments.
const (
	DefaultRoot   = "/sys/fs/cgroup"
	DefaultPrefix = "paddock"
)

const (
	// cfsPeriod is the CFS period in microseconds; quota = CPU * period.
	cfsPeriod = 100000
	// cfsMinQuota is the smallest quota the kernel accepts (1 ms).
	cfsMinQuota = 1000
	// maxCPU bounds the CPU limit so that the quota always fits the
	// kernel's range; no host has more cores than this.
	maxCPU = 4096
	// maxNameLen bounds group and sub-group names.
	maxNameLen = 128
)

// validate rejects limits the kernel would misinterpret (negative values
// would otherwise turn into "unlimited" or a write error half-way through).
func (l Limits) validate() error {
	switch {
	case math.IsNaN(l.CPU) || math.IsInf(l.CPU, 0) || l.CPU < 0 || l.CPU > maxCPU:
		return errs.Invalid("cpu limit must be between 0 and %d cores", maxCPU)
	case l.MemoryBytes < 0:
		return errs.Invalid("memory limit must not be negative")
	case l.Pids < 0:
		return errs.Invalid("pids limit must not be negative")
	}
	return nil
}

// cpuQuota returns the CFS quota in microseconds for cpu cores, or -1 for
// no limit.
func cpuQuota(cpu float64) int64 {
	if cpu <= 0 {
		return -1
	}
	q := int64(math.Round(cpu * cfsPeriod))
	if q < cfsMinQuota {
		q = cfsMinQuota
	}
	return q
}

// v2CPUMax formats cgroup v2's cpu.max ("quota period", quota "max" when
// unlimited).
func v2CPUMax(cpu float64) string {
	q := cpuQuota(cpu)
	if q < 0 {
		return "max " + strconv.Itoa(cfsPeriod)
	}
	return fmt.Sprintf("%d %d", q, cfsPeriod)
}

// v2Max formats a v2 limit file value ("max" when unlimited).
func v2Max(v int64) string {
	if v <= 0 {
		return "max"
	}
	return strconv.FormatInt(v, 10)
}

// v1Mem formats memory.limit_in_bytes ("-1" when unlimited).
func v1Mem(v int64) string {
	if v <= 0 {
		return "-1"
	}
	return strconv.FormatInt(v, 10)
}

// validName reports whether s is usable as one path component of a group
// name. Only a small alphabet is accepted so that a name can never climb
// out of its parent ("..", "/") or collide with the kernel's "cgroup.*"
// control files.
func validName(s string) bool {
	if s == "" || len(s) > maxNameLen || s == "." || s == ".." {
		return false
	}
	if len(s) >= 7 && s[:7] == "cgroup." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
