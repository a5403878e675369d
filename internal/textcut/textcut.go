// Package textcut makes cut text safe to show: invalid UTF-8 becomes
// U+FFFD, and a multi-byte sequence cut at either end of a piece is
// dropped rather than shown as a broken character. The guest (line
// ranges) and the MCP tools (output kept head and tail) both cut text; it
// is a leaf of the standard library only, so the lean guest may link it.
package textcut

import (
	"strings"
	"unicode/utf8"
)

// Valid is s with each invalid UTF-8 sequence (binary output) replaced by
// U+FFFD: safe to put in a JSON string.
func Valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// TrimPartialEnd drops an incomplete UTF-8 sequence cut at the end of b.
func TrimPartialEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b // ASCII: nothing cut
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// TrimPartialStart drops the continuation bytes of a sequence cut at the
// start of b.
func TrimPartialStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
