//go:build linux

package cgroup

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// FavorDynMods remounts the cgroup2 hierarchy (if one is mounted) with
// favordynmods, keeping its other options.
//
// Every migration into a cgroup — including the v1 hierarchies, because the
// lock is global — otherwise waits for an RCU grace period: several
// milliseconds per sandbox start. favordynmods keeps the lock in its
// writer-friendly mode, at the price of slightly slower fork and exit. It
// reports whether it changed anything.
func FavorDynMods() (bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, sf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(sf) < 3 || sf[0] != "cgroup2" {
			continue
		}
		mp, err := unescapeMount(pf[4])
		if err != nil {
			continue
		}
		var keep []string
		for _, o := range strings.Split(sf[2], ",") {
			switch o {
			case "favordynmods":
				return false, nil
			case "rw", "ro", "":
			default:
				keep = append(keep, o)
			}
		}
		keep = append(keep, "favordynmods")
		if err := unix.Mount("", mp, "", unix.MS_REMOUNT, strings.Join(keep, ",")); err != nil {
			return false, fmt.Errorf("cgroup: remount %s with favordynmods: %w", mp, err)
		}
		return true, nil
	}
	return false, nil
}
