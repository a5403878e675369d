//go:build linux

package code

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/process"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/kernel"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// Options tune the service (tests; the agent uses the defaults).
type Options struct {
	// StateRoot is where each user's private state directory is made
	// (default /run/paddock-code).
	StateRoot string
	// Limits are the kernel's (zero fields: kernel.DefaultLimits). Contexts
	// are limited per user the contexts run as.
	Limits kernel.Limits
	// Python, Node and Bash override the interpreters (kernel.Config).
	Python, Node, Bash string
}

// Service serves the code routes of one sandbox.
type Service struct {
	procs   spawner
	logf    func(format string, args ...any)
	opts    Options
	streams rpc.Slots

	mu   sync.Mutex
	sups map[string]*kernel.Supervisor // by user name, made on first use
}

// New returns the service over the sandbox's process service; it starts
// nothing until a request needs a kernel.
func New(procs *process.Service, logf func(format string, args ...any), opts Options) *Service {
	if opts.StateRoot == "" {
		opts.StateRoot = defaultStateRoot
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	var sp spawner
	if procs != nil {
		sp = procs // a nil *process.Service would be a non-nil interface
	}
	return &Service{procs: sp, logf: logf, opts: opts, streams: rpc.NewSlots(guestapi.MaxCodeStreams),
		sups: map[string]*kernel.Supervisor{}}
}

// Register serves the code routes on m.
func (s *Service) Register(m *rpc.Mux) {
	m.Handle(guestapi.RouteCodeCreate, rpc.Unary(guestapi.MaxCodeHead, s.create))
	m.Handle(guestapi.RouteCodeList, rpc.Unary(guestapi.MaxHead, s.list))
	m.Handle(guestapi.RouteCodeGet, rpc.Unary(guestapi.MaxHead, s.get))
	m.Handle(guestapi.RouteCodeRestart, rpc.Unary(guestapi.MaxHead, s.restart))
	m.Handle(guestapi.RouteCodeDelete, rpc.Unary(guestapi.MaxHead, s.delete))
	m.Handle(guestapi.RouteCodeExecute, rpc.Streamed(guestapi.MaxCodeHead, s.execute))
	m.Handle(guestapi.RouteCodeWarm, rpc.Unary(guestapi.MaxHead, s.warm))
}

// Close ends every context (tests; a sandbox's end takes its kernels).
func (s *Service) Close() {
	s.mu.Lock()
	sups := s.sups
	s.sups = map[string]*kernel.Supervisor{}
	s.mu.Unlock()
	for _, sup := range sups {
		sup.Close()
	}
}

// supervisor returns the supervisor of the user named name ("" is root),
// making it on first use.
func (s *Service) supervisor(name string) (*kernel.Supervisor, string, error) {
	id, err := user.Lookup(name)
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sup := s.sups[id.Name]; sup != nil {
		return sup, id.Name, nil
	}
	if s.procs == nil {
		return nil, "", errs.New(errs.CodeUnavailable, "the code interpreter is not available in this sandbox")
	}
	dir, err := privateDir(s.opts.StateRoot, id)
	if err != nil {
		s.logf("code: state directory for %s: %v", id.Name, err)
		return nil, "", err
	}
	env, _ := s.procs.Env(id, id.Home, nil, false)
	base := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		base[k] = v
	}
	var owner *kernel.Owner
	if id.UID != 0 {
		owner = &kernel.Owner{UID: int(id.UID), GID: int(id.GID)}
	}
	sup, err := kernel.New(kernel.Config{
		Python: s.opts.Python, Node: s.opts.Node, Bash: s.opts.Bash,
		Starter: &starter{svc: s.procs, id: id, base: base},
		Env:     env, Cwd: id.Home, StateDir: dir, Owner: owner, Limits: s.opts.Limits,
		Logger: slog.New(slog.NewTextHandler(logWriter(s.logf), &slog.HandlerOptions{Level: slog.LevelWarn,
			ReplaceAttr: dropTime})),
	})
	if err != nil {
		s.logf("code: supervisor for %s: %v", id.Name, err)
		return nil, "", errs.Wrap(errs.CodeInternal, err, "cannot start the code interpreter")
	}
	s.sups[id.Name] = sup
	return sup, id.Name, nil
}

// existing lists the supervisors made so far, by user name.
func (s *Service) existing() []namedSup {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]namedSup, 0, len(s.sups))
	for name, sup := range s.sups {
		out = append(out, namedSup{name, sup})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

type namedSup struct {
	name string
	sup  *kernel.Supervisor
}

// find returns the supervisor that holds context id.
func (s *Service) find(ctx context.Context, id string) (namedSup, codewire.Context, error) {
	if id == "" {
		return namedSup{}, codewire.Context{}, errs.Invalid("a context id is required")
	}
	for _, ns := range s.existing() {
		if c, err := ns.sup.Get(ctx, id); err == nil {
			return ns, c, nil
		}
	}
	return namedSup{}, codewire.Context{}, errs.NotFound("no code context %q", clip(id))
}

func (s *Service) create(r *http.Request, req *guestapi.CodeCreateRequest) (guestapi.CodeContext, error) {
	id, err := user.Lookup(req.User)
	if err != nil {
		return guestapi.CodeContext{}, err
	}
	if req.Cwd != "" {
		// Refused here with its reason rather than at the kernel's start.
		if err := searchable(req.Cwd, id); err != nil {
			return guestapi.CodeContext{}, err
		}
	}
	sup, name, err := s.supervisor(req.User)
	if err != nil {
		return guestapi.CodeContext{}, err
	}
	c, err := sup.Create(r.Context(), req.CreateContextRequest)
	if err != nil {
		return guestapi.CodeContext{}, err
	}
	return guestapi.CodeContext{Context: c, User: name}, nil
}

func (s *Service) list(r *http.Request, req *guestapi.CodeListRequest) (guestapi.CodeContextList, error) {
	want := ""
	if req.User != "" {
		id, err := user.Lookup(req.User)
		if err != nil {
			return guestapi.CodeContextList{}, err
		}
		want = id.Name
	}
	out := guestapi.CodeContextList{Contexts: []guestapi.CodeContext{}}
	for _, ns := range s.existing() {
		if want != "" && ns.name != want {
			continue
		}
		cs, err := ns.sup.List(r.Context())
		if err != nil {
			return guestapi.CodeContextList{}, err
		}
		for _, c := range cs {
			out.Contexts = append(out.Contexts, guestapi.CodeContext{Context: c, User: ns.name})
		}
	}
	// Each supervisor's list is oldest first; so is the whole (RFC 3339
	// times sort as strings; the order within one second is kept).
	sort.SliceStable(out.Contexts, func(i, j int) bool { return out.Contexts[i].CreatedAt < out.Contexts[j].CreatedAt })
	return out, nil
}

func (s *Service) get(r *http.Request, req *guestapi.CodeContextRequest) (guestapi.CodeContext, error) {
	ns, c, err := s.find(r.Context(), req.ID)
	if err != nil {
		return guestapi.CodeContext{}, err
	}
	return guestapi.CodeContext{Context: c, User: ns.name}, nil
}

func (s *Service) restart(r *http.Request, req *guestapi.CodeContextRequest) (guestapi.CodeContext, error) {
	ns, _, err := s.find(r.Context(), req.ID)
	if err != nil {
		return guestapi.CodeContext{}, err
	}
	c, err := ns.sup.Restart(r.Context(), req.ID)
	if err != nil {
		return guestapi.CodeContext{}, err
	}
	return guestapi.CodeContext{Context: c, User: ns.name}, nil
}

func (s *Service) delete(r *http.Request, req *guestapi.CodeContextRequest) (guestapi.Empty, error) {
	ns, _, err := s.find(r.Context(), req.ID)
	if err != nil {
		return guestapi.Empty{}, err
	}
	return guestapi.Empty{}, ns.sup.Delete(r.Context(), req.ID)
}

func (s *Service) warm(_ *http.Request, req *guestapi.CodeWarmRequest) (guestapi.Empty, error) {
	if len(req.Languages) == 0 || len(req.Languages) > guestapi.MaxWarmLanguages {
		return guestapi.Empty{}, errs.Invalid("name 1 to %d languages to warm", guestapi.MaxWarmLanguages)
	}
	langs := make([]string, 0, len(req.Languages))
	for _, l := range req.Languages {
		n, ok := codewire.NormalizeLanguage(l)
		if !ok {
			return guestapi.Empty{}, errs.Invalid("unknown language %q: Paddock runs python, javascript, typescript and bash", clip(l))
		}
		langs = append(langs, n)
	}
	sup, _, err := s.supervisor(req.User)
	if err != nil {
		return guestapi.Empty{}, err
	}
	sup.Warm(langs...)
	return guestapi.Empty{}, nil
}

// execute streams one cell: the start event as the head, its events, the
// end event as the end frame. The request's context ends when the host
// closes the connection, which interrupts the cell (status cancelled).
func (s *Service) execute(r *http.Request, req *guestapi.CodeExecuteRequest, a *rpc.Answer) error {
	if !s.streams.TryAcquire() {
		return errs.New(errs.CodeLimit, "too many code executions at once in this sandbox (at most %d)", guestapi.MaxCodeStreams)
	}
	defer s.streams.Release()
	// Read the body to its end: only then does the HTTP server watch the
	// connection and cancel the request's context when the host goes away
	// (a silent cell would otherwise run on for nobody).
	if n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, 1)); n > 0 {
		return errs.Invalid("an execute request carries nothing after its head")
	}
	var sup *kernel.Supervisor
	if req.Context != "" {
		if req.Language != "" {
			return errs.Invalid("give context_id or language, not both")
		}
		ns, _, err := s.find(r.Context(), req.Context)
		if err != nil {
			return err
		}
		if req.User != "" {
			id, err := user.Lookup(req.User)
			if err != nil {
				return err
			}
			if id.Name != ns.name {
				return errs.Invalid("code context %s runs as %s, not %s", clip(req.Context), ns.name, id.Name)
			}
		}
		sup = ns.sup
	} else {
		var err error
		if sup, _, err = s.supervisor(req.User); err != nil {
			return err
		}
	}
	started := false
	err := sup.Execute(r.Context(), req.ExecuteRequest, func(ev codewire.Event) error {
		switch ev.Type {
		case codewire.EventStart:
			started = true
			return a.Head(ev.Start)
		case codewire.EventEnd:
			return a.End(ev.End)
		}
		return guestapi.SendCodeEvent(a.F, ev)
	})
	if err != nil && started {
		return nil // the host went away mid-stream: nobody to tell
	}
	return err
}

// logWriter sends the supervisor's log lines to the agent's log.
type logWriter func(format string, args ...any)

func (l logWriter) Write(p []byte) (int, error) {
	l("code: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
