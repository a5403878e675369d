package api

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// The files API (docs/files.md). Bulk bodies are passed straight through:
// the request body goes to the guest as it arrives, and the guest's answer
// is copied to the client as it arrives, so a gigabyte costs the server a
// buffer, not a gigabyte.

func (s *Server) fileRoutes() {
	const base = "/v1/sandboxes/{id}/files"
	s.authed("GET "+base, rights.Read, s.readFile)
	s.authed("PUT "+base, rights.Write, s.writeFile)
	s.authed("DELETE "+base, rights.Write, s.removeFile)
	s.authed("GET "+base+"/stat", rights.Read, s.statFile)
	s.authed("GET "+base+"/list", rights.Read, s.listFiles)
	s.authed("GET "+base+"/lines", rights.Read, s.readLines)
	s.authed("POST "+base+"/mkdir", rights.Write, s.mkdir)
	s.authed("POST "+base+"/move", rights.Write, s.moveFile)
	s.authed("POST "+base+"/edit", rights.Write, s.editFile)
	s.authed("GET "+base+"/find", rights.Read, s.findFiles)
	s.authed("GET "+base+"/search", rights.Read, s.searchFiles)
	s.authed("GET "+base+"/archive", rights.Read, s.downloadArchive)
	s.authed("POST "+base+"/archive", rights.Write, s.uploadArchive)
	s.authed("GET "+base+"/watch", rights.Read, s.watchFiles)
}

// fileQuery parses the query strictly: a malformed escape or an unknown
// parameter (a typo such as "recursiv") is an error, not ignored.
func fileQuery(r *http.Request, allowed ...string) (*query, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, errs.Invalid("malformed query string (bad %%-escape?)")
	}
	for k := range v {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			return nil, errs.Invalid("unknown query parameter %q (this endpoint takes: %s)", clipPath(k), strings.Join(allowed, ", "))
		}
		if len(v[k]) > 1 {
			return nil, errs.Invalid("query parameter %q given more than once", clipPath(k))
		}
	}
	return &query{v: v}, nil
}

// fileRequest is the preamble of a file handler: it parses the query
// strictly (fileQuery) and builds the request from it; on a bad query it
// writes the error answer and reports false.
func fileRequest[Req any](w http.ResponseWriter, r *http.Request, build func(*query) Req, allowed ...string) (Req, bool) {
	q, err := fileQuery(r, allowed...)
	if err != nil {
		writeError(w, r, err)
		var zero Req
		return zero, false
	}
	req := build(q)
	if q.err != nil {
		writeError(w, r, q.err)
		return req, false
	}
	return req, true
}

// queryCall is the whole of a file handler that builds its request from
// the query (fileRequest), calls a manager method on the sandbox in the
// path and answers its result.
func queryCall[Req, Res any](w http.ResponseWriter, r *http.Request, sc sandbox.Scope, build func(*query) Req, allowed []string,
	call func(context.Context, sandbox.Scope, string, Req) (Res, error)) {
	if req, ok := fileRequest(w, r, build, allowed...); ok {
		res, err := call(r.Context(), sc, r.PathValue("id"), req)
		reply(w, r, res, err)
	}
}

func (s *Server) readFile(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	q, err := fileQuery(r, "path", "offset", "length", "user")
	if err != nil {
		writeError(w, r, err)
		return
	}
	req := sandbox.ReadFileRequest{Path: q.str("path"), User: q.str("user"), Offset: q.int("offset"), Length: q.int("length")}
	if q.err != nil {
		writeError(w, r, q.err)
		return
	}
	if q.str("length") != "" && req.Length <= 0 {
		writeError(w, r, errs.Invalid("length must be positive (leave it out to read to the end)"))
		return
	}
	ranged := false
	if h := r.Header.Get("Range"); h != "" {
		if q.str("offset") != "" || q.str("length") != "" {
			writeError(w, r, errs.Invalid("give a Range header or offset/length, not both"))
			return
		}
		if req.Offset, req.Length, req.Suffix, err = parseByteRange(h); err != nil {
			writeError(w, r, err)
			return
		}
		ranged = true
	}
	fr, err := s.m.ReadFile(r.Context(), sc, r.PathValue("id"), req)
	if re, ok := sandbox.IsRange(err); ok {
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(re.Size, 10))
		fileStatusError(w, http.StatusRequestedRangeNotSatisfiable, err)
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer fr.Body.Close()
	if ranged && fr.Size >= 0 && fr.Offset >= fr.Size && req.Suffix == 0 {
		// HTTP: a range must start inside the file (offset/length may
		// name the end, which reads nothing).
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(fr.Size, 10))
		fileStatusError(w, http.StatusRequestedRangeNotSatisfiable,
			errs.Invalid("range starts at %d, past the last byte of the file (%d bytes)", fr.Offset, fr.Size))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Accept-Ranges", "bytes")
	if fr.Length >= 0 {
		h.Set("Content-Length", strconv.FormatInt(fr.Length, 10))
	}
	// A /proc or /sys file has no size until read: no length, no size.
	if fr.Size >= 0 {
		h.Set(wire.HeaderSize, strconv.FormatInt(fr.Size, 10))
	}
	h.Set(wire.HeaderMode, fr.Mode)
	if !fr.MTime.IsZero() {
		h.Set("Last-Modified", fr.MTime.UTC().Format(http.TimeFormat))
	}
	status := http.StatusOK
	if ranged && fr.Size >= 0 && fr.Length >= 0 {
		status = http.StatusPartialContent
		end := fr.Offset + fr.Length - 1
		h.Set("Content-Range", "bytes "+strconv.FormatInt(fr.Offset, 10)+"-"+strconv.FormatInt(end, 10)+"/"+strconv.FormatInt(fr.Size, 10))
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, fr.Body); err != nil {
		// The status is out: cut the connection so the client sees the
		// short body as an error.
		s.log.Debug("file read stream ended early", "err", err)
		panic(http.ErrAbortHandler)
	}
}

// parseRange reads one "bytes=" range: a-b, a- or -n.
func parseByteRange(h string) (off, length, suffix int64, err error) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	bad := errs.Invalid("Range %q is not a single byte range (bytes=START-END, bytes=START- or bytes=-COUNT)", clipPath(h))
	if !ok || strings.Contains(spec, ",") {
		return 0, 0, 0, bad
	}
	a, b, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return 0, 0, 0, bad
	}
	num := func(s string) (int64, bool) {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil && n >= 0
	}
	switch {
	case a == "" && b != "":
		n, ok := num(b)
		if !ok || n == 0 {
			return 0, 0, 0, bad
		}
		return 0, 0, n, nil
	case a != "" && b == "":
		n, ok := num(a)
		if !ok {
			return 0, 0, 0, bad
		}
		return n, 0, 0, nil
	case a != "" && b != "":
		x, ok1 := num(a)
		y, ok2 := num(b)
		if !ok1 || !ok2 || y < x {
			return 0, 0, 0, bad
		}
		if y-x >= math.MaxInt64-1 {
			return x, 0, 0, nil // to the end (y-x+1 would overflow)
		}
		return x, y - x + 1, 0, nil
	}
	return 0, 0, 0, bad
}

// fileStatusError writes the error shape with an explicit status.
func fileStatusError(w http.ResponseWriter, status int, err error) {
	var body ErrorBody
	body.Error.Code = string(errs.CodeOf(err))
	body.Error.Message = errs.Public(err)
	writeJSON(w, status, body)
}

func (s *Server) writeFile(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	queryCall(w, r, sc, func(q *query) sandbox.WriteRequest {
		return sandbox.WriteRequest{Path: q.str("path"), User: q.str("user"), Mode: q.str("mode"), Parents: q.bool("parents"), Owner: q.str("owner")}
	}, []string{"path", "mode", "parents", "user"}, func(ctx context.Context, sc sandbox.Scope, id string, req sandbox.WriteRequest) (sandbox.FileInfo, error) {
		return s.m.WriteFile(ctx, sc, id, req, r.Body, r.ContentLength)
	})
}

func (s *Server) removeFile(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	queryCall(w, r, sc, func(q *query) sandbox.RemoveRequest {
		return sandbox.RemoveRequest{Path: q.str("path"), User: q.str("user"), Recursive: q.bool("recursive")}
	}, []string{"path", "recursive", "user"}, s.m.RemoveFile)
}

func (s *Server) statFile(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	queryCall(w, r, sc, func(q *query) sandbox.StatRequest {
		return sandbox.StatRequest{Path: q.str("path"), User: q.str("user"), Follow: q.bool("follow")}
	}, []string{"path", "follow", "user"}, s.m.StatFile)
}

func (s *Server) readLines(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	queryCall(w, r, sc, func(q *query) sandbox.LinesRequest {
		return sandbox.LinesRequest{Path: q.str("path"), User: q.str("user"), Start: int(q.int("start")), End: int(q.int("end")),
			MaxBytes: int(q.int("max_bytes"))}
	}, []string{"path", "start", "end", "max_bytes", "user"}, s.m.ReadLines)
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	queryCall(w, r, sc, func(q *query) sandbox.ListRequest {
		return sandbox.ListRequest{Path: q.str("path"), User: q.str("user"), Depth: int(q.int("depth")), Limit: int(q.int("limit"))}
	}, []string{"path", "depth", "limit", "user"}, func(ctx context.Context, sc sandbox.Scope, id string, req sandbox.ListRequest) (sandbox.ListResult, error) {
		res, err := s.m.ListFiles(ctx, sc, id, req)
		if res.Entries == nil {
			res.Entries = []wire.FileInfo{}
		}
		return res, err
	})
}

func (s *Server) mkdir(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	jsonCall(w, r, sc, s.m.MakeDir)
}

func (s *Server) moveFile(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	jsonCall(w, r, sc, s.m.MoveFile)
}

// maxEditBody bounds an edit's JSON (it carries file content, escaped).
const maxEditBody = 2*sandbox.MaxEditBytes + 64<<10

func (s *Server) editFile(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	var req sandbox.EditRequest
	if err := decodeFileJSON(r, &req, maxEditBody); err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.m.EditFile(r.Context(), sc, r.PathValue("id"), req)
	reply(w, r, res, err)
}

// decodeFileJSON is decode with a larger size bound (and no default
// for an empty body).
func decodeFileJSON(r *http.Request, v any, max int64) error { return decodeBody(r, v, max, false) }

func (s *Server) findFiles(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	queryCall(w, r, sc, func(q *query) sandbox.FindRequest {
		return sandbox.FindRequest{Path: q.str("path"), User: q.str("user"), Pattern: q.str("pattern"), Type: q.str("type"),
			Limit: int(q.int("limit"))}
	}, []string{"path", "pattern", "type", "limit", "user"}, s.m.FindFiles)
}

func (s *Server) searchFiles(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	queryCall(w, r, sc, func(q *query) sandbox.SearchRequest {
		return sandbox.SearchRequest{Path: q.str("path"), User: q.str("user"), Query: q.str("query"), Regexp: q.bool("regexp"),
			IgnoreCase: q.bool("ignore_case"), Include: q.str("include"), Limit: int(q.int("limit")), MaxFileSize: q.int("max_file_size")}
	}, []string{"path", "query", "regexp", "ignore_case", "include", "limit", "max_file_size", "user"}, s.m.SearchFiles)
}

func (s *Server) downloadArchive(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	req, ok := fileRequest(w, r, func(q *query) sandbox.ArchiveRequest {
		return sandbox.ArchiveRequest{Path: q.str("path"), User: q.str("user"), Gzip: q.bool("gzip")}
	}, "path", "gzip", "user")
	if !ok {
		return
	}
	body, err := s.m.DownloadArchive(r.Context(), sc, r.PathValue("id"), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer body.Close()
	name := "workspace.tar"
	if req.Path != "" {
		name = path.Base(req.Path) + ".tar"
	}
	ct := "application/x-tar"
	if req.Gzip {
		name += ".gz"
		ct = "application/gzip"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", `attachment; filename="`+attachmentName(name)+`"`)
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, body); err != nil {
		// Abort rather than end cleanly: a cut archive must not look whole.
		s.log.Debug("archive stream ended early", "err", err)
		panic(http.ErrAbortHandler)
	}
}

// attachmentName keeps a Content-Disposition filename to harmless bytes.
func attachmentName(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c > 0x7e {
			c = '_'
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (s *Server) uploadArchive(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	queryCall(w, r, sc, func(q *query) sandbox.ExtractRequest {
		return sandbox.ExtractRequest{Path: q.str("path"), User: q.str("user"), MaxEntries: q.int("max_entries"), MaxRatio: q.float("max_ratio")}
	}, []string{"path", "user", "max_entries", "max_ratio"}, func(ctx context.Context, sc sandbox.Scope, id string, req sandbox.ExtractRequest) (sandbox.ExtractResult, error) {
		return s.m.UploadArchive(ctx, sc, id, req, r.Body, r.ContentLength)
	})
}

func (s *Server) watchFiles(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	req, ok := fileRequest(w, r, func(q *query) sandbox.WatchRequest {
		return sandbox.WatchRequest{Path: q.str("path"), User: q.str("user"), Recursive: q.bool("recursive")}
	}, "path", "recursive", "user")
	if !ok {
		return
	}
	watch, err := s.m.WatchFiles(r.Context(), sc, r.PathValue("id"), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer watch.Close()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	for {
		ev, err := watch.Next()
		if err != nil {
			if err != io.EOF && r.Context().Err() == nil {
				_ = enc.Encode(sandbox.FileEvent{Type: wire.EventError, Error: errs.Public(err)})
			}
			return
		}
		if err := enc.Encode(ev); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}
