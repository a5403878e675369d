package e2b

import (
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// envd: E2B's in-sandbox daemon, served for the sandbox named by the
// E2b-Sandbox-Id header to the holder of its X-Access-Token.

// envdReq is an authenticated envd request.
type envdReq struct {
	sc   sandbox.Scope
	id   string // the sandbox
	user string // root or user, from Authorization: Basic (default user)
}

// maxUploadParts bounds the files of one multipart upload.
const maxUploadParts = 1000

// envd's credential (package gate).
var (
	errNoAccessToken = errs.New(errs.CodeUnauthenticated, "missing X-Access-Token (the envdAccessToken of the sandbox)")
	errNotAccessTok  = errs.New(errs.CodeUnauthenticated, "X-Access-Token must be the envdAccessToken issued for the sandbox")
)

// accessToken finds an envd request's credential: the X-Access-Token the
// control plane issued, which must be a sandbox token. An API key sent
// here (leaked into a sandbox's environment, say) must not open envd of
// the tenant's every sandbox.
func accessToken(r *http.Request) (string, error) {
	return accessTokenFor(r, EnvdPort, strings.TrimSpace(r.Header.Get(hdrAccessToken)))
}

// accessTokenFor is accessToken for the service on port (envd's, the code
// interpreter's), its token tok.
func accessTokenFor(r *http.Request, port, tok string) (string, error) {
	if p := r.Header.Get(hdrSandboxPort); p != "" && p != port {
		return "", errs.New(errs.CodeUnsupported, "only envd (port %s) and the code interpreter (port %s) are served here; reach a sandbox's own ports through Paddock's port API", EnvdPort, CodeInterpreterPort)
	}
	if tok == "" {
		return "", errNoAccessToken
	}
	if parsed, err := auth.ParseToken(tok); err != nil || parsed.Kind != auth.KindToken {
		return "", errNotAccessTok
	}
	return tok, nil
}

// envdVet checks that the token is the sandbox's. The manager would
// refuse another sandbox too; refusing here as well keeps the state this
// adapter holds per sandbox (watchers) behind the same check.
func envdVet(r *http.Request, p auth.Principal) error {
	if p.Sandbox == "" {
		return errNotAccessTok
	}
	// IDOR: a valid token for one sandbox, aimed at another by the header.
	if p.Sandbox != r.Header.Get(hdrSandboxID) {
		return errs.NotFound("sandbox not found")
	}
	return nil
}

// envdGate is the gate of envd's routes, answering errors with fail.
// Health is not vetted against the sandbox: a token for another one is
// told that this one is not running, as envd does.
func (s *Server) envdGate(fail func(http.ResponseWriter, error), health bool) *gate.Gate {
	return s.envdGateWith(fail, health, accessToken)
}

// envdGateWith is envdGate finding the credential with cred.
func (s *Server) envdGateWith(fail func(http.ResponseWriter, error), health bool, cred func(*http.Request) (string, error)) *gate.Gate {
	vet := envdVet
	if health {
		vet = func(r *http.Request, p auth.Principal) error {
			if p.Sandbox == "" {
				return errNotAccessTok
			}
			return nil
		}
	}
	return gate.New(s.o.Auth, s.o.Auditor, s.log, gate.Surface{Name: "E2B envd", Credential: cred, Invalid: errBadCred,
		Unavailable: errCannotAuth, Vet: vet, Limit: s.o.RateLimit, Fail: func(w http.ResponseWriter, _ *http.Request, err error) { fail(w, err) }})
}

// envdRequest is the request the gate let through.
func envdRequest(r *http.Request) (*envdReq, error) {
	h, err := gate.Authorization(r.Header)
	if err != nil {
		return nil, err
	}
	user, err := basicUser(h)
	if err != nil {
		return nil, err
	}
	return &envdReq{sc: gate.Scope(r.Context()), id: r.Header.Get(hdrSandboxID), user: user}, nil
}

func (s *Server) envdRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	health := s.envdGate(writeEnvdError, true)
	s.routes = append(s.routes, Route{Pattern: "GET /health", Open: true, Envd: true})
	mux.Handle("GET /health", health.Wrap("GET /health", 0, http.HandlerFunc(s.health)))
	// Files take a pre-signed URL's signature instead of the token (signed.go).
	files := s.envdGateWith(writeEnvdError, false, s.fileCredential)
	s.plain(mux, files, "GET /files", rights.Read, s.readFile)
	s.plain(mux, files, "POST /files", rights.Write, s.writeFiles)
	mux.HandleFunc("POST /process.Process/{method}", s.rpc("process.Process", processMethods))
	mux.HandleFunc("POST /filesystem.Filesystem/{method}", s.rpc("filesystem.Filesystem", filesystemMethods))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeEnvdError(w, errs.NotFound("no such envd endpoint: %s %s", r.Method, clipText(r.URL.Path)))
	})
	return mux
}

// basicUser reads the user of "Authorization: Basic base64(user:)" (the
// scheme in any letter case: gate.AuthParam); none is E2B's default
// user, "user".
func basicUser(h string) (string, error) {
	if h == "" {
		return wire.UserUser, nil
	}
	enc, ok := gate.AuthParam(h, "Basic")
	if !ok || len(enc) > 1024 {
		return "", errs.Invalid("Authorization must be Basic base64(user:)")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return "", errs.Invalid("Authorization must be Basic base64(user:)")
	}
	name, _, _ := strings.Cut(string(raw), ":")
	return userOf(name)
}

// userOf maps an E2B user name onto a sandbox user.
func userOf(name string) (string, error) {
	switch name {
	case "", wire.UserUser:
		return wire.UserUser, nil
	case wire.UserRoot:
		return wire.UserRoot, nil
	}
	return "", errs.Invalid("unknown user %s: Paddock sandboxes have the users root and user", quoteText(name))
}

// homeOf is a user's home directory in a sandbox.
func homeOf(user string) string {
	if user == wire.UserRoot {
		return "/root"
	}
	return "/home/user"
}

// resolvePath makes a path absolute as envd does: relative to the user's
// home, "~" being the home. The manager validates the result (no ".."
// components, no NUL, bounded length).
func resolvePath(p, user string) (string, error) {
	if p == "" {
		return "", errs.Invalid("path is required")
	}
	home := homeOf(user)
	switch {
	case p == "~":
		return home, nil
	case strings.HasPrefix(p, "~/"):
		return home + p[1:], nil
	case !strings.HasPrefix(p, "/"):
		return home + "/" + p, nil
	}
	return p, nil
}

// envdStatus is the HTTP status of an error on envd's plain routes.
func envdStatus(code errs.Code) int {
	switch code {
	case errs.CodeTooLarge:
		return http.StatusInsufficientStorage // the SDK's NotEnoughSpaceError
	case errs.CodeSandboxNotActive:
		return http.StatusBadGateway // the SDK's "sandbox is gone"
	}
	return apiStatus(code)
}

func writeEnvdError(w http.ResponseWriter, err error) {
	status := envdStatus(errs.CodeOf(err))
	writeJSON(w, status, apiError{Code: status, Message: errs.Public(err)})
}

type plainHandler func(w http.ResponseWriter, r *http.Request, q *envdReq)

// plain registers one of envd's plain HTTP routes behind the gate.
func (s *Server) plain(mux *http.ServeMux, g *gate.Gate, route string, need rights.Right, h plainHandler) {
	s.routes = append(s.routes, Route{Pattern: route, Need: need, Envd: true})
	mux.Handle(route, g.Wrap(route, need, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := envdRequest(r)
		if err != nil {
			writeEnvdError(w, err)
			return
		}
		h(w, r, q)
	})))
}

// health answers 204 while the sandbox runs and 502 once it is gone (the
// SDK's isRunning reads exactly that).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	sb, err := s.m.Resolve(r.Context(), gate.Scope(r.Context()), r.Header.Get(hdrSandboxID), 0)
	if err != nil && errs.CodeOf(err) != errs.CodeNotFound {
		writeEnvdError(w, err)
		return
	}
	if err != nil || sb.State != sandbox.StateRunning {
		writeJSON(w, http.StatusBadGateway, apiError{Code: http.StatusBadGateway, Message: "the sandbox is not running"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fileQuery reads the query of /files: path and username (a signature
// and its expiration authenticated the call when it came without a token:
// fileCredential).
func fileQuery(r *http.Request, q *envdReq) (path, user string, err error) {
	user = q.user
	vals := r.URL.Query()
	for k, vs := range vals {
		switch k {
		case "path", "username", "signature", "signature_expiration":
			if len(vs) != 1 {
				return "", "", errs.Invalid("query parameter %s is given %d times", k, len(vs))
			}
		default:
			return "", "", errs.Invalid("query parameter %s is not supported", clipText(k))
		}
	}
	if vals.Has("username") {
		if user, err = userOf(vals.Get("username")); err != nil {
			return "", "", err
		}
	}
	return vals.Get("path"), user, nil
}

// acceptsGzip reports whether an Accept-Encoding header admits gzip.
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		if qv, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(qv, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}

func (s *Server) readFile(w http.ResponseWriter, r *http.Request, q *envdReq) {
	p, user, err := fileQuery(r, q)
	if err == nil {
		p, err = resolvePath(p, user)
	}
	if err != nil {
		writeEnvdError(w, err)
		return
	}
	fr, err := s.m.ReadFile(r.Context(), q.sc, q.id, sandbox.ReadFileRequest{Path: p, User: user})
	if err != nil {
		writeEnvdError(w, err)
		return
	}
	defer fr.Body.Close()
	h := w.Header()
	// A sandbox's file opened in a browser must not run as a page of this
	// origin (content sniffing, stored XSS): a download, never sniffed,
	// its name quoted by FormatMediaType (no header injection).
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": baseName(p)}))
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		w.WriteHeader(http.StatusOK)
		zw := gzip.NewWriter(w)
		_, _ = io.Copy(zw, fr.Body)
		_ = zw.Close()
		return
	}
	h.Set("Content-Length", strconv.FormatInt(fr.Length, 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, fr.Body)
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// uploadedFile is envd's answer per written file.
type uploadedFile struct {
	Name     string            `json:"name"`
	Type     string            `json:"type"`
	Path     string            `json:"path"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (s *Server) writeFiles(w http.ResponseWriter, r *http.Request, q *envdReq) {
	qpath, user, err := fileQuery(r, q)
	if err != nil {
		writeEnvdError(w, err)
		return
	}
	meta, err := parseMetadataHeaders(r.Header)
	if err != nil {
		writeEnvdError(w, err)
		return
	}
	body := io.Reader(r.Body)
	size := r.ContentLength
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		// A decompression bomb expands into the sandbox's disk quota and
		// the files API's upload cap (MaxBytes), which the guest enforces
		// on the expanded bytes.
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			writeEnvdError(w, errs.Invalid("the body is not gzip data"))
			return
		}
		defer zr.Close()
		body, size = zr, -1
	default:
		writeEnvdError(w, errs.Invalid("Content-Encoding %s is not supported (gzip is)", quoteText(enc)))
		return
	}
	write := func(target string, rd io.Reader, n int64) (uploadedFile, error) {
		// A part's filename is the caller's path: "../" and NUL are
		// refused by the manager (path traversal), and the write runs in
		// the sandbox's own root whatever it names.
		p, err := resolvePath(target, user)
		if err != nil {
			return uploadedFile{}, err
		}
		// Every upload replaces the file's metadata (none: clears it), in
		// the same call as its content.
		writer, owner := asEnvd(user)
		fi, err := s.m.WriteFileMeta(r.Context(), q.sc, q.id, sandbox.WriteRequest{Path: p, User: writer, Owner: owner, Parents: true},
			metaNamespace, meta, rd, n)
		if err != nil {
			return uploadedFile{}, err
		}
		return uploadedFile{Name: fi.Name, Type: "file", Path: fi.Path, Metadata: nonEmpty(meta)}, nil
	}
	var out []uploadedFile
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if strings.EqualFold(mt, "multipart/form-data") {
		if params["boundary"] == "" {
			writeEnvdError(w, errs.Invalid("multipart body without a boundary"))
			return
		}
		mr := multipart.NewReader(body, params["boundary"])
		for i := 0; ; i++ {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				writeEnvdError(w, errs.Invalid("malformed multipart body"))
				return
			}
			if i >= maxUploadParts {
				writeEnvdError(w, errs.Invalid("at most %d files per upload", maxUploadParts))
				return
			}
			if part.FormName() != "file" {
				writeEnvdError(w, errs.Invalid("multipart uploads carry parts named file, not %s", quoteText(part.FormName())))
				return
			}
			target := qpath
			if target == "" {
				target = partFileName(part)
			} else if len(out) > 0 {
				writeEnvdError(w, errs.Invalid("path names one file; upload several without it, each part's filename its path"))
				return
			}
			f, err := write(target, part, -1)
			_ = part.Close()
			if err != nil {
				writeEnvdError(w, err)
				return
			}
			out = append(out, f)
		}
		if len(out) == 0 {
			writeEnvdError(w, errs.Invalid("the upload has no file part"))
			return
		}
	} else {
		if qpath == "" {
			writeEnvdError(w, errs.Invalid("path is required for an application/octet-stream upload"))
			return
		}
		f, err := write(qpath, body, size)
		if err != nil {
			writeEnvdError(w, err)
			return
		}
		out = append(out, f)
	}
	writeJSON(w, http.StatusOK, out)
}

// partFileName is a part's filename as sent: Go's Part.FileName keeps only
// the base name, and E2B clients send whole paths there.
func partFileName(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
