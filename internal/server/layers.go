package server

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/sandbox"
)

// TmpfsDefaultDiskMB is a sandbox's disk by default where writable layers
// are tmpfs: RAM, so smaller than on disk (1 GiB there).
const TmpfsDefaultDiskMB = 256

// layerRAM returns the RAM writable layers may take together (0: they are
// on disk). Where they are tmpfs (memory exhaustion: a 64 MiB sandbox got
// a 64 GiB layer on a 24 GiB host) it is the host's RAM, and the default
// limits (unless the caller gave its own) take a smaller default disk and
// at most that much per sandbox.
func (s *Server) layerRAM(limits *sandbox.Limits, given bool) int64 {
	if s.LayerKind != "tmpfs" {
		return 0
	}
	ram := hostMemoryMB()
	if ram <= 0 {
		return 0
	}
	if !given {
		limits.Default.DiskMB = min(limits.Default.DiskMB, TmpfsDefaultDiskMB)
		limits.MaxDiskMB = min(limits.MaxDiskMB, ram)
	}
	s.log.Info("writable layers are RAM: their disk counts against memory quotas and the host's memory",
		"host_memory_mb", ram, "default_disk_mb", limits.Default.DiskMB, "max_disk_mb", limits.MaxDiskMB)
	return ram
}

// hostMemoryMB is MemTotal from /proc/meminfo, in MiB (0 if unknown).
func hostMemoryMB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb >> 10
		}
	}
	return 0
}
