package browser

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
)

// What an action's element is found by.
const (
	byCSS  = "css"
	byText = "text"
	byRef  = "ref"
)

const (
	maxSelector = 4096
	maxRefs     = 5000 // references one snapshot hands out
)

// selector is a parsed wire.Target.
type selector struct {
	kind  string
	value string
}

func (s selector) String() string {
	switch s.kind {
	case byText:
		return "text=" + strconv.Quote(clipText(s.value, 80))
	case byRef:
		return "ref=" + s.value
	}
	return strconv.Quote(clipText(s.value, 120))
}

// ParseSelector reads the selector syntax of the CLI and of
// wire.Target.Selector: "text=Visible text", "ref=e12" (from a snapshot),
// "css=..." or a plain CSS selector.
func ParseSelector(s string) (kind, value string, err error) {
	sel, err := parseSelector(s)
	return sel.kind, sel.value, err
}

func parseSelector(s string) (selector, error) {
	if len(s) > maxSelector {
		return selector{}, errs.Invalid("selector over %d bytes", maxSelector)
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return selector{}, errs.Invalid("selector must be UTF-8 text without NUL bytes")
	}
	switch {
	case strings.HasPrefix(s, "text="):
		return textSelector(s[len("text="):])
	case strings.HasPrefix(s, "ref="):
		return refSelector(s[len("ref="):])
	case strings.HasPrefix(s, "css="):
		s = s[len("css="):]
	}
	if strings.TrimSpace(s) == "" {
		return selector{}, errs.Invalid("empty selector")
	}
	return selector{kind: byCSS, value: s}, nil
}

func textSelector(v string) (selector, error) {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		v = v[1 : len(v)-1]
	}
	if strings.TrimSpace(v) == "" {
		return selector{}, errs.Invalid("empty text selector")
	}
	return selector{kind: byText, value: v}, nil
}

// refSelector accepts "e12" (and "[ref=e12]" as pasted from a snapshot).
func refSelector(v string) (selector, error) {
	v = strings.TrimSpace(v)
	v = strings.TrimSuffix(strings.TrimPrefix(v, "[ref="), "]")
	n, ok := strings.CutPrefix(v, "e")
	if i, err := strconv.Atoi(n); !ok || err != nil || i < 1 || i > maxRefs || strconv.Itoa(i) != n {
		return selector{}, errs.Invalid("ref %q is not a snapshot reference (e1, e2, ...)", clipText(v, 32))
	}
	return selector{kind: byRef, value: v}, nil
}

// targetOf reads a wire.Target: exactly one of its fields (required says
// whether none is an error).
func targetOf(t wire.Target, required bool) (selector, bool, error) {
	n := 0
	for _, f := range []string{t.Selector, t.Text, t.Ref} {
		if f != "" {
			n++
		}
	}
	switch {
	case n == 0 && required:
		return selector{}, false, errs.Invalid("name the element: selector (CSS, or text=..., ref=...), text or ref")
	case n == 0:
		return selector{}, false, nil
	case n > 1:
		return selector{}, false, errs.Invalid("give one of selector, text and ref")
	}
	var sel selector
	var err error
	switch {
	case t.Selector != "":
		sel, err = parseSelector(t.Selector)
	case t.Text != "":
		if len(t.Text) > maxSelector || !utf8.ValidString(t.Text) {
			return selector{}, false, errs.Invalid("text must be UTF-8 under %d bytes", maxSelector)
		}
		sel, err = textSelector(t.Text)
	default:
		sel, err = refSelector(t.Ref)
	}
	return sel, err == nil, err
}
