// Package disk provides the writable layers of sandboxes: one directory per
// sandbox with a hard size and inode quota, on which the guest puts its
// overlay upper and work directories.
//
// The default store is an XFS filesystem in a sparse image file under the
// data directory, loop-mounted with project quotas: each layer directory is
// its own project, so a sandbox that fills its layer gets ENOSPC (XFS reports
// project-quota exhaustion as ENOSPC) while the host's disk and every other
// sandbox are untouched, and the image file itself can never grow past its
// size. Where XFS or loop devices are unavailable, the tmpfs store mounts a
// size-limited tmpfs per layer instead (its pages are then charged to the
// sandbox's memory cgroup).
package disk
