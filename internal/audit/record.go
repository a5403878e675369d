package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/wire"
)

// Phases of a record.
const (
	PhaseIntent = "intent" // written before the action; the action waits for it
	PhaseResult = "result" // how the action ended
	PhaseEvent  = "event"  // something that happened on its own (expiry, OOM, repair)
)

// Actions the log writes about itself.
const (
	ActionStart      = "audit.start"
	ActionStop       = "audit.stop"
	ActionCheckpoint = "audit.checkpoint"
	ActionRepair     = "audit.repair"
	ActionPrune      = "audit.prune"
	ActionGap        = "audit.gap"
	// ActionHTTP is the action of API request records (the route is in args).
	ActionHTTP = "http"
)

// ZeroHash is the prev of the first record ever written.
const ZeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

// MaxLineBytes bounds one record on disk; Append keeps records well below
// it (see Redact) and the reader refuses longer lines.
const MaxLineBytes = 1 << 20

// timeLayout is fixed-width (always nine fractional digits, UTC), so that
// times sort as strings and re-encode identically.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Record is one line of the log: the REST API's wire.AuditRecord, one
// type on both sides. Field order is the canonical order: the hash is
// SHA-256 over json.Marshal of the record with Hash empty (the line up to
// `,"hash":`, closed with `}`).
type Record = wire.AuditRecord

// When parses a record's time.
func When(r *Record) time.Time {
	t, _ := time.Parse(timeLayout, r.Time)
	return t
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// hashSuffix is what follows the canonical body on a line:
// `,"hash":"<64 hex>"}`.
const hashSuffixLen = len(`,"hash":""}`) + 64

// encode returns the record's line (with its trailing newline) and hash.
// json.Marshal escapes control characters, so a value can never contain a
// raw newline: one record is always exactly one line, whatever a command
// line or file name holds (a forged record would need a raw '\n').
func encode(r *Record) (line []byte, hash string, err error) {
	r.Hash = ""
	body, err := json.Marshal(r)
	if err != nil {
		return nil, "", fmt.Errorf("encode audit record: %w", err)
	}
	sum := sha256.Sum256(body)
	hash = hex.EncodeToString(sum[:])
	line = make([]byte, 0, len(body)+hashSuffixLen+1)
	line = append(line, body[:len(body)-1]...)
	line = append(line, `,"hash":"`...)
	line = append(line, hash...)
	line = append(line, "\"}\n"...)
	r.Hash = hash
	return line, hash, nil
}

// Errors of ParseLine.
var (
	ErrNotCanonical = errors.New("not in canonical form")
	ErrBadHash      = errors.New("hash does not match the record's contents")
)

// ParseLine parses one line of the log (without its newline) and checks
// that it is canonical and that its hash covers its contents. It does not
// check the chain: that needs the previous record (see Verify).
func ParseLine(line []byte) (Record, error) {
	var r Record
	if len(line) > MaxLineBytes {
		return r, fmt.Errorf("line of %d bytes is over the %d limit", len(line), MaxLineBytes)
	}
	if len(line) < hashSuffixLen+2 || line[0] != '{' || !bytes.HasPrefix(line[len(line)-hashSuffixLen:], []byte(`,"hash":"`)) ||
		!bytes.HasSuffix(line, []byte(`"}`)) {
		return r, fmt.Errorf("%w: the line does not end with its hash", ErrNotCanonical)
	}
	cut := len(line) - hashSuffixLen
	hash := string(line[cut+len(`,"hash":"`) : len(line)-2])
	if !isHex64(hash) {
		return r, fmt.Errorf("%w: the hash is not 64 lowercase hex digits", ErrNotCanonical)
	}
	body := make([]byte, cut+1)
	copy(body, line[:cut])
	body[cut] = '}'
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrNotCanonical, err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("%w: trailing data", ErrNotCanonical)
	}
	// Re-encoding must give the same bytes: this refuses duplicate keys,
	// reordered fields, odd escapes and whitespace — anything two parsers
	// might read differently.
	again, err := json.Marshal(&r)
	if err != nil || !bytes.Equal(again, body) {
		return Record{}, fmt.Errorf("%w: re-encoding differs", ErrNotCanonical)
	}
	if _, err := time.Parse(timeLayout, r.Time); err != nil || len(r.Time) != len(timeLayout) {
		return Record{}, fmt.Errorf("%w: bad time %q", ErrNotCanonical, r.Time)
	}
	if !isHex64(r.Prev) {
		return Record{}, fmt.Errorf("%w: prev is not a hash", ErrNotCanonical)
	}
	if r.Seq == 0 {
		return Record{}, fmt.Errorf("%w: seq 0", ErrNotCanonical)
	}
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != hash {
		return Record{}, ErrBadHash
	}
	r.Hash = hash
	return r, nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
