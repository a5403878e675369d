package guestapi

import (
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
)

// File service of the guest: its types and limits (the client is in
// files_client.go).

// Path limits, as Linux has them (PATH_MAX, NAME_MAX).
const (
	MaxPathLen = 4096
	MaxNameLen = 255
	// Workspace is where relative paths are resolved.
	Workspace = "/workspace"
)

// Entry types of FileInfo.Type and FileEvent.Entry.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other" // FIFO, socket, device
)

// Watch event types.
const (
	EventReady    = "ready" // watches are in place; later changes are reported
	EventCreate   = "create"
	EventWrite    = "write"
	EventRemove   = "remove"
	EventRename   = "rename"
	EventOverflow = "overflow" // events were lost (slow reader or kernel queue full)
	EventError    = "error"    // the stream broke off (last event)
)

// Bounds and defaults of the file service. The host clamps requests to
// these; the guest enforces them again.
const (
	DefaultListLimit     = 10000
	MaxListLimit         = 100000
	MaxListDepth         = 64
	DefaultFindLimit     = 1000
	MaxFindLimit         = 100000
	DefaultSearchLimit   = 1000
	MaxSearchLimit       = 100000
	DefaultSearchMaxFile = 10 << 20
	MaxSearchMaxFile     = 1 << 30
	MaxSearchLineBytes   = 1000 // longer matching lines are cut (Truncated set)
	MaxPatternLen        = 4096
	MaxEditBytes         = 64 << 20
	DefaultMaxEntries    = 200000 // archive upload
	DefaultMaxRatio      = 200    // archive upload: bytes expanded per byte received
	MaxWatchDirs         = 8192
)

// FileInfo describes one file, as lstat(2) sees it (a symlink is reported
// as a symlink, with its target).
type FileInfo struct {
	Name   string    `json:"name"`
	Path   string    `json:"path"`
	Type   string    `json:"type"` // file, dir, symlink, other
	Size   int64     `json:"size"`
	Mode   string    `json:"mode"` // octal permission bits incl. setuid/setgid/sticky, e.g. "0644"
	MTime  time.Time `json:"mtime"`
	Target string    `json:"target,omitempty"` // symlink target, verbatim
	UID    int       `json:"uid"`
	GID    int       `json:"gid"`
	// Metadata is the file's metadata in the namespace the request named
	// (see MetadataRequest), when it asked for one.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Perm returns Mode as a number (0 if malformed).
func (f FileInfo) Perm() os.FileMode {
	v, err := strconv.ParseUint(f.Mode, 8, 32)
	if err != nil {
		return 0
	}
	m := os.FileMode(v & 0o777)
	if v&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	if v&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	if v&0o1000 != 0 {
		m |= os.ModeSticky
	}
	return m
}

// ParseMode parses an octal mode such as "644", "0644" or "0o755". Only
// permission and sticky bits are accepted: setuid and setgid are refused.
func ParseMode(s string) (uint32, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
	if t == "" || len(t) > 5 {
		return 0, errs.Invalid("mode %q is not an octal number such as 0644", clipStr(s))
	}
	v, err := strconv.ParseUint(t, 8, 32)
	if err != nil {
		return 0, errs.Invalid("mode %q is not an octal number such as 0644", clipStr(s))
	}
	if v&^0o7777 != 0 {
		return 0, errs.Invalid("mode %q has bits outside 07777", clipStr(s))
	}
	// Setuid/setgid files are what a privilege escalation inside the
	// sandbox would need; nobody needs the files API to make them.
	if v&0o6000 != 0 {
		return 0, errs.Invalid("mode %q sets setuid/setgid bits, which the files API does not create", clipStr(s))
	}
	return uint32(v), nil
}

// CleanPath validates a caller's path and makes it absolute in the
// sandbox: relative paths are taken from /workspace. NUL bytes, ".."
// components (lexical cleaning of "a/../b" disagrees with the kernel when a
// is a symlink, so the caller must say what they mean), paths over 4096
// bytes and names over 255 are refused with an error saying which.
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", errs.Invalid("path is empty")
	}
	if len(p) > MaxPathLen {
		return "", errs.Invalid("path is longer than %d bytes", MaxPathLen)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errs.Invalid("path %q contains a NUL byte", clipStr(p))
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return "", errs.Invalid("path %q contains a \"..\" component; give the path without it", clipStr(p))
		}
		if len(c) > MaxNameLen {
			return "", errs.Invalid("path %q has a name longer than %d bytes", clipStr(p), MaxNameLen)
		}
	}
	if !strings.HasPrefix(p, "/") {
		p = Workspace + "/" + p
	}
	p = path.Clean(p)
	if len(p) > MaxPathLen {
		return "", errs.Invalid("path is longer than %d bytes", MaxPathLen)
	}
	return p, nil
}

func clipStr(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// ReadRequest reads a file's bytes. Offset and Length select a range;
// Length <= 0 reads to the end. Suffix > 0 reads the last Suffix bytes
// instead (an HTTP "bytes=-N" range).
type ReadRequest struct {
	Path   string `json:"path"`
	User   string `json:"user,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	Length int64  `json:"length,omitempty"`
	Suffix int64  `json:"suffix,omitempty"`
}

// FileReader is an open read: Body yields Length bytes starting at Offset
// of a file of Size bytes. Close it.
type FileReader struct {
	Body   io.ReadCloser
	Size   int64
	Offset int64
	Length int64
	Mode   string
	MTime  time.Time
}

// RangeError is a read range that starts past the end of the file.
type RangeError struct {
	Size int64 // the file's size
	Err  error
}

func (e *RangeError) Error() string { return e.Err.Error() }

// Unwrap exposes the coded error.
func (e *RangeError) Unwrap() error { return e.Err }

// WriteRequest writes a whole file from a raw body: the bytes go to a
// temporary file in the same directory, renamed over Path only when all of
// them arrived. Mode "" keeps an existing file's mode (0644 for a new one).
//
// The new file keeps the old one's extended attributes (user.* only),
// except that a non-empty Metadata (or ReplaceMetadata) makes those of
// MetadataNamespace (DefaultMetadataNamespace if empty) exactly Metadata.
type WriteRequest struct {
	Path     string `json:"path"`
	User     string `json:"user,omitempty"`
	Mode     string `json:"mode,omitempty"`
	Parents  bool   `json:"parents,omitempty"`
	MaxBytes int64  `json:"max_bytes,omitempty"` // 0: no cap beyond the disk
	Owner    string `json:"owner,omitempty"`     // with User root: who the file (and parents made) belong to

	Metadata          map[string]string `json:"metadata,omitempty"`
	MetadataNamespace string            `json:"metadata_namespace,omitempty"`
	// ReplaceMetadata with an empty Metadata removes the namespace's
	// metadata (an empty map alone does not survive encoding).
	ReplaceMetadata bool `json:"replace_metadata,omitempty"`
}

// StatRequest describes one path (Follow: the symlink's target instead).
// Metadata names a metadata namespace to report ("": none).
type StatRequest struct {
	Path     string `json:"path"`
	User     string `json:"user,omitempty"`
	Follow   bool   `json:"follow,omitempty"`
	Metadata string `json:"metadata,omitempty"`
}

// ListRequest lists a directory, Depth levels deep (1: its entries).
// Metadata names a metadata namespace to report for each entry ("":
// none; it costs a system call or more per entry).
type ListRequest struct {
	Path     string `json:"path"`
	User     string `json:"user,omitempty"`
	Depth    int    `json:"depth,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	Metadata string `json:"metadata,omitempty"`
}

// File metadata is kept on the file itself, as extended attributes named
// user.<namespace>.<key> (E2B's are user.e2b.*): it survives restarts and
// moves with the file, and a workload sees and sets it with getfattr and
// setfattr. The bounds are the guest's, per namespace and file.
const (
	DefaultMetadataNamespace = "paddock"
	MaxMetadataKeys          = 64
	MaxMetadataKeyBytes      = 200
	MaxMetadataValueBytes    = 4096
	MaxMetadataBytes         = 16 << 10 // keys (with their attribute prefix) and values
)

// MetadataRequest replaces the metadata of the file (or directory) at
// Path, following symlinks, in Namespace (DefaultMetadataNamespace if
// empty): afterwards it holds exactly Metadata (nil or empty: none).
type MetadataRequest struct {
	Path      string            `json:"path"`
	User      string            `json:"user,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Metadata  map[string]string `json:"metadata"`
}

// ValidMetadataNamespace checks a namespace: 1..32 of a-z, 0-9, '_', '-'.
func ValidMetadataNamespace(ns string) error {
	if ns == "" || len(ns) > 32 {
		return errs.Invalid("a metadata namespace is 1..32 characters")
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return errs.Invalid("metadata namespace %q: only a-z, 0-9, '_' and '-'", clipStr(ns))
		}
	}
	return nil
}

// ValidMetadata checks a namespace's metadata against the bounds: keys of
// printable ASCII without spaces, values of UTF-8 without NUL.
func ValidMetadata(ns string, kv map[string]string) error {
	if err := ValidMetadataNamespace(ns); err != nil {
		return err
	}
	if len(kv) > MaxMetadataKeys {
		return errs.New(errs.CodeTooLarge, "at most %d metadata keys per file", MaxMetadataKeys)
	}
	total := 0
	for k, v := range kv {
		if k == "" || len(k) > MaxMetadataKeyBytes {
			return errs.Invalid("metadata keys are 1..%d bytes", MaxMetadataKeyBytes)
		}
		for i := 0; i < len(k); i++ {
			if k[i] <= 0x20 || k[i] >= 0x7f {
				return errs.Invalid("metadata key %q: printable ASCII without spaces only", clipStr(k))
			}
		}
		if len(v) > MaxMetadataValueBytes || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return errs.Invalid("metadata value of %q: UTF-8 without NUL, at most %d bytes", clipStr(k), MaxMetadataValueBytes)
		}
		total += len("user.") + len(ns) + 1 + len(k) + len(v)
	}
	if total > MaxMetadataBytes {
		return errs.New(errs.CodeTooLarge, "a file's metadata is at most %d bytes (keys with their prefix, and values)", MaxMetadataBytes)
	}
	return nil
}

// Line-range reads: lines Start..End (counted from 1, inclusive) of a text
// file, read by the guest so that no more than the range (and MaxBytes of
// it) crosses to the host.
const (
	DefaultLines     = 2000
	DefaultLineBytes = 256 << 10 // DefaultLines' budget
	MaxLinesBytes    = 4 << 20
	// LineCutBytes is where a longer line is cut, and LineCutMarker what
	// replaces the rest (minified code, data).
	LineCutBytes  = 16 << 10
	LineCutMarker = " [... line cut ...]\n"
	// LineCountBytes bounds how far past the range a read goes to count
	// the file's lines.
	LineCountBytes = 64 << 20
)

// LinesRequest reads lines Start..End (0: Start + DefaultLines - 1) of a
// text file, at most MaxBytes of them (0: DefaultLineBytes).
type LinesRequest struct {
	Path     string `json:"path"`
	User     string `json:"user,omitempty"`
	Start    int    `json:"start,omitempty"` // 0: 1
	End      int    `json:"end,omitempty"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

// LinesResult is a line range. Content is the lines, exactly as in the
// file except for invalid UTF-8 (replaced) and cut lines (marked); End is
// the last line in it (Start-1 if none); Total the file's lines (0 when
// too far to count); More says lines follow End; Truncated that MaxBytes
// or a cut shortened it. A binary file (a NUL in the range) has Binary set
// and no content.
type LinesResult struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Start     int    `json:"start"`
	End       int    `json:"end"`
	Total     int    `json:"total,omitempty"`
	More      bool   `json:"more,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Binary    bool   `json:"binary,omitempty"`
	Size      int64  `json:"size"`
}

// ListResult is a listing, sorted by path.
type ListResult struct {
	Path      string     `json:"path"`
	Entries   []FileInfo `json:"entries"`
	Truncated bool       `json:"truncated"`
}

// MkdirRequest makes a directory (Parents: with its parents, and no error
// if it exists, like mkdir -p).
type MkdirRequest struct {
	Path    string `json:"path"`
	User    string `json:"user,omitempty"`
	Parents bool   `json:"parents,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Owner   string `json:"owner,omitempty"` // with User root: who the directories made belong to
}

// MoveRequest renames From to To (the exact new path, not a directory to
// move into). Without Overwrite an existing To is a conflict.
type MoveRequest struct {
	From      string `json:"from"`
	To        string `json:"to"`
	User      string `json:"user,omitempty"`
	Overwrite bool   `json:"overwrite,omitempty"`
	Parents   bool   `json:"parents,omitempty"`
}

// RemoveRequest removes a path; a directory needs Recursive unless empty.
// Symlinks are removed, never followed.
type RemoveRequest struct {
	Path      string `json:"path"`
	User      string `json:"user,omitempty"`
	Recursive bool   `json:"recursive,omitempty"`
}

// RemoveResult counts what was removed.
type RemoveResult struct {
	Removed int64 `json:"removed"`
}

// ArchiveRequest downloads a directory (or one file) as a tar stream.
type ArchiveRequest struct {
	Path string `json:"path"`
	User string `json:"user,omitempty"`
	Gzip bool   `json:"gzip,omitempty"`
}

// ExtractRequest uploads a tar stream (gzip is detected) into the
// directory Path, created if missing.
type ExtractRequest struct {
	Path       string  `json:"path"`
	User       string  `json:"user,omitempty"`
	MaxBytes   int64   `json:"max_bytes,omitempty"`   // expanded bytes; 0: no cap beyond the disk
	MaxEntries int64   `json:"max_entries,omitempty"` // 0: DefaultMaxEntries
	MaxRatio   float64 `json:"max_ratio,omitempty"`   // 0: DefaultMaxRatio
}

// ExtractResult counts what an archive upload created.
type ExtractResult struct {
	Path     string `json:"path"`
	Files    int64  `json:"files"`
	Dirs     int64  `json:"dirs"`
	Symlinks int64  `json:"symlinks"`
	Links    int64  `json:"hardlinks"`
	Bytes    int64  `json:"bytes"`
	// Stripped counts entries whose setuid/setgid bits were removed.
	Stripped int64 `json:"stripped_setid"`
}

// WatchRequest streams changes under Path.
type WatchRequest struct {
	Path      string `json:"path"`
	User      string `json:"user,omitempty"`
	Recursive bool   `json:"recursive,omitempty"`
}

// FileEvent is one change.
type FileEvent struct {
	Type    string `json:"type"`
	Path    string `json:"path,omitempty"`
	OldPath string `json:"old_path,omitempty"` // rename
	Entry   string `json:"entry,omitempty"`    // file, dir, symlink, other
	Error   string `json:"error,omitempty"`    // why the stream ended (last event)
}

// FindRequest finds paths under Path matching a glob Pattern, relative to
// Path: * ? [a-z] within a name, {a,b} alternatives, ** across directories.
type FindRequest struct {
	Path    string `json:"path"`
	User    string `json:"user,omitempty"`
	Pattern string `json:"pattern"`
	Type    string `json:"type,omitempty"` // only entries of this type ("" all)
	Limit   int    `json:"limit,omitempty"`
}

// FindResult lists matches, sorted by path.
type FindResult struct {
	Matches   []FileInfo `json:"matches"`
	Truncated bool       `json:"truncated"`
}

// SearchRequest greps files under Path (a file or a directory).
type SearchRequest struct {
	Path        string `json:"path"`
	User        string `json:"user,omitempty"`
	Query       string `json:"query"`
	Regexp      bool   `json:"regexp,omitempty"` // Query is an RE2 expression (else a literal)
	IgnoreCase  bool   `json:"ignore_case,omitempty"`
	Include     string `json:"include,omitempty"` // glob filter on paths relative to Path
	Limit       int    `json:"limit,omitempty"`
	MaxFileSize int64  `json:"max_file_size,omitempty"` // larger files are skipped
}

// SearchMatch is one matching line (Line counts from 1).
type SearchMatch struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"` // Text was cut
}

// SearchResult lists matches in path then line order.
type SearchResult struct {
	Matches      []SearchMatch `json:"matches"`
	Truncated    bool          `json:"truncated"`
	FilesScanned int64         `json:"files_scanned"`
	FilesSkipped int64         `json:"files_skipped"` // binary, too large, unreadable
}

// EditRequest changes a file in place (atomically, like a write): either
// replace OldString, which must occur exactly once (every occurrence with
// ReplaceAll), by NewString; or, with StartLine > 0, replace lines
// StartLine..EndLine (inclusive, from 1) by Content. EndLine = StartLine-1
// inserts before StartLine.
type EditRequest struct {
	Path       string `json:"path"`
	User       string `json:"user,omitempty"`
	OldString  string `json:"old_string,omitempty"`
	NewString  string `json:"new_string,omitempty"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
	StartLine  int    `json:"start_line,omitempty"`
	EndLine    int    `json:"end_line,omitempty"`
	Content    string `json:"content,omitempty"`
}

// EditResult is the edited file.
type EditResult struct {
	Replacements int      `json:"replacements"`
	File         FileInfo `json:"file"`
}
