package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a secret value.
const Redacted = "[REDACTED]"

// Bounds of what one record may carry, so that a megabyte argv or a huge
// spec cannot make the log a disk-filling amplifier.
const (
	maxStringBytes = 4 << 10
	maxArgsBytes   = 64 << 10
	maxDepth       = 32
	maxItems       = 4096
)

// sensitiveWords in a field name mark its value as a secret. An "...id"
// name (key_id, token_id) is an identifier, not a secret, and is kept.
var sensitiveWords = []string{"key", "token", "secret", "passw", "pwd", "authorization", "cookie", "credential", "private", "signature", "bearer"}

// Value patterns: Paddock keys and sandbox tokens, E2B keys, bearer and
// basic credentials, URL userinfo passwords, and NAME=value assignments
// of sensitive names (as in `sh -c "API_KEY=... curl ..."`).
var (
	keyValueRE    = regexp.MustCompile(`\b(pdk|pdt|e2b)_[A-Za-z0-9_\-]{6,}`)
	bearerRE      = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9\-._~+/]{8,}=*`)
	userinfoRE    = regexp.MustCompile(`(://[^/\s:@]+:)[^/\s@]+@`)
	assignRE      = regexp.MustCompile(`(?i)([A-Za-z0-9_\-]*(?:key|token|secret|passw|pwd|credential|auth)[A-Za-z0-9_\-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s"'&;,]+)`)
	headerValueRE = regexp.MustCompile(`(?i)\b(authorization|cookie|x-api-key|api-key|x-auth-token)(\s*:\s*)[^\r\n]+`)
)

// secretRefRE is the name in a secret reference of an inject rule,
// {secret:NAME}: a name, not a value, which the log must keep to say which
// secret a sandbox was given.
var (
	secretRefRE   = regexp.MustCompile(`^[A-Za-z0-9_.\-]+\}`)
	secretValueRE = regexp.MustCompile(`^\{secret:[A-Za-z0-9_.\-]+\}`)
)

// secretRef reports whether an assignment matched by assignRE is such a
// reference: its own "secret:NAME}" or "name={secret:NAME}".
func secretRef(sub []string) bool {
	return (strings.EqualFold(sub[1], "secret") && sub[2] == ":" && secretRefRE.MatchString(sub[3])) ||
		secretValueRE.MatchString(sub[3])
}

// SensitiveName reports whether a field called name holds a secret.
func SensitiveName(name string) bool {
	l := strings.ToLower(name)
	if strings.HasSuffix(l, "id") || strings.HasSuffix(l, "ids") {
		return false
	}
	return containsAny(l, sensitiveWords...)
}

func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// RedactString removes secrets that can be recognised by their shape.
// Each pattern runs only when a cheap test says it could match: this is
// on the path of every exec.
func RedactString(s string) string {
	if len(s) < 5 || !strings.ContainsAny(s, "_:=@ ") { // none of the patterns can match
		return s
	}
	// Replacements only ever insert Redacted, which triggers nothing, so
	// the tests on the original text stay conservative.
	low := strings.ToLower(s)
	if strings.Contains(s, "pdk_") || strings.Contains(s, "pdt_") || strings.Contains(s, "e2b_") {
		s = keyValueRE.ReplaceAllString(s, "${1}_"+Redacted)
	}
	if containsAny(low, "authorization", "cookie", "api-key", "auth-token") {
		s = headerValueRE.ReplaceAllString(s, "${1}${2}"+Redacted)
	}
	if containsAny(low, "bearer", "basic", "token") {
		s = bearerRE.ReplaceAllString(s, "${1}${2}"+Redacted)
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = userinfoRE.ReplaceAllString(s, "${1}"+Redacted+"@")
	}
	if strings.ContainsAny(s, "=:") && containsAny(low, "key", "token", "secret", "passw", "pwd", "credential", "auth") {
		s = assignRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := assignRE.FindStringSubmatch(m)
			if SensitiveName(sub[1]) && !strings.Contains(sub[3], Redacted) && !secretRef(sub) {
				return sub[1] + sub[2] + Redacted
			}
			return m
		})
	}
	return s
}

// Redact returns v as JSON with secrets removed: values of sensitive
// field names are replaced whole, strings are scrubbed of recognisable
// secrets, long strings are cut (keeping their length and a hash of the
// redacted text), and the whole is bounded. The result always decodes.
func Redact(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	if !plain(v, 0) { // structs and the like: through their JSON form
		raw, err := json.Marshal(v)
		if err != nil {
			return mustJSON(map[string]any{"unencodable": err.Error()})
		}
		return RedactJSON(raw)
	}
	if out := bounded(v); out != nil {
		return out
	}
	return mustJSON(map[string]any{"truncated": true})
}

// plain reports whether v is made only of the types walk handles
// directly (what the manager's events hold), sparing the JSON round trip.
func plain(v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch x := v.(type) {
	case nil, string, bool, int, int64, uint64, float64, json.Number, []string, map[string]string:
		return true
	case map[string]any:
		for _, e := range x {
			if !plain(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plain(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// bounded walks tree, cutting strings and lists harder until the result
// fits (nil if it never does).
func bounded(tree any) json.RawMessage {
	for _, c := range []cut{{maxStringBytes, maxItems}, {256, maxItems}, {256, 64}, {64, 16}} {
		out := mustJSON(walk(tree, c, 0))
		if len(out) <= maxArgsBytes {
			return out
		}
	}
	return nil
}

// cut is how hard walk clips: string bytes and list or map items.
type cut struct{ bytes, items int }

// RedactJSON is Redact for a document already encoded.
func RedactJSON(raw []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return mustJSON(map[string]any{"unparsable_bytes": len(raw)})
	}
	if out := bounded(tree); out != nil {
		return out
	}
	// No hash of the raw document here: it holds the secrets.
	return mustJSON(map[string]any{"truncated": true, "bytes": len(raw)})
}

func walk(v any, c cut, depth int) any {
	if depth > maxDepth {
		return "[too deep]"
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		n := 0
		for k, val := range x {
			if n == c.items {
				out["[more]"] = len(x) - n
				break
			}
			n++
			k2 := clip(RedactString(k), 256)
			if SensitiveName(k) && val != nil && val != "" {
				out[k2] = Redacted
				continue
			}
			out[k2] = walk(val, c, depth+1)
		}
		return out
	case []any:
		n := min(len(x), c.items)
		out := make([]any, 0, n+1)
		for _, e := range x[:n] {
			out = append(out, walk(e, c, depth+1))
		}
		if len(x) > n {
			out = append(out, fmt.Sprintf("[%d more]", len(x)-n))
		}
		return out
	case []string:
		n := min(len(x), c.items)
		out := make([]any, 0, n+1)
		for _, e := range x[:n] {
			out = append(out, clip(RedactString(e), c.bytes))
		}
		if len(x) > n {
			out = append(out, fmt.Sprintf("[%d more]", len(x)-n))
		}
		return out
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[k] = val
		}
		return walk(m, c, depth)
	case string:
		return clip(RedactString(x), c.bytes)
	default:
		return v
	}
}

// clip cuts s to about limit bytes on a rune boundary, saying how much
// was dropped and hashing the (redacted) whole so that an auditor can
// still match it against a copy.
func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%s…[%d bytes cut; sha256 %s]", s[:cut], len(s)-cut, hex.EncodeToString(sum[:8]))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{"unencodable":true}`)
	}
	return b
}
