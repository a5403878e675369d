package guestapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// File service of the guest. Bulk data (read, write, archives) travels as
// raw HTTP bodies, never as JSON or frames; small requests and answers are
// JSON; watch events are one JSON object per line.

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
type WriteRequest struct {
	Path     string `json:"path"`
	User     string `json:"user,omitempty"`
	Mode     string `json:"mode,omitempty"`
	Parents  bool   `json:"parents,omitempty"`
	MaxBytes int64  `json:"max_bytes,omitempty"` // 0: no cap beyond the disk
}

// StatRequest describes one path (Follow: the symlink's target instead).
type StatRequest struct {
	Path   string `json:"path"`
	User   string `json:"user,omitempty"`
	Follow bool   `json:"follow,omitempty"`
}

// ListRequest lists a directory, Depth levels deep (1: its entries).
type ListRequest struct {
	Path  string `json:"path"`
	User  string `json:"user,omitempty"`
	Depth int    `json:"depth,omitempty"`
	Limit int    `json:"limit,omitempty"`
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

// Query encodings of the streaming requests (their bodies are data).

// Values encodes r as a query.
func (r ReadRequest) Values() url.Values {
	v := url.Values{"path": {r.Path}}
	setStr(v, "user", r.User)
	setInt(v, "offset", r.Offset)
	if r.Length > 0 {
		setInt(v, "length", r.Length)
	}
	setInt(v, "suffix", r.Suffix)
	return v
}

// Values encodes r as a query.
func (r WriteRequest) Values() url.Values {
	v := url.Values{"path": {r.Path}}
	setStr(v, "user", r.User)
	setStr(v, "mode", r.Mode)
	setBool(v, "parents", r.Parents)
	setInt(v, "max_bytes", r.MaxBytes)
	return v
}

// Values encodes r as a query.
func (r ArchiveRequest) Values() url.Values {
	v := url.Values{"path": {r.Path}}
	setStr(v, "user", r.User)
	setBool(v, "gzip", r.Gzip)
	return v
}

// Values encodes r as a query.
func (r ExtractRequest) Values() url.Values {
	v := url.Values{"path": {r.Path}}
	setStr(v, "user", r.User)
	setInt(v, "max_bytes", r.MaxBytes)
	setInt(v, "max_entries", r.MaxEntries)
	if r.MaxRatio != 0 {
		v.Set("max_ratio", strconv.FormatFloat(r.MaxRatio, 'g', -1, 64))
	}
	return v
}

// Values encodes r as a query.
func (r WatchRequest) Values() url.Values {
	v := url.Values{"path": {r.Path}}
	setStr(v, "user", r.User)
	setBool(v, "recursive", r.Recursive)
	return v
}

func setStr(v url.Values, k, s string) {
	if s != "" {
		v.Set(k, s)
	}
}

func setInt(v url.Values, k string, n int64) {
	if n != 0 {
		v.Set(k, strconv.FormatInt(n, 10))
	}
}

func setBool(v url.Values, k string, b bool) {
	if b {
		v.Set(k, "true")
	}
}

// Query reads typed values out of a query, remembering the first error.
type Query struct {
	V   url.Values
	Err error
}

// Str returns the value of k.
func (q *Query) Str(k string) string { return q.V.Get(k) }

// Int returns the integer value of k (0 if absent).
func (q *Query) Int(k string) int64 {
	s := q.V.Get(k)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && q.Err == nil {
		q.Err = errs.Invalid("%s=%q is not an integer", k, clipStr(s))
	}
	return n
}

// Float returns the number value of k (0 if absent).
func (q *Query) Float(k string) float64 {
	s := q.V.Get(k)
	if s == "" {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && q.Err == nil {
		q.Err = errs.Invalid("%s=%q is not a number", k, clipStr(s))
	}
	return f
}

// Bool returns the boolean value of k (false if absent; "" after "k" alone
// counts as true).
func (q *Query) Bool(k string) bool {
	vs, ok := q.V[k]
	if !ok {
		return false
	}
	s := ""
	if len(vs) > 0 {
		s = vs[0]
	}
	switch strings.ToLower(s) {
	case "", "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	if q.Err == nil {
		q.Err = errs.Invalid("%s=%q is not a boolean", k, clipStr(s))
	}
	return false
}

// ParseReadRequest decodes a ReadRequest from a query.
func ParseReadRequest(v url.Values) (ReadRequest, error) {
	q := Query{V: v}
	r := ReadRequest{Path: q.Str("path"), User: q.Str("user"), Offset: q.Int("offset"), Length: q.Int("length"),
		Suffix: q.Int("suffix")}
	return r, q.Err
}

// ParseWriteRequest decodes a WriteRequest from a query.
func ParseWriteRequest(v url.Values) (WriteRequest, error) {
	q := Query{V: v}
	r := WriteRequest{Path: q.Str("path"), User: q.Str("user"), Mode: q.Str("mode"), Parents: q.Bool("parents"),
		MaxBytes: q.Int("max_bytes")}
	return r, q.Err
}

// ParseArchiveRequest decodes an ArchiveRequest from a query.
func ParseArchiveRequest(v url.Values) (ArchiveRequest, error) {
	q := Query{V: v}
	r := ArchiveRequest{Path: q.Str("path"), User: q.Str("user"), Gzip: q.Bool("gzip")}
	return r, q.Err
}

// ParseExtractRequest decodes an ExtractRequest from a query.
func ParseExtractRequest(v url.Values) (ExtractRequest, error) {
	q := Query{V: v}
	r := ExtractRequest{Path: q.Str("path"), User: q.Str("user"), MaxBytes: q.Int("max_bytes"),
		MaxEntries: q.Int("max_entries"), MaxRatio: q.Float("max_ratio")}
	return r, q.Err
}

// ParseWatchRequest decodes a WatchRequest from a query.
func ParseWatchRequest(v url.Values) (WatchRequest, error) {
	q := Query{V: v}
	r := WatchRequest{Path: q.Str("path"), User: q.Str("user"), Recursive: q.Bool("recursive")}
	return r, q.Err
}

// Response headers of a guest read.
const (
	HeaderSize   = "X-Paddock-Size"
	HeaderOffset = "X-Paddock-Offset"
	HeaderMode   = "X-Paddock-Mode"
	HeaderMTime  = "X-Paddock-Mtime"
	// A listing's entry count and truncation, so it can be passed on
	// without decoding.
	HeaderEntries   = "X-Paddock-Entries"
	HeaderTruncated = "X-Paddock-Truncated"
)

// CopyBufferSize is the chunk size of bulk copies: large enough that a
// gigabyte costs a thousand system calls per hop, not thirty thousand.
const CopyBufferSize = 1 << 20

// bigReader hides a body's other methods behind a WriterTo with a large
// buffer, so the transport's copy to the socket moves megabytes per call.
type bigReader struct{ r io.Reader }

func (b bigReader) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b bigReader) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, CopyBufferSize)
	var n int64
	for {
		k, err := b.r.Read(buf)
		if k > 0 {
			m, werr := w.Write(buf[:k])
			n += int64(m)
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// ReadFile opens a file (or a range of it) for reading.
func (c *Client) ReadFile(ctx context.Context, r ReadRequest) (*FileReader, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL("/v1/files/read?"+r.Values().Encode()), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, unavailable(ctx, err)
	}
	if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		defer resp.Body.Close()
		size, _ := strconv.ParseInt(resp.Header.Get(HeaderSize), 10, 64)
		return nil, &RangeError{Size: size, Err: DecodeError(resp)}
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, DecodeError(resp)
	}
	fr := &FileReader{Body: resp.Body, Length: resp.ContentLength, Mode: resp.Header.Get(HeaderMode)}
	fr.Size, _ = strconv.ParseInt(resp.Header.Get(HeaderSize), 10, 64)
	fr.Offset, _ = strconv.ParseInt(resp.Header.Get(HeaderOffset), 10, 64)
	fr.MTime, _ = time.Parse(time.RFC3339Nano, resp.Header.Get(HeaderMTime))
	return fr, nil
}

// WriteFile streams body into a file. size is the body's length if known
// (-1 otherwise).
func (c *Client) WriteFile(ctx context.Context, r WriteRequest, body io.Reader, size int64) (FileInfo, error) {
	var fi FileInfo
	err := c.upload(ctx, http.MethodPut, "/v1/files/write?"+r.Values().Encode(), body, size, &fi)
	return fi, err
}

// Extract streams a tar (or tar.gz) body into a directory.
func (c *Client) Extract(ctx context.Context, r ExtractRequest, body io.Reader, size int64) (ExtractResult, error) {
	var res ExtractResult
	err := c.upload(ctx, http.MethodPut, "/v1/files/archive?"+r.Values().Encode(), body, size, &res)
	return res, err
}

func (c *Client) upload(ctx context.Context, method, p string, body io.Reader, size int64, out any) error {
	if body == nil {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(ctx, method, URL(p), bigReader{body})
	if err != nil {
		return err
	}
	req.ContentLength = size
	if size == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed answer")
	}
	return nil
}

// Archive opens a tar (gzip if asked) stream of a directory. An error
// inside the stream (a file that cannot be read half-way) ends it early,
// which the reader sees as an unexpected EOF.
func (c *Client) Archive(ctx context.Context, r ArchiveRequest) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL("/v1/files/archive?"+r.Values().Encode()), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Stat describes one path.
func (c *Client) Stat(ctx context.Context, r StatRequest) (FileInfo, error) {
	var fi FileInfo
	err := c.JSON(ctx, http.MethodPost, "/v1/files/stat", r, &fi)
	return fi, err
}

// List lists a directory.
func (c *Client) List(ctx context.Context, r ListRequest) (ListResult, error) {
	raw, err := c.ListRaw(ctx, r)
	if err != nil {
		return ListResult{}, err
	}
	res, err := DecodeList(raw.JSON)
	if err != nil {
		return res, errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed listing")
	}
	return res, nil
}

// RawList is a listing as the guest encoded it (a ListResult in JSON),
// with its entry count and truncation.
type RawList struct {
	JSON      []byte
	Entries   int
	Truncated bool
}

// maxListJSON bounds a listing's JSON (MaxListLimit entries with long
// paths).
const maxListJSON = 1 << 30

// ListRaw lists a directory, leaving the JSON encoded.
func (c *Client) ListRaw(ctx context.Context, r ListRequest) (RawList, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return RawList{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, URL("/v1/files/list"), bytes.NewReader(b))
	if err != nil {
		return RawList{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return RawList{}, err
	}
	defer resp.Body.Close()
	out := RawList{Truncated: resp.Header.Get(HeaderTruncated) == "true"}
	out.Entries, _ = strconv.Atoi(resp.Header.Get(HeaderEntries))
	buf := bytes.NewBuffer(make([]byte, 0, max(resp.ContentLength, 0)))
	if _, err := io.Copy(buf, io.LimitReader(resp.Body, maxListJSON)); err != nil {
		return RawList{}, unavailable(ctx, err)
	}
	out.JSON = buf.Bytes()
	return out, nil
}

// Mkdir makes a directory.
func (c *Client) Mkdir(ctx context.Context, r MkdirRequest) (FileInfo, error) {
	var fi FileInfo
	err := c.JSON(ctx, http.MethodPost, "/v1/files/mkdir", r, &fi)
	return fi, err
}

// Move renames a path.
func (c *Client) Move(ctx context.Context, r MoveRequest) (FileInfo, error) {
	var fi FileInfo
	err := c.JSON(ctx, http.MethodPost, "/v1/files/move", r, &fi)
	return fi, err
}

// Remove removes a path.
func (c *Client) Remove(ctx context.Context, r RemoveRequest) (RemoveResult, error) {
	var res RemoveResult
	err := c.JSON(ctx, http.MethodPost, "/v1/files/remove", r, &res)
	return res, err
}

// Find globs for paths.
func (c *Client) Find(ctx context.Context, r FindRequest) (FindResult, error) {
	var res FindResult
	err := c.JSON(ctx, http.MethodPost, "/v1/files/find", r, &res)
	return res, err
}

// Search greps files.
func (c *Client) Search(ctx context.Context, r SearchRequest) (SearchResult, error) {
	var res SearchResult
	err := c.JSON(ctx, http.MethodPost, "/v1/files/search", r, &res)
	return res, err
}

// Edit changes a file in place.
func (c *Client) Edit(ctx context.Context, r EditRequest) (EditResult, error) {
	var res EditResult
	err := c.JSON(ctx, http.MethodPost, "/v1/files/edit", r, &res)
	return res, err
}

// WatchStream is an open watch. Next blocks for the next event; Close ends
// the watch.
type WatchStream struct {
	body io.ReadCloser
	sc   *bufio.Scanner
}

// maxEventLine bounds one event line (two paths and a little JSON).
const maxEventLine = 4*MaxPathLen + 1024

// Watch starts watching; the first event is EventReady.
func (c *Client) Watch(ctx context.Context, r WatchRequest) (*WatchStream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL("/v1/files/watch?"+r.Values().Encode()), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	return NewWatchStream(resp.Body), nil
}

// NewWatchStream reads events, one JSON object per line, from body.
func NewWatchStream(body io.ReadCloser) *WatchStream {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 4096), maxEventLine)
	return &WatchStream{body: body, sc: sc}
}

// Next returns the next event; io.EOF when the stream ended cleanly.
func (w *WatchStream) Next() (FileEvent, error) {
	if !w.sc.Scan() {
		if err := w.sc.Err(); err != nil {
			return FileEvent{}, fmt.Errorf("watch stream: %w", err)
		}
		return FileEvent{}, io.EOF
	}
	var ev FileEvent
	if err := json.Unmarshal(w.sc.Bytes(), &ev); err != nil {
		return FileEvent{}, errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed watch event")
	}
	return ev, nil
}

// Close ends the watch.
func (w *WatchStream) Close() error { return w.body.Close() }

// IsRange reports whether err is a RangeError, returning it.
func IsRange(err error) (*RangeError, bool) {
	var re *RangeError
	ok := errors.As(err, &re)
	return re, ok
}
