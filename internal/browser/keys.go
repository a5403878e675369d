package browser

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/chromedp/chromedp/kb"

	"github.com/paddockhq/paddock/internal/errs"
)

// keyCombo is a key with modifiers, as in "Control+Shift+K".
type keyCombo struct {
	r    rune // the key, as chromedp's kb package encodes it
	mods kb.Modifier
	name string
}

var keyAliases = map[string]string{
	"esc": "escape", "return": "enter", "del": "delete", "space": " ", "spacebar": " ",
	"up": "arrowup", "down": "arrowdown", "left": "arrowleft", "right": "arrowright",
	"pgup": "pageup", "pgdn": "pagedown", "ins": "insert",
}

var modifierNames = map[string]kb.Modifier{
	"control": kb.ModifierCtrl, "ctrl": kb.ModifierCtrl,
	"shift": kb.ModifierShift,
	"alt":   kb.ModifierAlt, "option": kb.ModifierAlt,
	"meta": kb.ModifierMeta, "cmd": kb.ModifierMeta, "command": kb.ModifierMeta, "super": kb.ModifierMeta,
}

// keyNames maps lower-case key names and codes ("enter", "arrowdown",
// "keya", "f5") to the rune kb encodes them by.
var keyNames = sync.OnceValue(func() map[string]rune {
	m := map[string]rune{}
	put := func(name string, r rune) {
		name = strings.ToLower(name)
		if old, ok := m[name]; !ok || r < old {
			m[name] = r
		}
	}
	for r, k := range kb.Keys {
		if utf8.RuneCountInString(k.Key) > 1 { // named keys: Enter, ArrowDown...
			put(k.Key, r)
		}
		if k.Code != "" && !k.Shift {
			put(k.Code, r)
		}
	}
	return m
})

// parseKey reads "Enter", "a", "Control+A", "Shift+Tab", "Meta+ArrowLeft".
func parseKey(s string) (keyCombo, error) {
	if s == "" || len(s) > 64 || !utf8.ValidString(s) {
		return keyCombo{}, errs.Invalid("key must be a key name such as Enter, Tab, ArrowDown, a or Control+A")
	}
	parts := strings.Split(s, "+")
	// "+" itself, or "Control++".
	if strings.HasSuffix(s, "++") || s == "+" {
		parts = append(parts[:len(parts)-2], "+")
	}
	var k keyCombo
	for i, p := range parts {
		last := i == len(parts)-1
		if !last {
			m, ok := modifierNames[strings.ToLower(strings.TrimSpace(p))]
			if !ok {
				return keyCombo{}, errs.Invalid("%q is not a modifier (Control, Shift, Alt, Meta)", clipText(p, 32))
			}
			k.mods |= m
			continue
		}
		if utf8.RuneCountInString(p) == 1 {
			r, _ := utf8.DecodeRuneInString(p)
			k.r, k.name = r, p
			break
		}
		name := strings.ToLower(strings.TrimSpace(p))
		if a, ok := keyAliases[name]; ok {
			name = a
		}
		if utf8.RuneCountInString(name) == 1 {
			r, _ := utf8.DecodeRuneInString(name)
			k.r, k.name = r, p
			break
		}
		r, ok := keyNames()[name]
		if !ok {
			return keyCombo{}, errs.Invalid("unknown key %q (Enter, Tab, Escape, Backspace, Delete, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, F1..F12, or one character)", clipText(p, 32))
		}
		k.r, k.name = r, p
	}
	if k.r == 0 {
		return keyCombo{}, errs.Invalid("key %q names no key", clipText(s, 64))
	}
	return k, nil
}

// modifierList is mods as chromedp's KeyModifiers takes them.
func (k keyCombo) modifierList() []kb.Modifier {
	var out []kb.Modifier
	for _, m := range []kb.Modifier{kb.ModifierAlt, kb.ModifierCtrl, kb.ModifierMeta, kb.ModifierShift} {
		if k.mods&m != 0 {
			out = append(out, m)
		}
	}
	return out
}
