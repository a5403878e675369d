package files

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// Writes, edits and extractions build their result under a private name
// next to the target and rename it into place (nothing half-written is ever
// seen under the real name). Those names are the agent's own business:
// watchers never report them, and report the rename as what the caller
// did — a write of the target, and its creation when it did not exist
// (what E2B's envd, which writes in place, reports). The name carries that
// last fact, so a watcher need not guess it after the fact:
//
//	.BASE.paddock-<16 hex>.tmp   replaces an existing BASE
//	.BASE.paddock-<16 hex>.new   BASE did not exist
const (
	tempMark     = ".paddock-"
	tempReplaces = ".tmp"
	tempCreates  = ".new"
	tempHexLen   = 16
)

// tempName is a fresh private name for base.
func tempName(base string, fresh bool) string {
	prefix := "." + base
	if len(prefix) > guestapi.MaxNameLen-30 {
		prefix = prefix[:guestapi.MaxNameLen-30]
	}
	suffix := tempReplaces
	if fresh {
		suffix = tempCreates
	}
	return prefix + tempMark + randHex() + suffix
}

// isTempName says whether name is one of tempName's, and whether its
// target was new.
func isTempName(name string) (fresh, ok bool) {
	var rest string
	switch {
	case strings.HasSuffix(name, tempCreates):
		fresh, rest = true, strings.TrimSuffix(name, tempCreates)
	case strings.HasSuffix(name, tempReplaces):
		rest = strings.TrimSuffix(name, tempReplaces)
	default:
		return false, false
	}
	i := len(rest) - tempHexLen - len(tempMark)
	if !strings.HasPrefix(name, ".") || i < 1 || rest[i:i+len(tempMark)] != tempMark {
		return false, false
	}
	for _, c := range rest[i+len(tempMark):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false, false
		}
	}
	return fresh, true
}

func randHex() string {
	var b [tempHexLen / 2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
