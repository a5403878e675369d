//go:build linux

package cgroup

// Setting and reading a group's limits and counters, in v1 and v2.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// SetLimits changes the limits of a live group.
func (g *Group) SetLimits(l Limits) error {
	if err := l.validate(); err != nil {
		return err
	}
	// Raise the outer limit before the inner one and lower it after, so
	// that the inner never exceeds the outer at any moment.
	if g.unified != "" {
		return g.setLimitsV2(l)
	}
	return g.setLimitsV1(l)
}

func (g *Group) setLimitsV1(l Limits) error {
	outer := withHeadroom(l)
	wmem, wpids := filepath.Join(g.memory, workloadGroup), filepath.Join(g.pids, workloadGroup)
	if err := setMemoryV1(g.memory, outer.MemoryBytes); err != nil {
		return err
	}
	if err := setMemoryV1(wmem, l.MemoryBytes); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(g.pids, "pids.max"), v2Max(outer.Pids)); err != nil {
		return fmt.Errorf("cgroup: set pids.max: %w", err)
	}
	if err := writeFile(filepath.Join(wpids, "pids.max"), v2Max(l.Pids)); err != nil {
		return fmt.Errorf("cgroup: set pids.max: %w", err)
	}
	if err := writeFile(filepath.Join(g.cpu, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriod)); err != nil {
		return fmt.Errorf("cgroup: set cpu.cfs_period_us: %w", err)
	}
	if err := writeFile(filepath.Join(g.cpu, "cpu.cfs_quota_us"), strconv.FormatInt(cpuQuota(l.CPU), 10)); err != nil {
		return fmt.Errorf("cgroup: set cpu.cfs_quota_us: %w", err)
	}
	return nil
}

// setMemoryV1 sets memory.limit_in_bytes and, when swap accounting is on,
// memory.memsw.limit_in_bytes (memory+swap) to the same value, so that the
// sandbox cannot use swap to exceed its memory limit. The kernel insists
// memsw >= limit at every moment, so the order depends on the direction:
// try memsw first (right when growing); EINVAL means we are shrinking, so
// set the limit first.
func setMemoryV1(dir string, bytes int64) error {
	v := v1Mem(bytes)
	lim := filepath.Join(dir, "memory.limit_in_bytes")
	sw := filepath.Join(dir, "memory.memsw.limit_in_bytes")
	if _, err := os.Stat(sw); err != nil {
		if err := writeFile(lim, v); err != nil {
			return fmt.Errorf("cgroup: set memory.limit_in_bytes: %w", err)
		}
		return nil
	}
	err := writeFile(sw, v)
	if err == nil {
		if err := writeFile(lim, v); err != nil {
			return fmt.Errorf("cgroup: set memory.limit_in_bytes: %w", err)
		}
		return nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("cgroup: set memory.memsw.limit_in_bytes: %w", err)
	}
	if err := writeFile(lim, v); err != nil {
		return fmt.Errorf("cgroup: set memory.limit_in_bytes: %w", err)
	}
	if err := writeFile(sw, v); err != nil {
		return fmt.Errorf("cgroup: set memory.memsw.limit_in_bytes: %w", err)
	}
	return nil
}

func (g *Group) setLimitsV2(l Limits) error {
	outer := withHeadroom(l)
	for _, x := range []struct {
		dir string
		l   Limits
	}{{g.unified, outer}, {filepath.Join(g.unified, workloadGroup), l}} {
		if err := writeFile(filepath.Join(x.dir, "memory.max"), v2Max(x.l.MemoryBytes)); err != nil {
			return fmt.Errorf("cgroup: set memory.max: %w", err)
		}
		// No swap at all: the memory limit is the whole budget. The file
		// is absent when swap accounting is off, and then there is nothing
		// to forbid.
		if err := writeFile(filepath.Join(x.dir, "memory.swap.max"), "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cgroup: set memory.swap.max: %w", err)
		}
		if err := writeFile(filepath.Join(x.dir, "pids.max"), v2Max(x.l.Pids)); err != nil {
			return fmt.Errorf("cgroup: set pids.max: %w", err)
		}
	}
	if err := writeFile(filepath.Join(g.unified, "cpu.max"), v2CPUMax(l.CPU)); err != nil {
		return fmt.Errorf("cgroup: set cpu.max: %w", err)
	}
	return nil
}

// limits reads the limits back from the kernel (for tests and diagnosis).
func (g *Group) limits() (Limits, error) {
	var l Limits
	var err error
	unl := func(v int64) int64 { return max(v, 0) }
	if g.unified != "" {
		d := filepath.Join(g.unified, workloadGroup)
		if l.MemoryBytes, err = readValue(filepath.Join(d, "memory.max")); err != nil {
			return l, err
		}
		if l.Pids, err = readValue(filepath.Join(d, "pids.max")); err != nil {
			return l, err
		}
		b, err := readFile(filepath.Join(g.unified, "cpu.max"))
		if err != nil {
			return l, err
		}
		q, p, err := parseCPUMax(b)
		if err != nil {
			return l, err
		}
		if q > 0 {
			l.CPU = float64(q) / float64(p)
		}
		l.MemoryBytes, l.Pids = unl(l.MemoryBytes), unl(l.Pids)
		return l, nil
	}
	if l.MemoryBytes, err = readValue(filepath.Join(g.memory, workloadGroup, "memory.limit_in_bytes")); err != nil {
		return l, err
	}
	// v1 reports "unlimited" as the page-rounded maximum.
	if l.MemoryBytes >= 1<<62 {
		l.MemoryBytes = 0
	}
	if l.Pids, err = readValue(filepath.Join(g.pids, workloadGroup, "pids.max")); err != nil {
		return l, err
	}
	q, err := readValue(filepath.Join(g.cpu, "cpu.cfs_quota_us"))
	if err != nil {
		return l, err
	}
	p, err := readValue(filepath.Join(g.cpu, "cpu.cfs_period_us"))
	if err != nil {
		return l, err
	}
	if q > 0 && p > 0 {
		l.CPU = float64(q) / float64(p)
	}
	l.MemoryBytes, l.Pids = unl(l.MemoryBytes), unl(l.Pids)
	return l, nil
}

// Stats reads the group's counters: memory and CPU of the whole sandbox
// (agent included), OOM kills and tasks of its workloads.
func (g *Group) Stats() (Stats, error) {
	var s Stats
	var err error
	wrap := func(err error) error { return fmt.Errorf("cgroup: stats of %s: %w", g.id, err) }
	if g.unified != "" {
		d := g.unified
		if s.MemoryBytes, err = readValue(filepath.Join(d, "memory.current")); err != nil {
			return s, wrap(err)
		}
		// memory.peak exists since Linux 5.19.
		if s.MemoryPeakBytes, err = readValue(filepath.Join(d, "memory.peak")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return s, wrap(err)
		}
		w := filepath.Join(d, workloadGroup)
		if s.OOMKills, err = readKey(filepath.Join(w, "memory.events"), "oom_kill"); err != nil {
			return s, wrap(err)
		}
		if s.Pids, err = readValue(filepath.Join(w, "pids.current")); err != nil {
			return s, wrap(err)
		}
		b, err := readFile(filepath.Join(d, "cpu.stat"))
		if err != nil {
			return s, wrap(err)
		}
		u, th, err := cpuStatV2(b)
		if err != nil {
			return s, wrap(err)
		}
		s.CPUUsage, s.CPUThrottled = u, th
		return s, nil
	}
	if s.MemoryBytes, err = readValue(filepath.Join(g.memory, "memory.usage_in_bytes")); err != nil {
		return s, wrap(err)
	}
	if s.MemoryPeakBytes, err = readValue(filepath.Join(g.memory, "memory.max_usage_in_bytes")); err != nil {
		return s, wrap(err)
	}
	if s.OOMKills, err = readKey(filepath.Join(g.memory, workloadGroup, "memory.oom_control"), "oom_kill"); err != nil {
		return s, wrap(err)
	}
	if s.Pids, err = readValue(filepath.Join(g.pids, workloadGroup, "pids.current")); err != nil {
		return s, wrap(err)
	}
	b, err := readFile(filepath.Join(g.cpu, "cpu.stat"))
	if err != nil {
		return s, wrap(err)
	}
	if s.CPUThrottled, err = cpuStatV1(b); err != nil {
		return s, wrap(err)
	}
	if g.cpuacct != "" {
		ns, err := readValue(filepath.Join(g.cpuacct, "cpuacct.usage"))
		if err != nil {
			return s, wrap(err)
		}
		s.CPUUsage = time.Duration(ns)
	}
	return s, nil
}
