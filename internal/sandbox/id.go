package sandbox

import (
	"crypto/rand"
	"encoding/base32"
	"regexp"
	"strings"
)

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns "sb-" and 26 characters carrying 128 random bits: opaque,
// URL-safe, a valid hostname, and unguessable.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "sb-" + idEncoding.EncodeToString(b[:])
}

var idRE = regexp.MustCompile(`^sb-[a-z2-7]{26}$`)

// ValidID reports whether s has the shape of a sandbox id.
func ValidID(s string) bool {
	return len(s) == 29 && strings.HasPrefix(s, "sb-") && idRE.MatchString(s)
}
