package cgroup

import "time"

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

// Version is 1 or 2.
type Version int
