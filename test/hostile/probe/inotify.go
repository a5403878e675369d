//go:build linux

package main

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	// Shared kernel counters (ucounts): create inotify instances until
	// the kernel refuses (at most args[0], 100000 by default), hold them
	// args[1] seconds, report how many were made and the refusal's errno.
	ops["inotify-hold"] = func(args []string) report {
		max, hold := intArg(args, 0, 100000), intArg(args, 1, 0)
		var fds []int
		r := report{OK: true}
		for len(fds) < max {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err != nil {
				r = result(err, "inotify_init1")
				break
			}
			fds = append(fds, fd)
		}
		r.Count = len(fds)
		r.Detail = fmt.Sprintf("%s; %d instances held %ds", r.Detail, len(fds), hold)
		time.Sleep(time.Duration(hold) * time.Second)
		for _, fd := range fds {
			unix.Close(fd)
		}
		return r
	}
}
