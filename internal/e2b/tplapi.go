package e2b

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/internal/template/tplsvc"
	"github.com/paddockhq/paddock/wire"
)

// E2B's template build API (the SDK's Template.build) over Paddock's
// template service: POST /v3/templates opens a build of a name, GET
// /templates/{id}/files/{hash} says whether a COPY's files are staged and
// where to PUT them, POST /v2/templates/{id}/builds/{build} starts the
// build (planTemplate: a Dockerfile and a context for Paddock's Dockerfile
// builder, whose RUN steps run in sandboxes), and GET …/status is polled
// for its log and end. The template is the tenant's Paddock template of
// that name, so Sandbox.create(name) starts it. The templateID E2B's
// answers carry is the name itself.

// TemplateBuilder builds and finds a tenant's templates (tplsvc.Service).
type TemplateBuilder interface {
	Resolve(tenant, name string) (*template.Template, error)
	Build(ctx context.Context, sc rights.Scope, req tplsvc.BuildRequest, contextTar io.Reader, emit func(wire.TemplateEvent)) (wire.Template, error)
}

// Template build bounds (per tenant unless said).
const (
	defaultMaxTemplateContext = 512 << 20 // one build's COPY files, and one upload
	tplStagedFiles            = 64        // uploads kept; the least recently used go first
	tplStagedFactor           = 2         // staged bytes: at most this many contexts
	tplBuildsKept             = 32        // build records (status, log) kept
	tplBuildsRunning          = 2         // builds running at once
	tplMaxTenants             = 4096      // tenants with build state, server-wide
	tplLogEntries             = 2000      // log entries kept per build
	tplLogEntry               = 4 << 10   // bytes of one log entry
)

// Build states, as E2B names them.
const (
	buildWaiting  = "waiting"
	buildBuilding = "building"
	buildReady    = "ready"
	buildError    = "error"
)

type logEntry struct {
	Timestamp string `json:"timestamp"`
	Level     string `json:"level"`
	Message   string `json:"message"`
	Step      string `json:"step,omitempty"`
}

type buildReason struct {
	Message    string     `json:"message"`
	Step       string     `json:"step,omitempty"`
	LogEntries []logEntry `json:"logEntries"`
}

type tplBuild struct {
	id, name string
	status   string
	logs     []logEntry
	dropped  bool // logs past tplLogEntries were dropped
	reason   *buildReason
	created  time.Time
}

type stagedFile struct {
	path string
	size int64
	used time.Time
}

type tenantBuilds struct {
	builds  map[string]*tplBuild // by build id
	order   []string             // build ids, oldest first
	running int
	files   map[string]*stagedFile // by files hash
	bytes   int64
}

// tplState is the adapter's template build state: in memory (a restart
// forgets builds in flight and staged uploads), uploads on disk.
type tplState struct {
	mu      sync.Mutex
	dir     string
	max     int64
	tenants map[string]*tenantBuilds
	ctx     context.Context // builds run until the adapter closes
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newTplState(dir string, max int64) (*tplState, error) {
	if max <= 0 || max > defaultMaxTemplateContext {
		max = defaultMaxTemplateContext
	}
	t := &tplState{dir: dir, max: max, tenants: map[string]*tenantBuilds{}}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	if dir != "" {
		// Staged uploads are known only to the process that took them.
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("e2b: template uploads: %w", err)
		}
	}
	return t, nil
}

func (t *tplState) close() {
	t.cancel()
	t.wg.Wait()
}

// tenant returns tenant's state, made if missing (nil when the server
// holds the state of too many tenants already).
func (t *tplState) tenantLocked(tenant string) *tenantBuilds {
	tb := t.tenants[tenant]
	if tb == nil {
		if len(t.tenants) >= tplMaxTenants {
			return nil
		}
		tb = &tenantBuilds{builds: map[string]*tplBuild{}, files: map[string]*stagedFile{}}
		t.tenants[tenant] = tb
	}
	return tb
}

var errNoTemplateBuilds = errs.New(errs.CodeUnsupported, "template builds are not available on this server (it has no template service)")

func (s *Server) tplReady() error {
	if s.o.Builder == nil || s.tpl == nil || s.tpl.dir == "" {
		return errNoTemplateBuilds
	}
	return nil
}

// templateName checks an E2B template name (a Paddock template name; tags
// are not kept).
func templateName(name string) (string, error) {
	if n, tag, ok := strings.Cut(name, ":"); ok {
		if tag != "default" {
			return "", errs.New(errs.CodeUnsupported, "template tags (%q) are not supported: build each version under its own name", clipText(tag))
		}
		name = n
	}
	if !template.ValidName(name) {
		return "", errs.Invalid("%q is not a template name (lower-case letters, digits, '.', '_' and '-', starting with a letter or digit)", clipText(name))
	}
	return name, nil
}

// requestBuild is POST /v3/templates {name, tags?}: 202 with the build's ids.
func (s *Server) requestBuild(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b struct {
		Name          string   `json:"name"`
		Alias         string   `json:"alias"`
		Tags          []string `json:"tags"`
		CPUCount      *int     `json:"cpuCount"`
		MemoryMB      *int     `json:"memoryMB"`
		MinFreeDiskMb *int     `json:"minFreeDiskMb"`
		TeamID        *string  `json:"teamID"`
	}
	if err := s.tplReady(); err != nil {
		writeAPIError(w, err)
		return
	}
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	switch {
	case len(b.Tags) > 0:
		writeAPIError(w, errs.New(errs.CodeUnsupported, "template tags are not supported: build each version under its own name"))
		return
	case b.CPUCount != nil || b.MemoryMB != nil || b.MinFreeDiskMb != nil:
		writeAPIError(w, errs.New(errs.CodeUnsupported, "cpuCount, memoryMB and minFreeDiskMb of a template are not supported: a sandbox's limits are its tenant's (give them at create)"))
		return
	case b.TeamID != nil:
		writeAPIError(w, errs.New(errs.CodeUnsupported, "teamID is not supported: the key's tenant owns the template"))
		return
	}
	if b.Name == "" {
		b.Name = b.Alias
	}
	name, err := templateName(b.Name)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if err := sc.Need(rights.Templates); err != nil {
		writeAPIError(w, err)
		return
	}
	id := newBuildID()
	t := s.tpl
	t.mu.Lock()
	tb := t.tenantLocked(sc.Tenant)
	if tb == nil {
		t.mu.Unlock()
		writeAPIError(w, errs.New(errs.CodeLimit, "the server holds the template builds of %d tenants already", tplMaxTenants))
		return
	}
	if len(tb.order) >= tplBuildsKept && !tb.dropOldestLocked() {
		t.mu.Unlock()
		writeAPIError(w, errs.New(errs.CodeLimit, "tenant %s has %d template builds waiting or running: at most %d", sc.Tenant, len(tb.order), tplBuildsKept))
		return
	}
	tb.builds[id] = &tplBuild{id: id, name: name, status: buildWaiting, created: time.Now()}
	tb.order = append(tb.order, id)
	t.mu.Unlock()
	writeJSON(w, http.StatusAccepted, map[string]any{"templateID": name, "buildID": id, "names": []string{name},
		"aliases": []string{name}, "tags": []string{}, "public": false})
}

// dropOldestLocked forgets the oldest build that is not running.
func (tb *tenantBuilds) dropOldestLocked() bool {
	for i, id := range tb.order {
		if b := tb.builds[id]; b.status != buildBuilding {
			delete(tb.builds, id)
			tb.order = append(tb.order[:i:i], tb.order[i+1:]...)
			return true
		}
	}
	return false
}

func newBuildID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// buildOf finds a build of sc's tenant for template templateID (404 for
// anything else: another tenant's build is not found).
func (t *tplState) buildOfLocked(sc rights.Scope, templateID, buildID string) (*tenantBuilds, *tplBuild, error) {
	tb := t.tenants[sc.Tenant]
	if tb != nil {
		if b := tb.builds[buildID]; b != nil && b.name == templateID {
			return tb, b, nil
		}
	}
	return nil, nil, errs.NotFound("template %q has no build %q", clipText(templateID), clipText(buildID))
}

// fileLink is GET /templates/{templateID}/files/{hash}: whether the files
// of a COPY are staged, and if not where to PUT them. The upload goes to
// this server, authenticated like this request: the answer's headers repeat
// the caller's own credential header, so no bearer URL is issued.
func (s *Server) fileLink(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	if err := s.tplReady(); err != nil {
		writeAPIError(w, err)
		return
	}
	name, hash, err := fileTarget(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	t := s.tpl
	t.mu.Lock()
	present := false
	if tb := t.tenants[sc.Tenant]; tb != nil {
		if f := tb.files[hash]; f != nil {
			f.used, present = time.Now(), true
		}
	}
	t.mu.Unlock()
	if present {
		writeJSON(w, http.StatusCreated, map[string]any{"present": true})
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	hdr := map[string]string{}
	if v := r.Header.Get(hdrAPIKey); v != "" {
		hdr[hdrAPIKey] = v
	} else if v := r.Header.Get("Authorization"); v != "" {
		hdr["Authorization"] = v
	}
	writeJSON(w, http.StatusCreated, map[string]any{"present": false, "headers": hdr,
		"url": scheme + "://" + r.Host + "/templates/" + name + "/files/" + hash})
}

func fileTarget(r *http.Request) (name, hash string, err error) {
	name, err = templateName(r.PathValue("templateID"))
	if err != nil {
		return "", "", err
	}
	hash = r.PathValue("hash")
	if !reHash.MatchString(hash) {
		return "", "", errs.Invalid("%q is not a files hash (64 lower-case hex digits)", clipText(hash))
	}
	return name, hash, nil
}

// uploadFiles is PUT /templates/{templateID}/files/{hash}: the tar(.gz) of
// a COPY's files, staged for the tenant's builds (bounded in size; the
// least recently used uploads make room).
func (s *Server) uploadFiles(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	if err := s.tplReady(); err != nil {
		writeAPIError(w, err)
		return
	}
	_, hash, err := fileTarget(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if err := sc.Need(rights.Templates); err != nil {
		writeAPIError(w, err)
		return
	}
	t := s.tpl
	if r.ContentLength > t.max {
		writeAPIError(w, errs.New(errs.CodeTooLarge, "the files of a COPY are over %d MiB", t.max>>20))
		return
	}
	f, err := os.CreateTemp(t.dir, "upload-*")
	if err != nil {
		writeAPIError(w, errs.Wrap(errs.CodeInternal, err, "cannot stage the upload"))
		return
	}
	n, err := io.Copy(f, io.LimitReader(r.Body, t.max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || n > t.max {
		_ = os.Remove(f.Name())
		if n > t.max {
			writeAPIError(w, errs.New(errs.CodeTooLarge, "the files of a COPY are over %d MiB", t.max>>20))
		} else {
			writeAPIError(w, errs.Wrap(errs.CodeInvalid, err, "the upload failed"))
		}
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tb := t.tenantLocked(sc.Tenant)
	if tb == nil {
		_ = os.Remove(f.Name())
		writeAPIError(w, errs.New(errs.CodeLimit, "the server holds the template builds of %d tenants already", tplMaxTenants))
		return
	}
	if old := tb.files[hash]; old != nil {
		_ = os.Remove(old.path)
		tb.bytes -= old.size
		delete(tb.files, hash)
	}
	for len(tb.files) >= tplStagedFiles || tb.bytes+n > tplStagedFactor*t.max {
		tb.evictLocked()
	}
	final := filepath.Join(t.dir, safeTenant(sc.Tenant)+"-"+hash)
	if err := os.Rename(f.Name(), final); err != nil {
		_ = os.Remove(f.Name())
		writeAPIError(w, errs.Wrap(errs.CodeInternal, err, "cannot stage the upload"))
		return
	}
	tb.files[hash] = &stagedFile{path: final, size: n, used: time.Now()}
	tb.bytes += n
	w.WriteHeader(http.StatusOK)
}

// evictLocked removes the least recently used staged upload.
func (tb *tenantBuilds) evictLocked() {
	var oldest string
	for h, f := range tb.files {
		if oldest == "" || f.used.Before(tb.files[oldest].used) {
			oldest = h
		}
	}
	if oldest == "" {
		tb.bytes = 0
		return
	}
	_ = os.Remove(tb.files[oldest].path)
	tb.bytes -= tb.files[oldest].size
	delete(tb.files, oldest)
}

// safeTenant is a tenant name as a file name part.
func safeTenant(t string) string {
	return hex.EncodeToString([]byte(t))
}

// startBuild is POST /v2/templates/{templateID}/builds/{buildID} with the
// template definition: 202, and the build runs.
func (s *Server) startBuild(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	if err := s.tplReady(); err != nil {
		writeAPIError(w, err)
		return
	}
	var spec tplSpec
	if err := decodeBody(r, &spec); err != nil {
		writeAPIError(w, err)
		return
	}
	plan, err := planTemplate(spec)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if err := sc.Need(rights.Templates); err != nil {
		writeAPIError(w, err)
		return
	}
	t := s.tpl
	t.mu.Lock()
	tb, b, err := t.buildOfLocked(sc, r.PathValue("templateID"), r.PathValue("buildID"))
	switch {
	case err != nil:
	case b.status != buildWaiting:
		err = errs.New(errs.CodeConflict, "build %s was started already", b.id)
	case tb.running >= tplBuildsRunning:
		err = errs.New(errs.CodeLimit, "tenant %s has %d template builds running: at most %d at once", sc.Tenant, tb.running, tplBuildsRunning)
	}
	files := map[string]string{}
	for _, c := range plan.Copies {
		if err != nil {
			break
		}
		f := tb.files[c.Hash]
		if f == nil {
			err = errs.Invalid("the files of a COPY (hash %s) were not uploaded, or made room for newer ones: build again", c.Hash[:12])
			break
		}
		f.used, files[c.Hash] = time.Now(), f.path
	}
	if err != nil {
		t.mu.Unlock()
		writeAPIError(w, err)
		return
	}
	b.status = buildBuilding
	tb.running++
	t.wg.Add(1)
	t.mu.Unlock()
	go s.runBuild(sc, tb, b, plan, files)
	w.WriteHeader(http.StatusAccepted)
}

// runBuild builds plan through the template service and records its log
// and end in b.
func (s *Server) runBuild(sc rights.Scope, tb *tenantBuilds, b *tplBuild, plan tplPlan, files map[string]string) {
	t := s.tpl
	defer t.wg.Done()
	pr, pw := io.Pipe()
	go func() {
		err := writeContext(pw, plan, func(hash string) (io.ReadCloser, error) {
			f, err := os.Open(files[hash])
			if err != nil {
				return nil, errs.Invalid("the files of a COPY are gone: build again")
			}
			return f, nil
		}, t.max)
		pw.CloseWithError(err)
	}()
	emit := func(e wire.TemplateEvent) {
		var msg string
		switch {
		case e.Instruction != "":
			msg = fmt.Sprintf("Step %d/%d: %s", e.Step, e.Steps, e.Instruction)
			if e.Cached {
				msg += " (cached)"
			}
		case e.Output != "":
			msg = strings.TrimRight(e.Output, "\n")
		default:
			msg = e.Message
		}
		if msg == "" {
			return
		}
		t.mu.Lock()
		b.addLogLocked("info", msg)
		t.mu.Unlock()
	}
	_, err := s.o.Builder.Build(t.ctx, sc, tplsvc.BuildRequest{Name: b.name, Replace: true, NoCache: plan.NoCache,
		StartCmd: plan.StartCmd, ReadyCmd: plan.ReadyCmd}, pr, emit)
	_ = pr.CloseWithError(io.ErrClosedPipe) // the writer ends if the build stopped reading
	t.mu.Lock()
	defer t.mu.Unlock()
	tb.running--
	if err != nil {
		msg := errs.Public(err)
		b.addLogLocked("error", msg)
		b.status = buildError
		b.reason = &buildReason{Message: msg, LogEntries: []logEntry{}}
		var se *dockerfile.StepError
		if errors.As(err, &se) {
			b.reason.Step = plan.Steps[se.Line]
		}
		return
	}
	b.addLogLocked("info", "Template "+b.name+" is ready: Sandbox.create('"+b.name+"') starts it")
	b.status = buildReady
}

func (b *tplBuild) addLogLocked(level, msg string) {
	if len(b.logs) >= tplLogEntries {
		b.dropped = true
		return
	}
	if len(msg) > tplLogEntry {
		msg = strings.ToValidUTF8(msg[:tplLogEntry], "") + "…"
	}
	b.logs = append(b.logs, logEntry{Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Level: level, Message: msg})
}

// buildStatus is GET /templates/{templateID}/builds/{buildID}/status
// ?logsOffset=N: the state and the log entries from N on.
func (s *Server) buildStatus(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	if err := s.tplReady(); err != nil {
		writeAPIError(w, err)
		return
	}
	off := 0
	q := r.URL.Query()
	for k, vs := range q {
		if len(vs) != 1 {
			writeAPIError(w, errs.Invalid("query parameter %s is given %d times", clipText(k), len(vs)))
			return
		}
		switch k {
		case "logsOffset":
			n, err := strconv.Atoi(vs[0])
			if err != nil || n < 0 {
				writeAPIError(w, errs.Invalid("logsOffset must be a count of entries"))
				return
			}
			off = n
		case "limit", "level":
		default:
			writeAPIError(w, errs.Invalid("query parameter %s is not supported", clipText(k)))
			return
		}
	}
	t := s.tpl
	t.mu.Lock()
	_, b, err := t.buildOfLocked(sc, r.PathValue("templateID"), r.PathValue("buildID"))
	if err != nil {
		t.mu.Unlock()
		writeAPIError(w, err)
		return
	}
	entries := []logEntry{}
	if off < len(b.logs) {
		entries = append(entries, b.logs[off:]...)
	}
	out := map[string]any{"buildID": b.id, "templateID": b.name, "status": b.status, "logEntries": entries, "logs": []string{}}
	if b.reason != nil {
		out["reason"] = b.reason
	}
	t.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// templateAlias is GET /templates/aliases/{alias} (Template.exists): 200
// when the key's tenant can start a sandbox from a template of that name.
func (s *Server) templateAlias(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	name, err := templateName(r.PathValue("alias"))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if s.o.Builder == nil {
		writeAPIError(w, errNoTemplateBuilds)
		return
	}
	t, err := s.o.Builder.Resolve(sc.Tenant, name)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"templateID": name, "public": t.Tenant == ""})
}
