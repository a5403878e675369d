package tenant

import "strings"

// normalizeDomain lower-cases d and strips a trailing dot, and reports
// whether it is a host name or a "*." wildcard over one: labels of
// letters, digits, '-' and '_' (1–63 each, 253 in all), the wildcard only
// as the whole first label.
func normalizeDomain(d string) (string, bool) {
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	rest := strings.TrimPrefix(d, "*.")
	if rest == "" || len(rest) > 253 {
		return "", false
	}
	for _, label := range strings.Split(rest, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return d, true
}

// covered reports whether the domain (or wildcard) want is inside the
// normalised patterns allowed: "example.com" covers exactly itself;
// "*.example.com" covers every name below example.com (not example.com
// itself) and every wildcard below it.
func covered(want string, allowed []string) bool {
	w, ok := normalizeDomain(want)
	if !ok {
		return false
	}
	for _, a := range allowed {
		if a == w {
			return true
		}
		if suffix, wild := strings.CutPrefix(a, "*"); wild { // suffix is ".example.com"
			name := strings.TrimPrefix(w, "*")
			// "*.x.example.com" → ".x.example.com", which must end in the
			// suffix; a plain name must too and be longer than it.
			if strings.HasSuffix(name, suffix) && (len(name) > len(suffix) || strings.HasPrefix(w, "*")) {
				return true
			}
		}
	}
	return false
}
