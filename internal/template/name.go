package template

import "strconv"

// MaxNameLen is the longest template name accepted.
const MaxNameLen = 63

// ValidName reports whether name matches ^[a-z0-9][a-z0-9._-]{0,62}$.
// The first character can never be '.', so a valid name is never ".", ".."
// or one of the registry's hidden staging entries, and it never contains a
// path separator (path traversal out of DATA/templates).
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// quoteName renders a caller-supplied name for an error message, bounded
// so a hostile request cannot make the message arbitrarily large.
func quoteName(name string) string {
	const max = MaxNameLen + 1
	if len(name) > max {
		name = name[:max] + "..."
	}
	return strconv.Quote(name)
}
