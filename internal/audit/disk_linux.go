//go:build linux

package audit

import "golang.org/x/sys/unix"

// volumeSpace is the free (for an unprivileged writer) and total bytes of
// the file system holding dir.
func volumeSpace(dir string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}
