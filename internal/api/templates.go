package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/template/tplsvc"
	"github.com/paddockhq/paddock/wire"
)

// TemplateService is what the template routes call (tplsvc.Service).
type TemplateService interface {
	List(ctx context.Context, sc sandbox.Scope) ([]wire.Template, error)
	Get(ctx context.Context, sc sandbox.Scope, name string) (wire.Template, error)
	Delete(ctx context.Context, sc sandbox.Scope, name string) error
	Pull(ctx context.Context, sc sandbox.Scope, req wire.TemplatePullRequest, progress func(string)) (wire.Template, error)
	Import(ctx context.Context, sc sandbox.Scope, name, tag string, shared, replace bool, body io.Reader, progress func(string)) (wire.Template, error)
	Export(ctx context.Context, sc sandbox.Scope, name string, w io.Writer) error
	Push(ctx context.Context, sc sandbox.Scope, name, ref string) error
	Build(ctx context.Context, sc sandbox.Scope, req tplsvc.BuildRequest, contextTar io.Reader, emit func(wire.TemplateEvent)) (wire.Template, error)
}

var _ TemplateService = (*tplsvc.Service)(nil)

// templateRoutes are /v1/templates (docs/templates.md). Without a
// template service only the list is served, by the manager.
func (s *Server) templateRoutes() {
	t := s.o.Templates
	s.authed("GET /v1/templates", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		if t == nil {
			s.listTemplates(w, r, sc)
			return
		}
		list, err := t.List(r.Context(), sc)
		replyList(w, r, list, err, func(l []wire.Template) wire.TemplateList { return wire.TemplateList{Templates: l} })
	})
	if t == nil {
		t = noTemplates{}
	}
	s.authed("GET /v1/templates/{name}", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		tpl, err := t.Get(r.Context(), sc, r.PathValue("name"))
		reply(w, r, tpl, err)
	})
	s.authed("DELETE /v1/templates/{name}", rights.Templates, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		replyNoContent(w, r, t.Delete(r.Context(), sc, r.PathValue("name")))
	})
	s.authed("POST /v1/templates/pull", rights.Templates, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		req, ok := decoded[wire.TemplatePullRequest](w, r)
		if !ok {
			return
		}
		progressCall(w, r, func(emit func(wire.TemplateEvent)) (wire.Template, error) {
			return t.Pull(r.Context(), sc, req, messages(emit))
		})
	})
	s.authed("POST /v1/templates/import", rights.Templates, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		q := r.URL.Query()
		progressCall(w, r, func(emit func(wire.TemplateEvent)) (wire.Template, error) {
			return t.Import(r.Context(), sc, q.Get(wire.TemplateBuildName), q.Get(wire.TemplateImportTag),
				boolParam(q.Get(wire.TemplateBuildShared)), boolParam(q.Get(wire.TemplateBuildReplace)), r.Body, messages(emit))
		})
	})
	s.authed("POST /v1/templates/build", rights.Templates, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		req, err := buildRequest(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		progressCall(w, r, func(emit func(wire.TemplateEvent)) (wire.Template, error) {
			return t.Build(r.Context(), sc, req, r.Body, emit)
		})
	})
	s.authed("GET /v1/templates/{name}/export", rights.Read, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		name := r.PathValue("name")
		lw := &lazyHeader{w: w, set: func() {
			w.Header().Set("Content-Type", "application/x-tar")
			w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.oci.tar"`)
		}}
		if err := t.Export(r.Context(), sc, name, lw); err != nil {
			if !lw.started {
				writeError(w, r, err)
				return
			}
			// The status is sent; a cut stream is all a client can be told.
			s.log.Warn("template export cut short", "template", name, "err", err)
		}
	})
	s.authed("POST /v1/templates/{name}/push", rights.Templates, func(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
		req, ok := decoded[wire.TemplatePushRequest](w, r)
		if !ok {
			return
		}
		replyNoContent(w, r, t.Push(r.Context(), sc, r.PathValue("name"), req.Ref))
	})
}

func boolParam(v string) bool { b, _ := strconv.ParseBool(v); return b }

const maxBuildParams = 256

func buildRequest(r *http.Request) (tplsvc.BuildRequest, error) {
	q := r.URL.Query()
	req := tplsvc.BuildRequest{Name: q.Get(wire.TemplateBuildName), Dockerfile: q.Get(wire.TemplateBuildDockerfile),
		Target: q.Get(wire.TemplateBuildTarget), Network: q.Get(wire.TemplateBuildNet), Allow: q[wire.TemplateBuildAllow],
		NoCache: boolParam(q.Get(wire.TemplateBuildNoCache)), Replace: boolParam(q.Get(wire.TemplateBuildReplace)),
		Shared: boolParam(q.Get(wire.TemplateBuildShared))}
	if req.Name == "" {
		return req, errs.Invalid("name is required")
	}
	if len(req.Allow) > maxBuildParams || len(q[wire.TemplateBuildArg]) > maxBuildParams {
		return req, errs.Invalid("at most %d allow and build_arg parameters", maxBuildParams)
	}
	for _, kv := range q[wire.TemplateBuildArg] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return req, errs.Invalid("build_arg must be KEY=VALUE")
		}
		if req.BuildArgs == nil {
			req.BuildArgs = map[string]string{}
		}
		req.BuildArgs[k] = v
	}
	return req, nil
}

func messages(emit func(wire.TemplateEvent)) func(string) {
	return func(m string) { emit(wire.TemplateEvent{Message: m}) }
}

// progressCall answers a pull, import or build: with Accept
// application/x-ndjson a stream of wire.TemplateEvent lines ending with
// the template or the error (an error before the first line is a plain
// error answer, with its status); otherwise the template as JSON.
func progressCall(w http.ResponseWriter, r *http.Request, call func(emit func(wire.TemplateEvent)) (wire.Template, error)) {
	if !strings.Contains(r.Header.Get("Accept"), "application/x-ndjson") {
		tpl, err := call(func(wire.TemplateEvent) {})
		reply(w, r, tpl, err)
		return
	}
	var mu sync.Mutex
	started := false
	enc := json.NewEncoder(w)
	fl, _ := w.(http.Flusher)
	emit := func(e wire.TemplateEvent) {
		mu.Lock()
		defer mu.Unlock()
		if !started {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		_ = enc.Encode(e)
		if fl != nil {
			fl.Flush()
		}
	}
	tpl, err := call(emit)
	mu.Lock()
	s := started
	mu.Unlock()
	if err != nil && !s {
		writeError(w, r, err)
		return
	}
	if err != nil {
		emit(wire.TemplateEvent{Error: &wire.ErrorDetail{Code: string(errs.CodeOf(err)), Message: errs.Public(err)}})
		return
	}
	emit(wire.TemplateEvent{Template: &tpl})
}

// lazyHeader sets the download headers at the first byte, so an error
// before it is still a proper error answer.
type lazyHeader struct {
	w       http.ResponseWriter
	set     func()
	started bool
}

func (l *lazyHeader) Write(p []byte) (int, error) {
	if !l.started {
		l.set()
		l.started = true
	}
	return l.w.Write(p)
}

// noTemplates answers unsupported: a server without image templates.
type noTemplates struct{}

var errNoTemplates = errs.New(errs.CodeUnsupported, "this server does not manage image templates")

func (noTemplates) List(context.Context, sandbox.Scope) ([]wire.Template, error) {
	return nil, errNoTemplates
}
func (noTemplates) Get(context.Context, sandbox.Scope, string) (wire.Template, error) {
	return wire.Template{}, errNoTemplates
}
func (noTemplates) Delete(context.Context, sandbox.Scope, string) error { return errNoTemplates }
func (noTemplates) Pull(context.Context, sandbox.Scope, wire.TemplatePullRequest, func(string)) (wire.Template, error) {
	return wire.Template{}, errNoTemplates
}
func (noTemplates) Import(context.Context, sandbox.Scope, string, string, bool, bool, io.Reader, func(string)) (wire.Template, error) {
	return wire.Template{}, errNoTemplates
}
func (noTemplates) Export(context.Context, sandbox.Scope, string, io.Writer) error {
	return errNoTemplates
}
func (noTemplates) Push(context.Context, sandbox.Scope, string, string) error { return errNoTemplates }
func (noTemplates) Build(context.Context, sandbox.Scope, tplsvc.BuildRequest, io.Reader, func(wire.TemplateEvent)) (wire.Template, error) {
	return wire.Template{}, errNoTemplates
}
