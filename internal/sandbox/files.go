package sandbox

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// The files API: every operation runs inside the sandbox, through its
// guest, so paths resolve in the sandbox's own root. The manager scopes
// the caller, validates, audits (intent before, result after; an intent
// that cannot be recorded aborts) and streams bodies through unbuffered.

// Types of the files API (package wire: the REST API's shapes).
type (
	FileInfo        = wire.FileInfo
	ReadFileRequest = wire.ReadRequest
	File            = wire.File
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
	FindResult      = wire.FindResult
	SearchRequest   = wire.SearchRequest
	SearchResult    = wire.SearchResult
	SearchMatch     = wire.SearchMatch
	EditRequest     = wire.EditRequest
	EditResult      = wire.EditResult
)

// Bounds of the files API a caller may want to know before asking.
const (
	MaxEditBytes = guestapi.MaxEditBytes // old, new and content of one edit together
	MaxListDepth = guestapi.MaxListDepth // levels of one listing
	MaxListLimit = guestapi.MaxListLimit // entries of one listing
)

// RangeError is a read range that starts past the end of the file.
type RangeError struct {
	Size int64 // the file's size
	Err  error
}

func (e *RangeError) Error() string { return e.Err.Error() }

// Unwrap exposes the coded error.
func (e *RangeError) Unwrap() error { return e.Err }

// IsRange reports whether err is a *RangeError.
func IsRange(err error) (*RangeError, bool) {
	var re *RangeError
	if errors.As(err, &re) {
		return re, true
	}
	return nil, false
}

// FileLimits bound the files API. The sandbox's disk quota applies on top.
type FileLimits struct {
	MaxUploadBytes    int64   // one write or archive upload, expanded (default 16 GiB)
	MaxArchiveEntries int64   // entries of one archive upload (default 200000)
	MaxArchiveRatio   float64 // expanded bytes per uploaded byte (default 200)
}

// DefaultMaxUpload is the default cap of one upload.
const DefaultMaxUpload = 16 << 30

func (m *Manager) fileLimits() FileLimits {
	l := m.cfg.Files
	if l.MaxUploadBytes <= 0 {
		l.MaxUploadBytes = DefaultMaxUpload
	}
	if l.MaxArchiveEntries <= 0 {
		l.MaxArchiveEntries = guestapi.DefaultMaxEntries
	}
	if l.MaxArchiveRatio <= 0 {
		l.MaxArchiveRatio = guestapi.DefaultMaxRatio
	}
	return l
}

// FileLimits returns the limits in force (defaults filled).
func (m *Manager) FileLimits() FileLimits { return m.fileLimits() }

// fileAct scopes the caller to a running sandbox, records the intent of
// kind, runs fn with the guest and records its result.
func (m *Manager) fileAct(ctx context.Context, sc Scope, id, kind string, intent map[string]any, fn func(g *guestapi.Client) (map[string]any, error)) error {
	g, _, err := m.guest(sc, id)
	if err != nil {
		return err
	}
	if err := m.event(ctx, Event{Kind: kind, Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Data: intent}); err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	data, err := fn(g)
	if err == errStreaming {
		return err // recorded when the stream ends
	}
	m.fileResult(ctx, sc, id, kind, start, data, err)
	return err
}

func (m *Manager) fileResult(ctx context.Context, sc Scope, id, kind string, start time.Time, data map[string]any, err error) {
	ev := Event{Kind: kind, Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id, Duration: time.Since(start), Data: data}
	if err != nil {
		ev.Error, ev.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(context.WithoutCancel(ctx), ev)
}

// cleanIn validates a path and a user; it returns the path made absolute.
func cleanIn(field, p, user string) (string, error) {
	if err := validUser(user); err != nil {
		return "", err
	}
	c, err := guestapi.CleanPath(p)
	if err != nil {
		if field != "path" {
			return "", errs.Invalid("%s: %s", field, errs.Public(err))
		}
		return "", err
	}
	return c, nil
}

func validUser(u string) error {
	switch u {
	case "", wire.UserRoot, wire.UserUser:
		return nil
	}
	return errs.Invalid("user must be %q or %q", wire.UserRoot, wire.UserUser)
}

// ReadFile opens a file (or a byte range of it) in sandbox id. Close the
// body; its result event is recorded then, with the bytes sent. A range
// that starts past the end is a *RangeError.
func (m *Manager) ReadFile(ctx context.Context, sc Scope, id string, req ReadFileRequest) (*File, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	var err error
	if req.Path, err = cleanIn("path", req.Path, req.User); err != nil {
		return nil, err
	}
	if req.Offset < 0 || req.Length < 0 || req.Suffix < 0 {
		return nil, errs.Invalid("offset, length and suffix must not be negative")
	}
	var fr *guestapi.FileReader
	var start time.Time
	err = m.fileAct(ctx, sc, id, "file.read", map[string]any{"path": req.Path, "offset": req.Offset, "length": req.Length,
		"user": req.User}, func(g *guestapi.Client) (map[string]any, error) {
		start = time.Now()
		var err error
		fr, err = g.ReadFile(ctx, guestRead(req))
		if re, ok := guestapi.IsRange(err); ok {
			return nil, &RangeError{Size: re.Size, Err: re.Err}
		}
		if err != nil {
			return nil, err
		}
		// The result is recorded when the caller is done with the body.
		return nil, errStreaming
	})
	if err == errStreaming {
		body := &auditedBody{ReadCloser: fr.Body, done: func(n int64, err error) {
			m.fileResult(ctx, sc, id, "file.read", start, map[string]any{"path": req.Path, "bytes": n, "size": fr.Size}, err)
		}}
		return &File{Body: body, Size: fr.Size, Offset: fr.Offset, Length: fr.Length, Mode: fr.Mode, MTime: fr.MTime}, nil
	}
	return nil, err
}

// errStreaming tells fileAct's caller that the result is recorded later.
var errStreaming = errs.New(errs.CodeInternal, "streaming")

// fileActStream is fileAct for operations whose result comes when a
// stream ends: fn returns the stream, recorded on Close.
func (m *Manager) fileActStream(ctx context.Context, sc Scope, id, kind string, intent map[string]any, fn func(g *guestapi.Client) (io.ReadCloser, error)) (io.ReadCloser, error) {
	var rc io.ReadCloser
	var start time.Time
	err := m.fileAct(ctx, sc, id, kind, intent, func(g *guestapi.Client) (map[string]any, error) {
		start = time.Now()
		var err error
		if rc, err = fn(g); err != nil {
			return nil, err
		}
		return nil, errStreaming
	})
	if err != errStreaming {
		return nil, err
	}
	return &auditedBody{ReadCloser: rc, done: func(n int64, err error) {
		m.fileResult(ctx, sc, id, kind, start, map[string]any{"path": intent["path"], "bytes": n}, err)
	}}, nil
}

// auditedBody counts a streamed body and reports once when it is closed.
// A body that ended with an error (other than EOF) reports that error.
type auditedBody struct {
	io.ReadCloser
	n    int64
	err  error
	once sync.Once
	done func(n int64, err error)
}

func (a *auditedBody) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	a.n += int64(n)
	if err != nil && err != io.EOF && a.err == nil {
		a.err = errs.Wrap(errs.CodeUnavailable, err, "the stream from the sandbox broke off")
	}
	return n, err
}

// WriteTo copies with large buffers (see guestapi.CopyBufferSize).
func (a *auditedBody) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, guestapi.CopyBufferSize)
	var total int64
	for {
		n, err := a.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (a *auditedBody) Close() error {
	err := a.ReadCloser.Close()
	a.once.Do(func() { a.done(a.n, a.err) })
	return err
}

// WriteFile streams body (size bytes, or -1 if unknown) into a file. The
// file is replaced only when the whole body arrived.
func (m *Manager) WriteFile(ctx context.Context, sc Scope, id string, req WriteRequest, body io.Reader, size int64) (FileInfo, error) {
	fi, err := m.writeFile(ctx, sc, id, req, metaOpt{}, body, size)
	return wireFile(fi), err
}

func (m *Manager) writeFile(ctx context.Context, sc Scope, id string, req WriteRequest, mo metaOpt, body io.Reader, size int64) (guestapi.FileInfo, error) {
	var fi guestapi.FileInfo
	if err := sc.Need(rights.Write); err != nil {
		return fi, err
	}
	var err error
	if req.Path, err = cleanIn("path", req.Path, req.User); err != nil {
		return fi, err
	}
	if req.Mode != "" {
		if _, err := guestapi.ParseMode(req.Mode); err != nil {
			return fi, err
		}
	}
	lim := m.fileLimits()
	if size > lim.MaxUploadBytes {
		return fi, errs.New(errs.CodeTooLarge, "the upload (%d bytes) exceeds the limit of %d bytes", size, lim.MaxUploadBytes)
	}
	if req.MaxBytes <= 0 || req.MaxBytes > lim.MaxUploadBytes {
		req.MaxBytes = lim.MaxUploadBytes
	}
	intent := map[string]any{"path": req.Path, "size": size, "mode": req.Mode, "parents": req.Parents, "user": req.User}
	gr := guestWrite(req)
	if mo.ns != "" {
		if err := guestapi.ValidMetadata(mo.ns, mo.kv); err != nil {
			return fi, err
		}
		gr.MetadataNamespace, gr.Metadata, gr.ReplaceMetadata = mo.ns, mo.kv, true
		intent["metadata_namespace"], intent["metadata_keys"] = mo.ns, len(mo.kv)
	}
	err = m.fileAct(ctx, sc, id, "file.write", intent, func(g *guestapi.Client) (map[string]any, error) {
		var err error
		fi, err = g.WriteFile(ctx, gr, body, size)
		if err != nil {
			return nil, err
		}
		return map[string]any{"bytes": fi.Size}, nil
	})
	return fi, err
}

// StatFile describes one path (lstat, or the target with Follow).
func (m *Manager) StatFile(ctx context.Context, sc Scope, id string, req StatRequest) (FileInfo, error) {
	fi, err := m.statFile(ctx, sc, id, req, "")
	return wireFile(fi), err
}

// statFile is StatFile, reporting the metadata of namespace ns ("": none).
func (m *Manager) statFile(ctx context.Context, sc Scope, id string, req StatRequest, ns string) (guestapi.FileInfo, error) {
	var fi guestapi.FileInfo
	if err := sc.Need(rights.Read); err != nil {
		return fi, err
	}
	var err error
	if req.Path, err = cleanIn("path", req.Path, req.User); err != nil {
		return fi, err
	}
	gr := guestStat(req)
	gr.Metadata = ns
	err = m.fileAct(ctx, sc, id, "file.stat", map[string]any{"path": req.Path, "user": req.User},
		func(g *guestapi.Client) (map[string]any, error) {
			var err error
			fi, err = g.Stat(ctx, gr)
			return nil, err
		})
	return fi, err
}

// ListFiles lists a directory.
func (m *Manager) ListFiles(ctx context.Context, sc Scope, id string, req ListRequest) (ListResult, error) {
	res, err := m.listFiles(ctx, sc, id, req, "")
	if err != nil {
		return ListResult{}, err
	}
	return wireListResult(res), nil
}

// listFiles is ListFiles, reporting each entry's metadata of namespace ns
// ("": none).
func (m *Manager) listFiles(ctx context.Context, sc Scope, id string, req ListRequest, ns string) (guestapi.ListResult, error) {
	if err := sc.Need(rights.Read); err != nil {
		return guestapi.ListResult{}, err
	}
	var err error
	if req.Path, err = cleanIn("path", orWorkspace(req.Path), req.User); err != nil {
		return guestapi.ListResult{}, err
	}
	if req.Depth < 0 || req.Depth > guestapi.MaxListDepth {
		return guestapi.ListResult{}, errs.Invalid("depth must be between 1 and %d", guestapi.MaxListDepth)
	}
	if req.Limit < 0 || req.Limit > guestapi.MaxListLimit {
		return guestapi.ListResult{}, errs.Invalid("limit must be between 1 and %d", guestapi.MaxListLimit)
	}
	var res guestapi.ListResult
	err = m.fileAct(ctx, sc, id, "file.list", map[string]any{"path": req.Path, "depth": req.Depth, "user": req.User},
		func(g *guestapi.Client) (map[string]any, error) {
			gr := guestList(req)
			gr.Metadata = ns
			raw, err := g.ListRaw(ctx, gr)
			if err != nil {
				return nil, err
			}
			if res, err = guestapi.DecodeList(raw.JSON); err != nil {
				return nil, errs.Wrap(errs.CodeUnavailable, err, "the sandbox sent a malformed listing")
			}
			return map[string]any{"entries": raw.Entries, "truncated": raw.Truncated}, nil
		})
	return res, err
}

// MakeDir makes a directory (with Parents: mkdir -p).
func (m *Manager) MakeDir(ctx context.Context, sc Scope, id string, req MkdirRequest) (FileInfo, error) {
	if err := sc.Need(rights.Write); err != nil {
		return FileInfo{}, err
	}
	var err error
	if req.Path, err = cleanIn("path", req.Path, req.User); err != nil {
		return FileInfo{}, err
	}
	if req.Mode != "" {
		if _, err := guestapi.ParseMode(req.Mode); err != nil {
			return FileInfo{}, err
		}
	}
	var fi FileInfo
	err = m.fileAct(ctx, sc, id, "file.mkdir", map[string]any{"path": req.Path, "parents": req.Parents, "mode": req.Mode,
		"user": req.User}, func(g *guestapi.Client) (map[string]any, error) {
		var err error
		gfi, err := g.Mkdir(ctx, guestMkdir(req))
		fi = wireFile(gfi)
		return nil, err
	})
	return fi, err
}

// MoveFile renames a path.
func (m *Manager) MoveFile(ctx context.Context, sc Scope, id string, req MoveRequest) (FileInfo, error) {
	if err := sc.Need(rights.Write); err != nil {
		return FileInfo{}, err
	}
	var err error
	if req.From, err = cleanIn("from", req.From, req.User); err != nil {
		return FileInfo{}, err
	}
	if req.To, err = cleanIn("to", req.To, req.User); err != nil {
		return FileInfo{}, err
	}
	var fi FileInfo
	err = m.fileAct(ctx, sc, id, "file.move", map[string]any{"from": req.From, "to": req.To, "overwrite": req.Overwrite,
		"user": req.User}, func(g *guestapi.Client) (map[string]any, error) {
		var err error
		gfi, err := g.Move(ctx, guestMove(req))
		fi = wireFile(gfi)
		return nil, err
	})
	return fi, err
}

// RemoveFile removes a path (a non-empty directory needs Recursive).
func (m *Manager) RemoveFile(ctx context.Context, sc Scope, id string, req RemoveRequest) (RemoveResult, error) {
	if err := sc.Need(rights.Write); err != nil {
		return RemoveResult{}, err
	}
	var err error
	if req.Path, err = cleanIn("path", req.Path, req.User); err != nil {
		return RemoveResult{}, err
	}
	var res RemoveResult
	err = m.fileAct(ctx, sc, id, "file.remove", map[string]any{"path": req.Path, "recursive": req.Recursive, "user": req.User},
		func(g *guestapi.Client) (map[string]any, error) {
			var err error
			gres, err := g.Remove(ctx, guestRemove(req))
			res = RemoveResult{Removed: gres.Removed}
			return map[string]any{"removed": res.Removed}, err
		})
	return res, err
}

// DownloadArchive streams a directory (or file) as tar, gzip'd if asked.
func (m *Manager) DownloadArchive(ctx context.Context, sc Scope, id string, req ArchiveRequest) (io.ReadCloser, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	var err error
	if req.Path, err = cleanIn("path", orWorkspace(req.Path), req.User); err != nil {
		return nil, err
	}
	return m.fileActStream(ctx, sc, id, "file.archive.download", map[string]any{"path": req.Path, "gzip": req.Gzip, "user": req.User},
		func(g *guestapi.Client) (io.ReadCloser, error) { return g.Archive(ctx, guestArchive(req)) })
}

// UploadArchive extracts a tar (or tar.gz) body into a directory.
func (m *Manager) UploadArchive(ctx context.Context, sc Scope, id string, req ExtractRequest, body io.Reader, size int64) (ExtractResult, error) {
	if err := sc.Need(rights.Write); err != nil {
		return ExtractResult{}, err
	}
	var err error
	if req.Path, err = cleanIn("path", orWorkspace(req.Path), req.User); err != nil {
		return ExtractResult{}, err
	}
	lim := m.fileLimits()
	if size > lim.MaxUploadBytes {
		return ExtractResult{}, errs.New(errs.CodeTooLarge, "the upload (%d bytes) exceeds the limit of %d bytes", size, lim.MaxUploadBytes)
	}
	if req.MaxBytes <= 0 || req.MaxBytes > lim.MaxUploadBytes {
		req.MaxBytes = lim.MaxUploadBytes
	}
	if req.MaxEntries <= 0 || req.MaxEntries > lim.MaxArchiveEntries {
		req.MaxEntries = lim.MaxArchiveEntries
	}
	if req.MaxRatio <= 0 || req.MaxRatio > lim.MaxArchiveRatio {
		req.MaxRatio = lim.MaxArchiveRatio
	}
	var res ExtractResult
	err = m.fileAct(ctx, sc, id, "file.archive.upload", map[string]any{"path": req.Path, "size": size, "user": req.User},
		func(g *guestapi.Client) (map[string]any, error) {
			var err error
			gres, err := g.Extract(ctx, guestExtract(req), body, size)
			res = wireExtract(gres)
			return map[string]any{"files": res.Files, "dirs": res.Dirs, "bytes": res.Bytes, "stripped_setid": res.Stripped}, err
		})
	return res, err
}

// FileWatch is an open watch: Next blocks for the next event (io.EOF at
// the end); Close ends it and records the result.
type FileWatch struct {
	s    *guestapi.WatchStream
	n    int64
	once sync.Once
	done func(n int64)
}

// Next returns the next event.
func (w *FileWatch) Next() (FileEvent, error) {
	ev, err := w.s.Next()
	if err == nil {
		w.n++
	}
	return wireFileEvent(ev), err
}

// Close ends the watch.
func (w *FileWatch) Close() error {
	err := w.s.Close()
	w.once.Do(func() { w.done(w.n) })
	return err
}

// WatchFiles streams changes under a path. The first event is "ready".
func (m *Manager) WatchFiles(ctx context.Context, sc Scope, id string, req WatchRequest) (*FileWatch, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	var err error
	if req.Path, err = cleanIn("path", orWorkspace(req.Path), req.User); err != nil {
		return nil, err
	}
	var s *guestapi.WatchStream
	var start time.Time
	err = m.fileAct(ctx, sc, id, "file.watch", map[string]any{"path": req.Path, "recursive": req.Recursive, "user": req.User},
		func(g *guestapi.Client) (map[string]any, error) {
			start = time.Now()
			var err error
			if s, err = g.Watch(ctx, guestWatch(req)); err != nil {
				return nil, err
			}
			return nil, errStreaming
		})
	if err != errStreaming {
		return nil, err
	}
	return &FileWatch{s: s, done: func(n int64) {
		m.fileResult(ctx, sc, id, "file.watch", start, map[string]any{"path": req.Path, "events": n}, nil)
	}}, nil
}

// FindFiles globs for paths under a directory.
func (m *Manager) FindFiles(ctx context.Context, sc Scope, id string, req FindRequest) (FindResult, error) {
	if err := sc.Need(rights.Read); err != nil {
		return FindResult{}, err
	}
	var err error
	if req.Path, err = cleanIn("path", orWorkspace(req.Path), req.User); err != nil {
		return FindResult{}, err
	}
	if req.Pattern == "" {
		return FindResult{}, errs.Invalid("pattern is required (e.g. **/*.go)")
	}
	if len(req.Pattern) > guestapi.MaxPatternLen || strings.IndexByte(req.Pattern, 0) >= 0 {
		return FindResult{}, errs.Invalid("pattern must be at most %d bytes, without NUL", guestapi.MaxPatternLen)
	}
	if req.Limit < 0 || req.Limit > guestapi.MaxFindLimit {
		return FindResult{}, errs.Invalid("limit must be between 1 and %d", guestapi.MaxFindLimit)
	}
	var res FindResult
	err = m.fileAct(ctx, sc, id, "file.find", map[string]any{"path": req.Path, "pattern": req.Pattern, "user": req.User},
		func(g *guestapi.Client) (map[string]any, error) {
			var err error
			gres, err := g.Find(ctx, guestFind(req))
			res = wireFind(gres)
			return map[string]any{"matches": len(res.Matches), "truncated": res.Truncated}, err
		})
	return res, err
}

// SearchFiles greps files under a path.
func (m *Manager) SearchFiles(ctx context.Context, sc Scope, id string, req SearchRequest) (SearchResult, error) {
	if err := sc.Need(rights.Read); err != nil {
		return SearchResult{}, err
	}
	var err error
	if req.Path, err = cleanIn("path", orWorkspace(req.Path), req.User); err != nil {
		return SearchResult{}, err
	}
	if req.Query == "" {
		return SearchResult{}, errs.Invalid("query is required")
	}
	if len(req.Query) > guestapi.MaxPatternLen || len(req.Include) > guestapi.MaxPatternLen {
		return SearchResult{}, errs.Invalid("query and include must be at most %d bytes", guestapi.MaxPatternLen)
	}
	if req.Limit < 0 || req.Limit > guestapi.MaxSearchLimit {
		return SearchResult{}, errs.Invalid("limit must be between 1 and %d", guestapi.MaxSearchLimit)
	}
	if req.MaxFileSize < 0 || req.MaxFileSize > guestapi.MaxSearchMaxFile {
		return SearchResult{}, errs.Invalid("max_file_size must be between 1 and %d", guestapi.MaxSearchMaxFile)
	}
	var res SearchResult
	err = m.fileAct(ctx, sc, id, "file.search", map[string]any{"path": req.Path, "query": req.Query, "regexp": req.Regexp,
		"user": req.User}, func(g *guestapi.Client) (map[string]any, error) {
		var err error
		gres, err := g.Search(ctx, guestSearch(req))
		res = wireSearch(gres)
		return map[string]any{"matches": len(res.Matches), "truncated": res.Truncated, "files_scanned": res.FilesScanned}, err
	})
	return res, err
}

// EditFile changes a file in place (see EditRequest).
func (m *Manager) EditFile(ctx context.Context, sc Scope, id string, req EditRequest) (EditResult, error) {
	if err := sc.Need(rights.Write); err != nil {
		return EditResult{}, err
	}
	var err error
	if req.Path, err = cleanIn("path", req.Path, req.User); err != nil {
		return EditResult{}, err
	}
	if n := len(req.OldString) + len(req.NewString) + len(req.Content); n > guestapi.MaxEditBytes {
		return EditResult{}, errs.New(errs.CodeTooLarge, "the edit carries over %d bytes; write the file instead", guestapi.MaxEditBytes)
	}
	switch {
	case req.StartLine < 0 || req.EndLine < 0:
		return EditResult{}, errs.Invalid("start_line and end_line count from 1")
	case req.StartLine == 0 && req.OldString == "":
		return EditResult{}, errs.Invalid("give old_string (and new_string), or start_line, end_line and content")
	case req.StartLine == 0 && req.EndLine != 0:
		return EditResult{}, errs.Invalid("end_line needs start_line")
	case req.StartLine > 0 && (req.OldString != "" || req.NewString != "" || req.ReplaceAll):
		return EditResult{}, errs.Invalid("old_string/new_string and start_line/end_line are alternatives; give one")
	}
	var res EditResult
	err = m.fileAct(ctx, sc, id, "file.edit", map[string]any{"path": req.Path, "start_line": req.StartLine,
		"end_line": req.EndLine, "replace_all": req.ReplaceAll, "user": req.User}, func(g *guestapi.Client) (map[string]any, error) {
		var err error
		gres, err := g.Edit(ctx, guestEdit(req))
		res = wireEdit(gres)
		return map[string]any{"replacements": res.Replacements, "size": res.File.Size}, err
	})
	return res, err
}

func orWorkspace(p string) string {
	if p == "" {
		return guestapi.Workspace
	}
	return p
}
