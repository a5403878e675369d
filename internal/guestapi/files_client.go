package guestapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/paddockhq/paddock/internal/errs"
)

// The file service's client side. Bulk data travels raw in requests and
// as data frames in answers; everything else is heads.

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

// download is an answer's data frames as a body: Close ends the answer. A
// body that ends before length bytes (length >= 0) is cut short.
type download struct {
	a      *answer
	d      *dataStream
	length int64
	n      int64
}

func (d *download) Read(p []byte) (int, error) {
	n, err := d.d.Read(p)
	d.n += int64(n)
	if err == io.EOF && d.length >= 0 && d.n != d.length {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && err != io.EOF {
		err = unavailableStream(d.a.ctx, err)
	}
	return n, err
}

func (d *download) Close() error { d.a.close(); return nil }

// unavailableStream keeps a coded error (an error frame) as it is.
func unavailableStream(ctx context.Context, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	return unavailable(ctx, err)
}

// ReadFile opens a file (or a range of it) for reading. A range that
// starts past the end is a *RangeError.
func (c *Client) ReadFile(ctx context.Context, r ReadRequest) (*FileReader, error) {
	a, err := c.call(ctx, RouteFileRead, r, nil, 0, false)
	if err != nil {
		return nil, err
	}
	var info ReadInfo
	if err := a.head(&info); err != nil {
		a.close()
		return nil, err
	}
	return &FileReader{Body: &download{a: a, d: a.data(nil), length: info.Length}, Size: info.Size, Offset: info.Offset,
		Length: info.Length, Mode: info.Mode, MTime: info.MTime}, nil
}

// WriteFile streams body into a file. size is the body's length if known
// (-1 otherwise).
func (c *Client) WriteFile(ctx context.Context, r WriteRequest, body io.Reader, size int64) (FileInfo, error) {
	var fi FileInfo
	err := c.upload(ctx, RouteFileWrite, r, body, size, &fi)
	return fi, err
}

// Extract streams a tar (or tar.gz) body into a directory.
func (c *Client) Extract(ctx context.Context, r ExtractRequest, body io.Reader, size int64) (ExtractResult, error) {
	var res ExtractResult
	err := c.upload(ctx, RouteFileExtract, r, body, size, &res)
	return res, err
}

func (c *Client) upload(ctx context.Context, route string, head any, body io.Reader, size int64, out any) error {
	if body == nil || size == 0 {
		body, size = bytes.NewReader(nil), 0
	}
	a, err := c.call(ctx, route, head, body, size, true)
	if err != nil {
		return err
	}
	defer a.close()
	return a.head(out)
}

// Archive opens a tar (gzip if asked) stream of a directory. An error
// inside the stream (a file that cannot be read half-way) ends it with
// that error.
func (c *Client) Archive(ctx context.Context, r ArchiveRequest) (io.ReadCloser, error) {
	a, err := c.call(ctx, RouteFileArchive, r, nil, 0, false)
	if err != nil {
		return nil, err
	}
	if err := a.head(nil); err != nil {
		a.close()
		return nil, err
	}
	return &download{a: a, d: a.data(nil), length: -1}, nil
}

// Stat describes one path.
func (c *Client) Stat(ctx context.Context, r StatRequest) (FileInfo, error) {
	return ask[FileInfo](ctx, c, RouteFileStat, r, maxAnswerHead)
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
	a, err := c.call(ctx, RouteFileList, r, nil, 0, false)
	if err != nil {
		return RawList{}, err
	}
	defer a.close()
	var info ListInfo
	if err := a.head(&info); err != nil {
		return RawList{}, err
	}
	var buf bytes.Buffer
	buf.Grow(min(info.Entries, MaxListLimit) * 160)
	n, err := io.Copy(&buf, io.LimitReader(a.data(nil), maxListJSON+1))
	if err != nil {
		return RawList{}, unavailableStream(ctx, err)
	}
	if n > maxListJSON {
		return RawList{}, errs.New(errs.CodeUnavailable, "sandbox agent sent a listing over %d bytes", maxListJSON)
	}
	return RawList{JSON: buf.Bytes(), Entries: info.Entries, Truncated: info.Truncated}, nil
}

// ReadLines reads a line range of a text file.
func (c *Client) ReadLines(ctx context.Context, r LinesRequest) (LinesResult, error) {
	return ask[LinesResult](ctx, c, RouteFileLines, r, maxAnswerHead)
}

// SetMetadata replaces a file's metadata in a namespace and returns the
// file with it.
func (c *Client) SetMetadata(ctx context.Context, r MetadataRequest) (FileInfo, error) {
	return ask[FileInfo](ctx, c, RouteFileMeta, r, maxAnswerHead)
}

// Mkdir makes a directory.
func (c *Client) Mkdir(ctx context.Context, r MkdirRequest) (FileInfo, error) {
	return ask[FileInfo](ctx, c, RouteFileMkdir, r, maxAnswerHead)
}

// Move renames a path.
func (c *Client) Move(ctx context.Context, r MoveRequest) (FileInfo, error) {
	return ask[FileInfo](ctx, c, RouteFileMove, r, maxAnswerHead)
}

// Remove removes a path.
func (c *Client) Remove(ctx context.Context, r RemoveRequest) (RemoveResult, error) {
	return ask[RemoveResult](ctx, c, RouteFileRemove, r, maxAnswerHead)
}

// Find globs for paths.
func (c *Client) Find(ctx context.Context, r FindRequest) (FindResult, error) {
	return ask[FindResult](ctx, c, RouteFileFind, r, maxLargeAnswerHead)
}

// Search greps files.
func (c *Client) Search(ctx context.Context, r SearchRequest) (SearchResult, error) {
	return ask[SearchResult](ctx, c, RouteFileSearch, r, maxLargeAnswerHead)
}

// Edit changes a file in place.
func (c *Client) Edit(ctx context.Context, r EditRequest) (EditResult, error) {
	return ask[EditResult](ctx, c, RouteFileEdit, r, maxAnswerHead)
}

// WatchStream is an open watch. Next blocks for the next event; Close ends
// the watch.
type WatchStream struct {
	body io.Closer
	next func() (FileEvent, error)
}

// maxEventLine bounds one event line (two paths and a little JSON).
const maxEventLine = 4*MaxPathLen + 1024

// Watch starts watching; the first event is EventReady.
func (c *Client) Watch(ctx context.Context, r WatchRequest) (*WatchStream, error) {
	a, err := c.call(ctx, RouteFileWatch, r, nil, 0, false)
	if err != nil {
		return nil, err
	}
	if err := a.head(nil); err != nil {
		a.close()
		return nil, err
	}
	ended := false
	return &WatchStream{body: a.resp.Body, next: func() (FileEvent, error) {
		if ended {
			return FileEvent{}, io.EOF
		}
		typ, p, err := a.fr.NextMax(maxEventLine)
		if err != nil {
			return FileEvent{}, unavailable(ctx, fmt.Errorf("watch stream: %w", err))
		}
		switch typ {
		case FrameEvent:
			var ev FileEvent
			if err := json.Unmarshal(p, &ev); err != nil {
				return FileEvent{}, errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed watch event")
			}
			return ev, nil
		case FrameEnd:
			ended = true
			return FileEvent{}, io.EOF
		case FrameError:
			ended = true
			return FileEvent{}, AsError(p)
		}
		return FileEvent{}, errs.New(errs.CodeUnavailable, "sandbox agent sent an unexpected frame in a watch")
	}}, nil
}

// NewWatchStream reads events, one JSON object per line, from body (the
// REST API's watch stream).
func NewWatchStream(body io.ReadCloser) *WatchStream {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 4096), maxEventLine)
	return &WatchStream{body: body, next: func() (FileEvent, error) {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return FileEvent{}, fmt.Errorf("watch stream: %w", err)
			}
			return FileEvent{}, io.EOF
		}
		var ev FileEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return FileEvent{}, errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed watch event")
		}
		return ev, nil
	}}
}

// Next returns the next event; io.EOF when the stream ended cleanly.
func (w *WatchStream) Next() (FileEvent, error) { return w.next() }

// Close ends the watch.
func (w *WatchStream) Close() error { return w.body.Close() }

// IsRange reports whether err is a RangeError, returning it.
func IsRange(err error) (*RangeError, bool) {
	var re *RangeError
	ok := errors.As(err, &re)
	return re, ok
}
