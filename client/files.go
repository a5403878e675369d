package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/paddockhq/paddock/wire"
)

// Types of the files API (docs/files.md).
type (
	FileInfo        = wire.FileInfo
	ReadFileRequest = wire.ReadRequest
	WriteRequest    = wire.WriteRequest
	StatRequest     = wire.StatRequest
	ListRequest     = wire.ListRequest
	ListResult      = wire.ListResult
	MkdirRequest    = wire.MkdirRequest
	MoveRequest     = wire.MoveRequest
	RemoveRequest   = wire.RemoveRequest
	RemoveResult    = wire.RemoveResult
	ArchiveRequest  = wire.ArchiveRequest
	ExtractRequest  = wire.ExtractRequest
	ExtractResult   = wire.ExtractResult
	WatchRequest    = wire.WatchRequest
	FileEvent       = wire.FileEvent
	FindRequest     = wire.FindRequest
	LinesRequest    = wire.LinesRequest
	LinesResult     = wire.LinesResult
	FindResult      = wire.FindResult
	SearchRequest   = wire.SearchRequest
	SearchResult    = wire.SearchResult
	SearchMatch     = wire.SearchMatch
	EditRequest     = wire.EditRequest
	EditResult      = wire.EditResult
	// File is an open read of a file: Body yields Length bytes from
	// Offset of a file of Size bytes. Close it.
	File = wire.File
)

// Entry types of FileInfo.Type.
const (
	TypeFile    = wire.TypeFile
	TypeDir     = wire.TypeDir
	TypeSymlink = wire.TypeSymlink
	TypeOther   = wire.TypeOther
)

func filesPath(id, sub string, q url.Values) string {
	p := "/v1/sandboxes/" + url.PathEscape(id) + "/files" + sub
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

func withUser(q url.Values, user string) url.Values {
	if user != "" {
		q.Set("user", user)
	}
	return q
}

// OpenFile opens a file, or the range Offset/Length of it (Length 0: to
// the end; Suffix > 0: the last Suffix bytes).
func (c *Client) OpenFile(ctx context.Context, id string, r ReadFileRequest) (*File, error) {
	q := withUser(url.Values{"path": {r.Path}}, r.User)
	req, err := c.newRequest(ctx, http.MethodGet, filesPath(id, "", q), nil)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Suffix > 0:
		req.Header.Set("Range", "bytes=-"+strconv.FormatInt(r.Suffix, 10))
	case r.Offset > 0 || r.Length > 0:
		q.Set("offset", strconv.FormatInt(r.Offset, 10))
		if r.Length > 0 {
			q.Set("length", strconv.FormatInt(r.Length, 10))
		}
		req.URL.RawQuery = q.Encode()
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	f := &File{Body: resp.Body, Length: resp.ContentLength, Mode: resp.Header.Get(wire.HeaderMode)}
	f.Size = -1 // a /proc or /sys file: unknown until read
	if h := resp.Header.Get(wire.HeaderSize); h != "" {
		f.Size, _ = strconv.ParseInt(h, 10, 64)
	}
	f.Offset = r.Offset
	if r.Suffix > 0 {
		f.Offset = f.Size - f.Length
	}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		f.MTime = t
	}
	return f, nil
}

// ReadFile returns a whole file's bytes.
func (c *Client) ReadFile(ctx context.Context, id, path string) ([]byte, error) {
	f, err := c.OpenFile(ctx, id, ReadFileRequest{Path: path})
	if err != nil {
		return nil, err
	}
	defer f.Body.Close()
	return io.ReadAll(f.Body)
}

// WriteFile streams body (size bytes, or -1 if unknown) into a file; the
// file is replaced only once the whole body arrived.
func (c *Client) WriteFile(ctx context.Context, id string, r WriteRequest, body io.Reader, size int64) (FileInfo, error) {
	q := withUser(url.Values{"path": {r.Path}}, r.User)
	if r.Mode != "" {
		q.Set("mode", r.Mode)
	}
	if r.Parents {
		q.Set("parents", "true")
	}
	if r.Owner != "" {
		q.Set("owner", r.Owner)
	}
	var fi FileInfo
	err := c.upload(ctx, http.MethodPut, filesPath(id, "", q), body, size, &fi)
	return fi, err
}

// UploadArchive extracts a tar (or tar.gz) stream into a directory.
func (c *Client) UploadArchive(ctx context.Context, id string, r ExtractRequest, body io.Reader, size int64) (ExtractResult, error) {
	q := withUser(url.Values{"path": {r.Path}}, r.User)
	if r.MaxEntries > 0 {
		q.Set("max_entries", strconv.FormatInt(r.MaxEntries, 10))
	}
	if r.MaxRatio > 0 {
		q.Set("max_ratio", strconv.FormatFloat(r.MaxRatio, 'g', -1, 64))
	}
	var res ExtractResult
	err := c.upload(ctx, http.MethodPost, filesPath(id, "/archive", q), body, size, &res)
	return res, err
}

func (c *Client) upload(ctx context.Context, method, path string, body io.Reader, size int64, out any) error {
	if body == nil {
		body = http.NoBody
	}
	req, err := c.newRequest(ctx, method, path, nil)
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bigReader{body})
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
	return json.NewDecoder(resp.Body).Decode(out)
}

// bigReader copies to the connection a megabyte at a time.
type bigReader struct{ r io.Reader }

func (b bigReader) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b bigReader) WriteTo(w io.Writer) (int64, error) {
	return io.CopyBuffer(w, struct{ io.Reader }{b.r}, make([]byte, 1<<20))
}

// DownloadArchive streams a directory (or file) as tar, gzip'd if asked.
func (c *Client) DownloadArchive(ctx context.Context, id string, r ArchiveRequest) (io.ReadCloser, error) {
	q := withUser(url.Values{}, r.User)
	if r.Path != "" {
		q.Set("path", r.Path)
	}
	if r.Gzip {
		q.Set("gzip", "true")
	}
	resp, err := c.open(ctx, http.MethodGet, filesPath(id, "/archive", q), nil, "")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// StatFile describes a path.
func (c *Client) StatFile(ctx context.Context, id string, r StatRequest) (FileInfo, error) {
	q := withUser(url.Values{"path": {r.Path}}, r.User)
	if r.Follow {
		q.Set("follow", "true")
	}
	return do[FileInfo](ctx, c, http.MethodGet, filesPath(id, "/stat", q), nil)
}

// ListFiles lists a directory.
func (c *Client) ListFiles(ctx context.Context, id string, r ListRequest) (ListResult, error) {
	q := withUser(url.Values{}, r.User)
	if r.Path != "" {
		q.Set("path", r.Path)
	}
	if r.Depth > 0 {
		q.Set("depth", strconv.Itoa(r.Depth))
	}
	if r.Limit > 0 {
		q.Set("limit", strconv.Itoa(r.Limit))
	}
	resp, err := c.open(ctx, http.MethodGet, filesPath(id, "/list", q), nil, "")
	if err != nil {
		return ListResult{}, err
	}
	defer resp.Body.Close()
	// Listings run to megabytes: read whole, then decode.
	buf := bytes.NewBuffer(make([]byte, 0, max(resp.ContentLength, 512)))
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return ListResult{}, err
	}
	var res ListResult
	if err := json.Unmarshal(buf.Bytes(), &res); err != nil {
		return ListResult{}, fmt.Errorf("malformed listing: %w", err)
	}
	return res, nil
}

// MakeDir makes a directory.
func (c *Client) MakeDir(ctx context.Context, id string, r MkdirRequest) (FileInfo, error) {
	return do[FileInfo](ctx, c, http.MethodPost, filesPath(id, "/mkdir", nil), r)
}

// MoveFile renames a path.
func (c *Client) MoveFile(ctx context.Context, id string, r MoveRequest) (FileInfo, error) {
	return do[FileInfo](ctx, c, http.MethodPost, filesPath(id, "/move", nil), r)
}

// RemoveFile removes a path.
func (c *Client) RemoveFile(ctx context.Context, id string, r RemoveRequest) (RemoveResult, error) {
	q := withUser(url.Values{"path": {r.Path}}, r.User)
	if r.Recursive {
		q.Set("recursive", "true")
	}
	return do[RemoveResult](ctx, c, http.MethodDelete, filesPath(id, "", q), nil)
}

// EditFile changes a file in place.
func (c *Client) EditFile(ctx context.Context, id string, r EditRequest) (EditResult, error) {
	return do[EditResult](ctx, c, http.MethodPost, filesPath(id, "/edit", nil), r)
}

// ReadLines reads a line range of a text file; the server reads only as
// far into the file as the range (and counting its lines) needs.
func (c *Client) ReadLines(ctx context.Context, id string, r LinesRequest) (LinesResult, error) {
	q := withUser(url.Values{"path": {r.Path}}, r.User)
	for k, v := range map[string]int{"start": r.Start, "end": r.End, "max_bytes": r.MaxBytes} {
		if v != 0 {
			q.Set(k, strconv.Itoa(v))
		}
	}
	var res LinesResult
	err := c.call(ctx, http.MethodGet, filesPath(id, "/lines", q), nil, &res)
	return res, err
}

// FindFiles globs for paths.
func (c *Client) FindFiles(ctx context.Context, id string, r FindRequest) (FindResult, error) {
	q := withUser(url.Values{"pattern": {r.Pattern}}, r.User)
	if r.Path != "" {
		q.Set("path", r.Path)
	}
	if r.Type != "" {
		q.Set("type", r.Type)
	}
	if r.Limit > 0 {
		q.Set("limit", strconv.Itoa(r.Limit))
	}
	return do[FindResult](ctx, c, http.MethodGet, filesPath(id, "/find", q), nil)
}

// SearchFiles greps files.
func (c *Client) SearchFiles(ctx context.Context, id string, r SearchRequest) (SearchResult, error) {
	q := withUser(url.Values{"query": {r.Query}}, r.User)
	if r.Path != "" {
		q.Set("path", r.Path)
	}
	if r.Regexp {
		q.Set("regexp", "true")
	}
	if r.IgnoreCase {
		q.Set("ignore_case", "true")
	}
	if r.Include != "" {
		q.Set("include", r.Include)
	}
	if r.Limit > 0 {
		q.Set("limit", strconv.Itoa(r.Limit))
	}
	if r.MaxFileSize > 0 {
		q.Set("max_file_size", strconv.FormatInt(r.MaxFileSize, 10))
	}
	return do[SearchResult](ctx, c, http.MethodGet, filesPath(id, "/search", q), nil)
}

// Watch is an open watch stream.
type Watch struct {
	body io.ReadCloser
	sc   *bufio.Scanner
}

// maxEventLine bounds one event line (two paths and a little JSON).
const maxEventLine = 64 << 10

// Next blocks for the next event (io.EOF when the stream ended).
func (w *Watch) Next() (FileEvent, error) {
	if !w.sc.Scan() {
		if err := w.sc.Err(); err != nil {
			return FileEvent{}, fmt.Errorf("watch stream: %w", err)
		}
		return FileEvent{}, io.EOF
	}
	var ev FileEvent
	if err := json.Unmarshal(w.sc.Bytes(), &ev); err != nil {
		return FileEvent{}, fmt.Errorf("malformed watch event: %w", err)
	}
	return ev, nil
}

// Close ends the watch.
func (w *Watch) Close() error { return w.body.Close() }

// WatchFiles streams changes under a path; the first event is "ready".
func (c *Client) WatchFiles(ctx context.Context, id string, r WatchRequest) (*Watch, error) {
	q := withUser(url.Values{}, r.User)
	if r.Path != "" {
		q.Set("path", r.Path)
	}
	if r.Recursive {
		q.Set("recursive", "true")
	}
	resp, err := c.open(ctx, http.MethodGet, filesPath(id, "/watch", q), nil, "")
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 4096), maxEventLine)
	return &Watch{body: resp.Body, sc: sc}, nil
}
