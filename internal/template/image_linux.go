package template

import "golang.org/x/sys/unix"

// isOpaqueDir reports an overlay opaque mark on a layer directory.
func isOpaqueDir(p string) bool {
	buf := make([]byte, 2)
	for _, x := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		if n, err := unix.Lgetxattr(p, x, buf); err == nil && n == 1 && buf[0] == 'y' {
			return true
		}
	}
	return false
}
