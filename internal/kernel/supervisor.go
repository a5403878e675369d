package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// Config is what a Supervisor needs from the sandbox.
type Config struct {
	// Python is the interpreter with ipykernel (default /usr/bin/python3:
	// Debian's python3-ipykernel, not a python3 that PATH may find first).
	Python string
	// Node is node's path ("" looks in /usr/bin, /usr/local/bin and the
	// PATH of Env). Bash is bash's (default /bin/bash).
	Node, Bash string
	// Starter starts every kernel process (default ExecStarter).
	Starter Starter
	// Env is the environment every context starts from (default: this
	// process's). Cwd is a context's directory when it names none
	// (default: HOME of Env, else "/").
	Env []string
	Cwd string
	// StateDir holds connection files and bash cells; it is made 0700
	// (default: a new directory under os.TempDir, removed by Close).
	StateDir string
	// Owner, when set, owns StateDir and every file the supervisor writes
	// there: the uid and gid the Starter runs kernels as, which must read
	// their connection files (0600) and bash cells. Nil leaves them owned
	// by this process.
	Owner  *Owner
	Limits Limits
	// StartTimeout bounds a kernel's start (default 30 s).
	StartTimeout time.Duration
	// DefaultTimeout is a cell's timeout when the request gives none
	// (default 10 min); MaxTimeout caps what a request may ask (default 24 h).
	DefaultTimeout, MaxTimeout time.Duration
	// InterruptGrace is how long a cell has to stop after an interrupt
	// before its kernel is killed, and the context's state with it
	// (default 5 s).
	InterruptGrace time.Duration
	Logger         *slog.Logger
}

// Owner is a uid and gid.
type Owner struct{ UID, GID int }

// Supervisor owns the code contexts of one sandbox.
type Supervisor struct {
	cfg      Config
	lim      Limits
	starter  Starter
	stateDir string
	ownDir   bool
	log      *slog.Logger

	mu       sync.Mutex
	contexts map[string]*kctx
	defaults map[string]string // language → id of its default context
	closed   bool
}

// New returns a supervisor; it starts no kernel until a context needs one.
func New(cfg Config) (*Supervisor, error) {
	if cfg.Python == "" {
		cfg.Python = "/usr/bin/python3"
	}
	if cfg.Bash == "" {
		cfg.Bash = "/bin/bash"
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Node == "" {
		cfg.Node = findNode(cfg.Env)
	}
	if cfg.Cwd == "" {
		cfg.Cwd = envLookup(cfg.Env, "HOME")
		if cfg.Cwd == "" {
			cfg.Cwd = "/"
		}
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = 10 * time.Minute
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 24 * time.Hour
	}
	if cfg.InterruptGrace <= 0 {
		cfg.InterruptGrace = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Supervisor{cfg: cfg, lim: cfg.Limits.withDefaults(), starter: cfg.Starter, log: cfg.Logger,
		contexts: map[string]*kctx{}, defaults: map[string]string{}}
	if s.starter == nil {
		s.starter = ExecStarter{}
	}
	if cfg.StateDir == "" {
		d, err := os.MkdirTemp("", "paddock-kernels-")
		if err != nil {
			return nil, fmt.Errorf("kernel state directory: %w", err)
		}
		s.stateDir, s.ownDir = d, true
	} else {
		if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
			return nil, fmt.Errorf("kernel state directory: %w", err)
		}
		s.stateDir = cfg.StateDir
	}
	// The directory holds kernel keys: owner only.
	if err := os.Chmod(s.stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("kernel state directory: %w", err)
	}
	if err := s.own(s.stateDir); err != nil {
		return nil, fmt.Errorf("kernel state directory: %w", err)
	}
	return s, nil
}

// own gives path to Config.Owner (no-op without one).
func (s *Supervisor) own(path string) error {
	if s.cfg.Owner == nil {
		return nil
	}
	return os.Lchown(path, s.cfg.Owner.UID, s.cfg.Owner.GID)
}

func findNode(env []string) string {
	for _, p := range []string{"/usr/bin/node", "/usr/local/bin/node", "/usr/bin/nodejs"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	for _, dir := range filepath.SplitList(envLookup(env, "PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would resolve against our cwd
		}
		p := filepath.Join(dir, "node")
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return ""
}

// Create makes a context and starts its kernel.
func (s *Supervisor) Create(ctx context.Context, req codewire.CreateContextRequest) (codewire.Context, error) {
	c, err := s.newContext(req, false)
	if err != nil {
		return codewire.Context{}, err
	}
	if err := c.ensure(ctx); err != nil {
		s.remove(c)
		c.close()
		return codewire.Context{}, err
	}
	return c.info(), nil
}

func (s *Supervisor) newContext(req codewire.CreateContextRequest, isDefault bool) (*kctx, error) {
	lang, ok := codewire.NormalizeLanguage(req.Language)
	if !ok {
		return nil, errs.Invalid("unknown language %q: Paddock runs python, javascript, typescript and bash", trunc(req.Language, 40))
	}
	if err := checkEnv(req.Env); err != nil {
		return nil, errs.Invalid("%s", err.Error())
	}
	if len(req.Env) > 1000 {
		return nil, errs.Invalid("too many environment variables (at most 1000)")
	}
	cwd := req.Cwd
	if cwd == "" {
		cwd = s.cfg.Cwd
	}
	if !filepath.IsAbs(cwd) {
		return nil, errs.Invalid("cwd must be an absolute path")
	}
	cwd = filepath.Clean(cwd)
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return nil, errs.Invalid("cwd %q is not a directory in the sandbox", trunc(cwd, 200))
	}
	c := &kctx{
		id: newContextID(), lang: lang, cwd: cwd, env: req.Env, created: time.Now().UTC(),
		isDefault: isDefault, sup: s, state: codewire.StateStarting, turn: make(chan struct{}, 1),
	}
	c.turn <- struct{}{}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errs.New(errs.CodeUnavailable, "the code interpreter is shutting down")
	}
	if len(s.contexts) >= s.lim.MaxContexts {
		return nil, errs.New(errs.CodeLimit, "too many code contexts (at most %d): delete one first", s.lim.MaxContexts)
	}
	s.contexts[c.id] = c
	return c, nil
}

func newContextID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Supervisor) get(id string) (*kctx, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.contexts[id]
	if c == nil {
		return nil, errs.NotFound("no code context %q", trunc(id, 64))
	}
	return c, nil
}

func (s *Supervisor) remove(c *kctx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.contexts[c.id] == c {
		delete(s.contexts, c.id)
	}
	if s.defaults[c.lang] == c.id {
		delete(s.defaults, c.lang)
	}
}

// Get describes one context.
func (s *Supervisor) Get(_ context.Context, id string) (codewire.Context, error) {
	c, err := s.get(id)
	if err != nil {
		return codewire.Context{}, err
	}
	return c.info(), nil
}

// List describes every context, oldest first.
func (s *Supervisor) List(context.Context) ([]codewire.Context, error) {
	s.mu.Lock()
	cs := make([]*kctx, 0, len(s.contexts))
	for _, c := range s.contexts {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	sort.Slice(cs, func(i, j int) bool {
		if !cs[i].created.Equal(cs[j].created) {
			return cs[i].created.Before(cs[j].created)
		}
		return cs[i].id < cs[j].id
	})
	out := make([]codewire.Context, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.info())
	}
	return out, nil
}

// Restart replaces a context's kernel by a new one (its state is lost, as
// asked); a running cell is interrupted first.
func (s *Supervisor) Restart(ctx context.Context, id string) (codewire.Context, error) {
	c, err := s.get(id)
	if err != nil {
		return codewire.Context{}, err
	}
	if err := c.restart(ctx); err != nil {
		return codewire.Context{}, err
	}
	return c.info(), nil
}

// Delete ends a context and its kernel.
func (s *Supervisor) Delete(_ context.Context, id string) error {
	c, err := s.get(id)
	if err != nil {
		return err
	}
	s.remove(c)
	c.close()
	return nil
}

// Warm starts the default context of each language in the background, so
// that the first cell finds its kernel running (E2B's server does the
// same for Python and JavaScript at start).
func (s *Supervisor) Warm(langs ...string) {
	for _, l := range langs {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StartTimeout)
			defer cancel()
			c, err := s.defaultContext(l)
			if err == nil {
				err = c.ensure(ctx)
			}
			if err != nil {
				s.log.Warn("code context warm-up failed", "language", l, "err", err)
			}
		}()
	}
}

// defaultContext returns (creating it if needed) a language's default
// context.
func (s *Supervisor) defaultContext(language string) (*kctx, error) {
	lang, ok := codewire.NormalizeLanguage(language)
	if !ok {
		return nil, errs.Invalid("unknown language %q: Paddock runs python, javascript, typescript and bash", trunc(language, 40))
	}
	s.mu.Lock()
	if id, ok := s.defaults[lang]; ok {
		c := s.contexts[id]
		s.mu.Unlock()
		if c != nil {
			return c, nil
		}
	} else {
		s.mu.Unlock()
	}
	c, err := s.newContext(codewire.CreateContextRequest{Language: lang}, true)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.defaults[lang]; ok && s.contexts[id] != nil {
		// Another request made it first.
		delete(s.contexts, c.id)
		return s.contexts[id], nil
	}
	s.defaults[lang] = c.id
	return c, nil
}

// Execute runs one cell and calls emit for each event of its stream, in
// order, from start to end. It returns an error (and emits nothing) when
// the request is refused: bad input, an unknown context, a full queue, or
// a kernel that cannot start. When emit fails (the caller went away), the
// cell is interrupted as on a timeout and Execute returns emit's error.
func (s *Supervisor) Execute(ctx context.Context, req codewire.ExecuteRequest, emit func(codewire.Event) error) error {
	if req.Context != "" && req.Language != "" {
		return errs.Invalid("give context_id or language, not both")
	}
	if len(req.Code) > s.lim.MaxCodeBytes {
		return errs.New(errs.CodeTooLarge, "code is larger than %d bytes", s.lim.MaxCodeBytes)
	}
	if err := checkEnv(req.Env); err != nil {
		return errs.Invalid("%s", err.Error())
	}
	timeout := s.cfg.DefaultTimeout
	if req.TimeoutMS < 0 {
		return errs.Invalid("timeout_ms must not be negative")
	}
	if req.TimeoutMS > 0 {
		timeout = time.Duration(req.TimeoutMS) * time.Millisecond
		if timeout > s.cfg.MaxTimeout {
			return errs.Invalid("timeout_ms is over the maximum of %d", s.cfg.MaxTimeout.Milliseconds())
		}
	}
	var c *kctx
	var err error
	if req.Context != "" {
		c, err = s.get(req.Context)
	} else {
		c, err = s.defaultContext(req.Language)
	}
	if err != nil {
		return err
	}
	return c.run(ctx, req, timeout, emit)
}

// Close ends every context and removes the state directory it made.
func (s *Supervisor) Close() {
	s.mu.Lock()
	s.closed = true
	cs := make([]*kctx, 0, len(s.contexts))
	for _, c := range s.contexts {
		cs = append(cs, c)
	}
	s.contexts = map[string]*kctx{}
	s.defaults = map[string]string{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close()
		}()
	}
	wg.Wait()
	if s.ownDir {
		_ = os.RemoveAll(s.stateDir)
	}
}

// start starts the engine for a language.
func (s *Supervisor) start(ctx context.Context, lang, cwd string, env map[string]string) (engine, error) {
	base := mergeEnv(s.cfg.Env, env)
	var e engine
	var err error
	switch lang {
	case codewire.Python:
		e, err = s.startPython(ctx, cwd, base)
	case codewire.JavaScript, codewire.TypeScript:
		e, err = s.startNode(ctx, cwd, base)
	case codewire.Bash:
		e, err = s.startBash(ctx, cwd, base)
	default:
		err = fmt.Errorf("unknown language %q", lang)
	}
	if err != nil {
		s.log.Warn("code context start failed", "language", lang, "err", err)
		// The reason is the user's to see (a missing interpreter, a crash
		// at start); its paths are the sandbox's own.
		return nil, errs.New(errs.CodeUnavailable, "could not start the %s kernel: %s", lang, err.Error())
	}
	return e, nil
}
