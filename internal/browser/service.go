package browser

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Sandboxes is what the service needs of the sandbox manager
// (*sandbox.Manager has it): a sandbox for a caller, its browser's state,
// a launch and a stop (on the record), DevTools connections, and a record
// around the actions the service composes. Each serves a caller acting
// with the right of the action it is part of.
type Sandboxes interface {
	Resolve(ctx context.Context, sc sandbox.Scope, id string, need rights.Right) (sandbox.Sandbox, error)
	BrowserState(ctx context.Context, sc sandbox.Scope, id string, need rights.Right) (sandbox.BrowserState, error)
	StartBrowser(ctx context.Context, sc sandbox.Scope, id string, need rights.Right, l sandbox.BrowserLaunch) (sandbox.BrowserState, error)
	StopBrowser(ctx context.Context, sc sandbox.Scope, id string) (sandbox.BrowserState, error)
	DialBrowser(ctx context.Context, sc sandbox.Scope, id string, need rights.Right, instance int) (net.Conn, error)
	Act(ctx context.Context, sc sandbox.Scope, id string, need rights.Right, kind string, intent map[string]any, fn func() (map[string]any, error)) error
}

// Service is the browser service: one DevTools session per sandbox whose
// browser is in use, and the actions over it. Every method checks the
// caller's right and resolves the sandbox through the manager first
// (another tenant's sandbox is not found); mutating actions are on the
// record.
type Service struct {
	m      Sandboxes
	o      Options
	log    *slog.Logger
	limits *cdpLimits // what browsers may send (cdplimits.go); the budget is server-wide

	ctx    context.Context // sessions live under it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	sessions map[string]*session      // by sandbox id
	pending  map[string]chan struct{} // sessions being connected
	conns    map[string]int           // CDP connections and viewers per sandbox
	seen     map[string]int           // the browser instance each sandbox's last session used
	closed   bool
}

// maxSeen bounds the instances remembered (sandboxes come and go).
const maxSeen = 4096

// lastInstance records that sandbox id's browser runs instance n now and
// returns the one its previous session used (0: none).
func (s *Service) lastInstance(id string, n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.seen[id]
	if _, ok := s.seen[id]; !ok && len(s.seen) >= maxSeen {
		for k := range s.seen { // forget an arbitrary one
			delete(s.seen, k)
			break
		}
	}
	s.seen[id] = n
	return prev
}

// New returns the service over m; register it with the manager's
// SetBrowser so that sandboxes created with a browser have it started.
func New(m Sandboxes, o Options) *Service {
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{m: m, o: o, log: o.Log, ctx: ctx, cancel: cancel,
		limits: &cdpLimits{message: int64(o.MaxCDPMessage), capture: int64(o.MaxCDPCapture), eventRate: int64(o.MaxCDPEventRate),
			budget: newByteBudget(o.CDPBudget)},
		sessions: map[string]*session{}, pending: map[string]chan struct{}{}, conns: map[string]int{}, seen: map[string]int{}}
	s.wg.Add(1)
	go s.reapIdle()
	return s
}

// Options returns the service's options, defaults filled in.
func (s *Service) Options() Options { return s.o }

// Close drops every DevTools session (the browsers keep running in their
// sandboxes) and waits for the service's goroutines.
func (s *Service) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	sessions := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	for _, sess := range sessions {
		sess.close()
	}
	s.cancel()
	s.wg.Wait()
}

// SandboxCreated starts the browser of a sandbox created with one
// (sandbox.Browser): in the background, so that create stays fast; the
// first action waits for it.
func (s *Service) SandboxCreated(sc sandbox.Scope, sb sandbox.Sandbox) {
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if closed {
		return
	}
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, s.o.StartTimeout+dialTimeout)
		defer cancel()
		sess, err := s.session(ctx, sc, sb.ID, rights.Write)
		if err == nil {
			err = sess.warm(ctx)
		}
		if err != nil && s.ctx.Err() == nil {
			s.log.Warn("browser: start at create failed", "sandbox", sb.ID, "err", err)
		}
	}()
}

// reapIdle closes sessions nobody used for IdleTimeout.
func (s *Service) reapIdle() {
	defer s.wg.Done()
	every := s.o.IdleTimeout / 4
	if every > time.Minute {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		var idle []*session
		s.mu.Lock()
		for id, sess := range s.sessions {
			if time.Since(sess.lastUsed()) > s.o.IdleTimeout && sess.busy() == 0 {
				idle = append(idle, sess)
				delete(s.sessions, id)
			}
		}
		s.mu.Unlock()
		for _, sess := range idle {
			sess.close()
		}
	}
}

// session returns the sandbox's DevTools session for a caller acting
// with need, starting the browser and connecting first if needed.
// Concurrent callers share one connect.
func (s *Service) session(ctx context.Context, sc sandbox.Scope, id string, need rights.Right) (*session, error) {
	sb, err := s.m.Resolve(ctx, sc, id, need)
	if err != nil {
		return nil, err
	}
	if sb.State != sandbox.StateRunning {
		return nil, errs.New(errs.CodeSandboxNotActive, "sandbox is %s: %s", sb.State, sb.Reason)
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, errs.New(errs.CodeUnavailable, "the server is shutting down")
		}
		if sess := s.sessions[id]; sess != nil {
			if sess.alive() {
				sess.touch()
				s.mu.Unlock()
				return sess, nil
			}
			delete(s.sessions, id)
			go sess.close()
		}
		if ch := s.pending[id]; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		s.pending[id] = ch
		s.mu.Unlock()

		sess, err := s.connect(ctx, sc, id, need, sb.Spec)

		s.mu.Lock()
		delete(s.pending, id)
		close(ch)
		var evict *session
		if err == nil {
			if s.closed {
				s.mu.Unlock()
				sess.close()
				return nil, errs.New(errs.CodeUnavailable, "the server is shutting down")
			}
			s.sessions[id] = sess
			evict = s.evictLocked()
		}
		s.mu.Unlock()
		if evict != nil {
			evict.close()
		}
		return sess, err
	}
}

// evictLocked removes the least recently used idle session beyond
// MaxSessions.
func (s *Service) evictLocked() *session {
	if len(s.sessions) <= s.o.MaxSessions {
		return nil
	}
	ids := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return s.sessions[ids[i]].lastUsed().Before(s.sessions[ids[j]].lastUsed()) })
	for _, id := range ids {
		if sess := s.sessions[id]; sess.busy() == 0 {
			delete(s.sessions, id)
			return sess
		}
	}
	return nil
}

// drop forgets sess (its connection is gone).
func (s *Service) drop(sess *session) {
	s.mu.Lock()
	if s.sessions[sess.id] == sess {
		delete(s.sessions, sess.id)
	}
	s.mu.Unlock()
	sess.close()
}

// startBrowser makes the sandbox's browser run (a launch is on the
// record: the manager's).
func (s *Service) startBrowser(ctx context.Context, sc sandbox.Scope, id string, need rights.Right) (sandbox.BrowserState, error) {
	sctx, cancel := context.WithTimeout(ctx, s.o.StartTimeout+5*time.Second)
	defer cancel()
	info, err := s.m.StartBrowser(sctx, sc, id, need, launch(s.o))
	if err == nil {
		return info, nil
	}
	switch errs.CodeOf(err) {
	case errs.CodeCommandNotFound:
		return info, errs.Wrap(errs.CodeUnsupported, err, "the browser (%s, Debian's chromium package) is not installed on this server", s.o.Chromium)
	case errs.CodeInternal:
		return info, errs.Wrap(errs.CodeUnavailable, err, "the browser could not be started")
	}
	return info, err
}

// Start starts the sandbox's browser (if it is not running) and connects.
func (s *Service) Start(ctx context.Context, sc sandbox.Scope, id string) (wire.Status, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Status{}, err
	}
	sess, err := s.session(ctx, sc, id, rights.Exec)
	if err != nil {
		return wire.Status{}, err
	}
	if err := sess.warm(ctx); err != nil {
		return wire.Status{}, s.explain(ctx, sess, "starting the browser", attachTimeout, err)
	}
	return s.Status(ctx, sc, id)
}

// Stop stops the sandbox's browser (it starts again at the next action).
func (s *Service) Stop(ctx context.Context, sc sandbox.Scope, id string) (wire.Status, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Status{}, err
	}
	info, err := s.m.StopBrowser(ctx, sc, id)
	if err != nil {
		return wire.Status{}, err
	}
	s.mu.Lock()
	sess := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if sess != nil {
		sess.close()
	}
	return statusOf(info, false), nil
}

// Status reports the sandbox's browser (and its tabs, when connected). It
// starts nothing.
func (s *Service) Status(ctx context.Context, sc sandbox.Scope, id string) (wire.Status, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.Status{}, err
	}
	info, err := s.m.BrowserState(ctx, sc, id, rights.Read)
	if err != nil {
		return wire.Status{}, err
	}
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	connected := sess != nil && sess.alive() && sess.d.instance == info.Instance
	st := statusOf(info, connected)
	if connected {
		if tabs, err := sess.tabList(ctx); err == nil {
			st.Tabs = tabs
		}
	}
	return st, nil
}

func statusOf(info sandbox.BrowserState, connected bool) wire.Status {
	return wire.Status{State: info.State, Pid: info.Pid, StartedAt: info.StartedAt, Restarts: info.Restarts,
		LastExit: info.LastExit, OOMKills: info.OOMKills, Error: info.Error, StartMs: info.StartMs, Connected: connected}
}

// errPageCrashed ends an action whose page crashed under it.
var errPageCrashed = errors.New("page crashed")

// explain turns what an action failed with into an error for the caller.
// what names the action ("click on text=\"Save\""); timeout is its bound.
func (s *Service) explain(ctx context.Context, sess *session, what string, timeout time.Duration, err error) error {
	if err == nil {
		return nil
	}
	var pe *errs.Error
	if errors.As(err, &pe) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err() // the caller went away
	}
	if errors.Is(err, errPageCrashed) {
		return sess.crashError(ctx, what)
	}
	if !sess.alive() {
		s.drop(sess)
		return sess.lostError(ctx, what)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errs.New(errs.CodeTimeout, "%s did not finish within %s (raise timeout_ms, up to %s)", what, timeout.Round(time.Millisecond), s.o.MaxTimeout)
	}
	var le *chromedp.LoadError
	if errors.As(err, &le) {
		return errs.New(errs.CodeUnavailable, "%s failed: %s", what, clipText(le.ErrorText, 200))
	}
	var ce *cdproto.Error
	if errors.As(err, &ce) {
		return errs.Wrap(errs.CodeUnavailable, err, "%s failed: the browser answered %q", what, clipText(ce.Message, 200))
	}
	if errors.Is(err, chromedp.ErrTargetDetached) || errors.Is(err, context.Canceled) || errors.Is(err, chromedp.ErrChannelClosed) {
		s.drop(sess)
		return sess.lostError(ctx, what)
	}
	return errs.Wrap(errs.CodeInternal, err, "%s failed", what)
}

// timeout is the bound of an action: the request's, or def; at most
// MaxTimeout.
func (s *Service) timeout(ms int64, def time.Duration) (time.Duration, error) {
	if ms < 0 {
		return 0, errs.Invalid("timeout_ms must not be negative")
	}
	if ms == 0 {
		return def, nil
	}
	d := time.Duration(ms) * time.Millisecond
	if d > s.o.MaxTimeout {
		return 0, errs.Invalid("timeout_ms must be at most %d", s.o.MaxTimeout.Milliseconds())
	}
	return d, nil
}

// acquire counts a long-lived connection (CDP, viewer) of a sandbox
// against max; release with the returned func.
func (s *Service) acquire(id, kind string, max int) (func(), error) {
	key := kind + "/" + id
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[key] >= max {
		return nil, errs.New(errs.CodeLimit, "this sandbox already has %d %s connections open (the limit)", max, kind)
	}
	s.conns[key]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.conns[key]--; s.conns[key] <= 0 {
			delete(s.conns, key)
		}
	}, nil
}

// clipText shortens untrusted text for a message.
func clipText(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// within runs fn, giving up after d or when ctx ends (fn then goes on in
// the background; the caller cancels what it works on).
func within(ctx context.Context, d time.Duration, what string, fn func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- fn() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-errc:
		return err
	case <-t.C:
		return errs.New(errs.CodeTimeout, "%s did not finish within %s", what, d)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
