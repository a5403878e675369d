package sandboxrunner

import "golang.org/x/sys/unix"

// opaque reports an overlay directory marked opaque (the extractor marks
// "user.overlay.opaque" or, as real root, "trusted.overlay.opaque").
func opaque(p string) bool {
	buf := make([]byte, 8)
	for _, a := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		if n, err := unix.Lgetxattr(p, a, buf); err == nil && n > 0 && buf[0] == 'y' {
			return true
		}
	}
	return false
}
