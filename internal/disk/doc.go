// Package disk provides the writable layers of sandboxes: one directory per
// sandbox with a hard size and inode quota, on which the guest puts its
// overlay upper and work directories.
//
// The default store is an XFS filesystem in a sparse image file under the
// data directory, loop-mounted with project quotas: each layer directory is
// its own project, so a sandbox that fills its layer gets ENOSPC (XFS reports
// project-quota exhaustion as ENOSPC) while the host's disk and every other
// sandbox are untouched, and the image file itself can never grow past its
// size. It needs a kernel whose XFS has quota support (CONFIG_XFS_QUOTA) and
// mkfs.xfs (xfsprogs) for the first start.
//
// Where XFS quotas or loop devices are unavailable, Open returns no store
// and says why; the runtime then mounts a size- and inode-limited tmpfs per
// sandbox inside that sandbox's own mount namespace (its pages are charged
// to the sandbox's memory cgroup, and nothing of it is left in the host's
// mount table).
//
// Layer ids are restricted to [a-z0-9_-]{1,64}, so an id is always a single
// path component. Remove works through directory fds and never follows a
// symlink or crosses a mount point, so a hostile sandbox cannot turn the
// cleanup of its layer against the host. docs/disk.md describes the design
// and its limits.
package disk
