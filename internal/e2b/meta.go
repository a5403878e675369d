package e2b

import (
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// File metadata (envd 0.6.2): each upload's X-Metadata-<key> headers
// replace the file's metadata, returned with the file's EntryInfo. As in
// envd, it is kept on the file, in "user.e2b.*" extended attributes
// (through the manager's files API; the sandbox's guest writes them): it
// survives server restarts, moves with the file, and a command in the
// sandbox sees it with getfattr. Unlike envd's, the bounds below (the
// sandbox's, tighter for keys) hold per file.
const (
	metaHeaderPrefix = "x-metadata-"
	metaNamespace    = "e2b"
	metaXattrPrefix  = len("user.e2b.") // counted per key, as envd does
	maxMetaKey       = sandbox.MaxMetadataKeyBytes
	maxMetaKeys      = sandbox.MaxMetadataKeys
	maxMetaPerFile   = 4096 // a filesystem block: what ext4 keeps in its inode's xattr block
)

// parseMetadataHeaders reads the X-Metadata-* headers of an upload: keys
// lower-cased, the first value of a repeated header, printable ASCII only.
func parseMetadataHeaders(h http.Header) (map[string]string, error) {
	var out map[string]string
	total := 0
	for name, vals := range h {
		lower := strings.ToLower(name)
		key, ok := strings.CutPrefix(lower, metaHeaderPrefix)
		if !ok {
			continue
		}
		if key == "" || len(key) > maxMetaKey {
			return nil, errs.Invalid("metadata keys are 1..%d bytes", maxMetaKey)
		}
		if !printable(key) {
			return nil, errs.Invalid("metadata key %s: printable US-ASCII only", quoteText(key))
		}
		if _, dup := out[key]; dup {
			continue // X-Metadata-A and x-metadata-a: the first wins
		}
		if len(out) >= maxMetaKeys {
			return nil, errs.Invalid("a file has at most %d metadata keys", maxMetaKeys)
		}
		v := ""
		if len(vals) > 0 {
			v = vals[0]
		}
		if !printable(v) {
			return nil, errs.Invalid("metadata value of %s: printable US-ASCII only", quoteText(key))
		}
		total += metaXattrPrefix + len(key) + len(v)
		if total > maxMetaPerFile {
			return nil, errs.Invalid("a file's metadata is at most %d bytes (keys, values and %d bytes per key)", maxMetaPerFile, metaXattrPrefix)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[key] = v
	}
	return out, nil
}

// printable admits 0x20..0x7e: no CR/LF (header and log injection), no
// NUL, nothing a terminal would interpret.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
