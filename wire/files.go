package wire

import (
	"io"
	"os"
	"strconv"
	"time"
)

// The files API (docs/files.md): paths resolve inside the sandbox, a
// relative one under Workspace. Requests of GET routes travel as query
// parameters with the JSON names below; bodies of file reads and writes
// are the bytes themselves.

// Users a command or a file operation runs as.
const (
	UserRoot = "root" // root inside the sandbox only
	UserUser = "user" // uid 1000
)

// Workspace is the working directory of a sandbox, where relative paths
// start.
const Workspace = "/workspace"

// Headers of a file read's answer.
const (
	HeaderSize = "X-Paddock-Size" // the whole file's size (a range reads part of it)
	HeaderMode = "X-Paddock-Mode" // its permission bits in octal
)

// Entry types of FileInfo.Type.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other"
)

// FileInfo describes one file, as lstat(2) sees it (a symlink is reported
// as a symlink, with its target).
type FileInfo struct {
	Name   string    `json:"name"`
	Path   string    `json:"path"`
	Type   string    `json:"type"` // TypeFile, TypeDir, TypeSymlink, TypeOther
	Size   int64     `json:"size"`
	Mode   string    `json:"mode"` // octal permission bits incl. setuid/setgid/sticky, e.g. "0644"
	MTime  time.Time `json:"mtime"`
	Target string    `json:"target,omitempty"` // symlink target, verbatim
	UID    int       `json:"uid"`
	GID    int       `json:"gid"`
}

// Perm returns Mode as file mode bits, setuid, setgid and sticky included
// (0 if malformed).
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

// ReadRequest reads a file's bytes (GET .../files). Offset and Length
// select a range; Length <= 0 reads to the end. Suffix > 0 reads the last
// Suffix bytes instead (an HTTP "bytes=-N" range).
type ReadRequest struct {
	Path   string `json:"path"`
	User   string `json:"user,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	Length int64  `json:"length,omitempty"`
	Suffix int64  `json:"suffix,omitempty"`
}

// File is an open read of a file: Body yields Length bytes from Offset of
// a file of Size bytes (Size and Length are -1 for a file that has no size
// until read, in /proc say). Close it.
type File struct {
	Body   io.ReadCloser
	Size   int64
	Offset int64
	Length int64
	Mode   string
	MTime  time.Time
}

// WriteRequest writes a file (PUT .../files; the body is its content).
// MaxBytes caps what the server accepts (0: its limit).
type WriteRequest struct {
	Path     string `json:"path"`
	User     string `json:"user,omitempty"`
	Mode     string `json:"mode,omitempty"`
	Parents  bool   `json:"parents,omitempty"`
	MaxBytes int64  `json:"max_bytes,omitempty"`
	// Owner, with User root, gives the written file (and the directories
	// Parents makes for it) to this user ("user" or "root"): E2B's envd
	// writes as root and chowns, so its users write anywhere.
	Owner string `json:"owner,omitempty"`
}

// StatRequest describes one path (lstat, or the target with Follow).
type StatRequest struct {
	Path   string `json:"path"`
	User   string `json:"user,omitempty"`
	Follow bool   `json:"follow,omitempty"`
}

// ListRequest lists a directory, Depth levels down (0: 1).
type ListRequest struct {
	Path  string `json:"path"`
	User  string `json:"user,omitempty"`
	Depth int    `json:"depth,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// ListResult is a listing; Truncated says more entries exist.
type ListResult struct {
	Path      string     `json:"path"`
	Entries   []FileInfo `json:"entries"`
	Truncated bool       `json:"truncated"`
}

// MkdirRequest makes a directory (with Parents: mkdir -p).
type MkdirRequest struct {
	Path    string `json:"path"`
	User    string `json:"user,omitempty"`
	Parents bool   `json:"parents,omitempty"`
	Mode    string `json:"mode,omitempty"`
	// Owner: as WriteRequest's, for the directories made.
	Owner string `json:"owner,omitempty"`
}

// MoveRequest renames a path.
type MoveRequest struct {
	From      string `json:"from"`
	To        string `json:"to"`
	User      string `json:"user,omitempty"`
	Overwrite bool   `json:"overwrite,omitempty"`
	Parents   bool   `json:"parents,omitempty"`
}

// RemoveRequest removes a path (a non-empty directory needs Recursive).
type RemoveRequest struct {
	Path      string `json:"path"`
	User      string `json:"user,omitempty"`
	Recursive bool   `json:"recursive,omitempty"`
}

// RemoveResult counts what was removed.
type RemoveResult struct {
	Removed int64 `json:"removed"`
}

// ArchiveRequest downloads a directory (or file) as tar, gzip'd if asked.
type ArchiveRequest struct {
	Path string `json:"path"`
	User string `json:"user,omitempty"`
	Gzip bool   `json:"gzip,omitempty"`
}

// ExtractRequest uploads a tar (or tar.gz) into a directory. The caps
// bound what one upload may expand to (0: the server's limits).
type ExtractRequest struct {
	Path       string  `json:"path"`
	User       string  `json:"user,omitempty"`
	MaxBytes   int64   `json:"max_bytes,omitempty"`   // expanded bytes
	MaxEntries int64   `json:"max_entries,omitempty"` // entries of the archive
	MaxRatio   float64 `json:"max_ratio,omitempty"`   // bytes expanded per byte received
}

// ExtractResult counts what an upload made.
type ExtractResult struct {
	Path     string `json:"path"`
	Files    int64  `json:"files"`
	Dirs     int64  `json:"dirs"`
	Symlinks int64  `json:"symlinks"`
	Links    int64  `json:"hardlinks"`
	Bytes    int64  `json:"bytes"`
	// Stripped counts setuid/setgid bits removed from entries.
	Stripped int64 `json:"stripped_setid"`
}

// WatchRequest streams changes under a path (GET .../files/watch).
type WatchRequest struct {
	Path      string `json:"path"`
	User      string `json:"user,omitempty"`
	Recursive bool   `json:"recursive,omitempty"`
}

// Types of a FileEvent.
const (
	EventReady    = "ready" // the first event: the watch is in place; later changes are reported
	EventCreate   = "create"
	EventWrite    = "write"
	EventRemove   = "remove"
	EventRename   = "rename"
	EventOverflow = "overflow" // events were lost (slow reader or kernel queue full)
	EventError    = "error"    // the last event: why the stream broke off
)

// FileEvent is one change (a line of the watch's NDJSON stream).
type FileEvent struct {
	Type    string `json:"type"`
	Path    string `json:"path,omitempty"`
	OldPath string `json:"old_path,omitempty"` // rename
	Entry   string `json:"entry,omitempty"`    // file, dir, symlink, other
	Error   string `json:"error,omitempty"`    // why the stream ended (last event)
}

// LinesRequest reads lines Start..End (counted from 1, inclusive; 0:
// Start + DefaultLines - 1) of a text file, at most MaxBytes of them (0:
// DefaultLinesBytes), without reading the file to the host (GET
// .../files/lines).
type LinesRequest struct {
	Path     string `json:"path"`
	User     string `json:"user,omitempty"`
	Start    int    `json:"start,omitempty"` // 0: 1
	End      int    `json:"end,omitempty"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

// Bounds of a line-range read. A line longer than LineCutBytes is cut,
// the rest replaced by LineCutMarker; LineCountBytes bounds how far past
// the range the file is read to count its lines.
const (
	DefaultLines      = 2000
	DefaultLinesBytes = 256 << 10
	MaxLinesBytes     = 4 << 20
	LineCutBytes      = 16 << 10
	LineCutMarker     = " [... line cut ...]\n"
	LineCountBytes    = 64 << 20
)

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

// FindRequest globs for paths under a directory.
type FindRequest struct {
	Path    string `json:"path"`
	User    string `json:"user,omitempty"`
	Pattern string `json:"pattern"`
	Type    string `json:"type,omitempty"` // only entries of this type ("" all)
	Limit   int    `json:"limit,omitempty"`
}

// FindResult is what matched.
type FindResult struct {
	Matches   []FileInfo `json:"matches"`
	Truncated bool       `json:"truncated"`
}

// SearchRequest greps files under a path.
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

// SearchMatch is one matching line.
type SearchMatch struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"` // Text was cut
}

// SearchResult is what matched.
type SearchResult struct {
	Matches      []SearchMatch `json:"matches"`
	Truncated    bool          `json:"truncated"`
	FilesScanned int64         `json:"files_scanned"`
	FilesSkipped int64         `json:"files_skipped"` // binary, too large, unreadable
}

// EditRequest changes a file in place: OldString replaced by NewString
// (once, or everywhere with ReplaceAll), or lines StartLine..EndLine
// replaced by Content.
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

// EditResult is the file after an edit.
type EditResult struct {
	Replacements int      `json:"replacements"`
	File         FileInfo `json:"file"`
}
