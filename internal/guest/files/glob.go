package files

import (
	"path"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
)

// glob matches slash-separated relative paths against a pattern: within a
// name * ? [a-z] and \-escapes (path.Match), {a,b} alternatives, and a
// whole-name ** for any number of directories (including none). Matching
// is an NFA over the pattern's names, so it costs O(names × pattern) with
// no backtracking blow-up.
type glob struct {
	alts [][]string // brace-expanded alternatives, split into names
}

// maxGlobAlts bounds brace expansion ({a,b}{c,d}... multiplies).
const maxGlobAlts = 256

func compileGlob(pattern string) (*glob, error) {
	if pattern == "" {
		return nil, errs.Invalid("pattern is empty")
	}
	if len(pattern) > 4096 {
		return nil, errs.Invalid("pattern is longer than 4096 bytes")
	}
	if strings.HasPrefix(pattern, "/") {
		return nil, errs.Invalid("pattern %q is matched against paths relative to the search directory; drop the leading /", clip(pattern))
	}
	alts, err := expandBraces(pattern, 0)
	if err != nil {
		return nil, err
	}
	g := &glob{}
	for _, a := range alts {
		var segs []string
		for _, s := range strings.Split(a, "/") {
			if s == "" || s == "." {
				continue
			}
			if s != "**" {
				if _, err := path.Match(s, ""); err != nil {
					return nil, errs.Invalid("pattern %q is malformed (unbalanced [ ] or trailing \\)", clip(pattern))
				}
			}
			// Consecutive ** are one.
			if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
				continue
			}
			segs = append(segs, s)
		}
		if len(segs) == 0 {
			return nil, errs.Invalid("pattern %q matches nothing", clip(pattern))
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// expandBraces expands the first top-level {a,b} group, recursively.
func expandBraces(p string, depth int) ([]string, error) {
	if depth > 16 {
		return nil, errs.Invalid("pattern nests { } too deeply")
	}
	start, end := -1, -1
	level := 0
	var commas []int
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			// Braces inside a character class are literal.
			if j := strings.IndexByte(p[i+1:], ']'); j >= 0 {
				i += j + 1
			}
		case '{':
			if level == 0 {
				start = i
				commas = commas[:0]
			}
			level++
		case ',':
			if level == 1 {
				commas = append(commas, i)
			}
		case '}':
			if level == 0 {
				return nil, errs.Invalid("pattern has an unbalanced }")
			}
			level--
			if level == 0 {
				end = i
			}
		}
		if end >= 0 {
			break
		}
	}
	if level != 0 {
		return nil, errs.Invalid("pattern has an unbalanced {")
	}
	if start < 0 {
		return []string{p}, nil
	}
	pre, post := p[:start], p[end+1:]
	var opts []string
	last := start + 1
	for _, c := range commas {
		opts = append(opts, p[last:c])
		last = c + 1
	}
	opts = append(opts, p[last:end])
	var out []string
	for _, o := range opts {
		rest, err := expandBraces(pre+o+post, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxGlobAlts {
			return nil, errs.Invalid("pattern expands to more than %d alternatives", maxGlobAlts)
		}
	}
	return out, nil
}

// states is a set of positions in one alternative's names.
type states []int

// closure adds, for each ** position, the position after it (** matching
// no name).
func closure(segs []string, s states) states {
	for i := 0; i < len(s); i++ {
		if p := s[i]; p < len(segs) && segs[p] == "**" && !hasState(s, p+1) {
			s = append(s, p+1)
		}
	}
	return s
}

func hasState(s states, p int) bool {
	for _, q := range s {
		if q == p {
			return true
		}
	}
	return false
}

// step consumes one name.
func step(segs []string, s states, name string) states {
	var out states
	for _, p := range closure(segs, s) {
		if p >= len(segs) {
			continue
		}
		if segs[p] == "**" {
			// ** does not match names starting with "." only when written
			// so; it matches every name here, hidden ones included.
			if !hasState(out, p) {
				out = append(out, p)
			}
			continue
		}
		if ok, _ := path.Match(segs[p], name); ok && !hasState(out, p+1) {
			out = append(out, p+1)
		}
	}
	return out
}

// run feeds the names of rel through one alternative.
func run(segs []string, rel string) states {
	s := states{0}
	if rel == "" || rel == "." {
		return closure(segs, s)
	}
	for _, name := range strings.Split(rel, "/") {
		s = step(segs, s, name)
		if len(s) == 0 {
			return nil
		}
	}
	return closure(segs, s)
}

// Match reports whether rel (relative, slash-separated) matches.
func (g *glob) Match(rel string) bool {
	for _, segs := range g.alts {
		if hasState(run(segs, rel), len(segs)) {
			return true
		}
	}
	return false
}

// Below reports whether some path inside the directory rel could match,
// so a walk can skip directories that cannot.
func (g *glob) Below(rel string) bool {
	for _, segs := range g.alts {
		for _, p := range run(segs, rel) {
			if p < len(segs) {
				return true
			}
		}
	}
	return false
}

// clip shortens s for an error message.
var clip = rpc.Clip
