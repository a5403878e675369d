package layers

import "strings"

const (
	maxPathLen      = 4096
	maxNameLen      = 255
	maxPathDepth    = 128
	whiteoutPrefix  = ".wh."
	whiteoutOpaque  = ".wh..wh..opq"
	whiteoutMetaPre = ".wh..wh." // aufs bookkeeping (.wh..wh.plnk, ...)
)

// CleanName turns a tar entry name into a slash-separated path relative
// to the layer root ("" for the root itself). It refuses absolute paths,
// any ".." component, NUL bytes and over-long names or components rather
// than resolving them: a name that needs resolving is hostile
// (path traversal, CVE-2018-15664 / "zip slip" class).
func CleanName(name string) (string, bool) {
	if len(name) > maxPathLen || strings.IndexByte(name, 0) >= 0 {
		return "", false
	}
	if strings.HasPrefix(name, "/") {
		return "", false
	}
	var parts []string
	for _, c := range strings.Split(name, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return "", false
		}
		if len(c) > maxNameLen {
			return "", false
		}
		parts = append(parts, c)
	}
	if len(parts) > maxPathDepth {
		return "", false
	}
	return strings.Join(parts, "/"), true
}

// splitPath returns the parent ("" for the root) and the last component.
func splitPath(p string) (dir, base string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}
