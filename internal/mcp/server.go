package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// Defaults.
const (
	// DefaultIdleTimeout ends a streamable HTTP session (and deletes its
	// sandbox) after this long without a request.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the streamable HTTP sessions open at once.
	DefaultMaxSessions = 1024
	// DefaultMaxSessionsPerTenant and DefaultMaxSessionsPerKey bound one
	// tenant's and one key's share, below the whole: one key cannot fill
	// the server's sessions (resource starvation).
	DefaultMaxSessionsPerTenant = 256
	DefaultMaxSessionsPerKey    = 64
	// SessionLabel marks a session's own sandbox (value: an opaque id of
	// the session, not the MCP session id).
	SessionLabel = "mcp-session"
)

// Options configure a Server.
type Options struct {
	Log     *slog.Logger
	Version string
	// IdleTimeout of streamable HTTP sessions (0: DefaultIdleTimeout).
	IdleTimeout time.Duration
	// MaxSessions open at once over HTTP (0: DefaultMaxSessions), of one
	// tenant (0: DefaultMaxSessionsPerTenant) and of one key, its tokens
	// included (0: DefaultMaxSessionsPerKey).
	MaxSessions, MaxSessionsPerTenant, MaxSessionsPerKey int
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed to
	// call the HTTP endpoint; every other Origin is refused.
	AllowedOrigins []string
	// HostChecked says the server in front validates Host headers against
	// its names (DNS rebinding; paddock serve's hardening does), so the
	// SDK's own rule — on a loopback listener, only loopback names — is
	// left off, as it would refuse names the operator allowed. Leave it
	// false when serving Handler on its own.
	HostChecked bool
	// Auditor, if set, records every authenticated HTTP request, as the
	// REST API's does (fail closed: a request it cannot record is refused).
	Auditor gate.Auditor
	// RateLimit, if set, bounds each key's rate of HTTP requests (shared
	// with the other surfaces).
	RateLimit gate.Limiter
	// Browser, if set, drives the sandboxes' browsers: the browser tools
	// are served (tools_browser.go).
	Browser Browser
	// Templates, if set, serves the template tools (tools_template.go).
	Templates Templates
}

// Server is Paddock's MCP server: the tools over one Backend, served over
// streamable HTTP (Handler) and stdio (ServeStdio).
type Server struct {
	b       Backend
	o       Options
	log     *slog.Logger
	origins *gate.Origins
	http    *sdk.Server

	tools []ToolInfo // as New registered them (every session's server has the same)

	mu       sync.Mutex
	sessions map[*sdk.ServerSession]*session
	owners   *sessionOwners // who opened each HTTP session (limits.go)
	closed   bool
	bg       sync.WaitGroup
}

// New returns a server over b; it fails if a tool cannot be registered
// (a programming error, caught by the tests).
func New(b Backend, o Options) (*Server, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessionsPerTenant == 0 {
		o.MaxSessionsPerTenant = min(DefaultMaxSessionsPerTenant, o.MaxSessions)
	}
	if o.MaxSessionsPerKey == 0 {
		o.MaxSessionsPerKey = min(DefaultMaxSessionsPerKey, o.MaxSessionsPerTenant)
	}
	s := &Server{b: b, o: o, log: o.Log, sessions: map[*sdk.ServerSession]*session{}, owners: &sessionOwners{ids: map[string]opened{}}}
	var err error
	if s.origins, err = gate.NewOrigins(o.AllowedOrigins); err != nil {
		return nil, err
	}
	if s.http, err = s.newSDK(httpCaller); err != nil {
		return nil, err
	}
	return s, nil
}

const instructions = `Paddock gives you isolated, disposable Linux sandboxes: run shell commands (exec), ` +
	`read, write, edit and search files (file_*), and run servers or long jobs in the background (process_*). ` +
	`Tools that take a "sandbox" id use this session's own sandbox when you omit it: it is created on your first ` +
	`call and deleted when the session ends, so you usually need no ids at all. Use sandbox_create only for ` +
	`extra or differently sized sandboxes; those outlive the session until deleted or expired. The working ` +
	`directory is /workspace. Network access depends on the sandbox's policy (often none).`

// callerFunc names who is calling: the principal, and the base URL the
// request reached this server at ("" over stdio).
type callerFunc func(req *sdk.CallToolRequest) (auth.Principal, string, error)

// Keys in the SDK's TokenInfo.Extra set by the HTTP handler.
const (
	extraPrincipal = "paddock.principal"
	extraBaseURL   = "paddock.base_url"
)

func httpCaller(req *sdk.CallToolRequest) (auth.Principal, string, error) {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		if p, ok := req.Extra.TokenInfo.Extra[extraPrincipal].(auth.Principal); ok {
			base, _ := req.Extra.TokenInfo.Extra[extraBaseURL].(string)
			return p, base, nil
		}
	}
	return auth.Principal{}, "", errs.New(errs.CodeUnauthenticated, "the request carries no authenticated key")
}

func fixedCaller(p auth.Principal) callerFunc {
	return func(*sdk.CallToolRequest) (auth.Principal, string, error) { return p, "", nil }
}

// ToolInfo is a served tool and the rights it declares.
type ToolInfo struct {
	Name string
	Need rights.Set
}

// Tools lists the tools this server serves.
func (s *Server) Tools() []ToolInfo { return append([]ToolInfo(nil), s.tools...) }

// newSDK builds an SDK server with every tool.
func (s *Server) newSDK(caller callerFunc) (*sdk.Server, error) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "paddock", Title: "Paddock sandboxes", Version: s.o.Version},
		&sdk.ServerOptions{Instructions: instructions, Logger: quiet(s.log)})
	srv.AddReceivingMiddleware(dropNullArguments)
	tb := &Toolbox{s: s, srv: srv, caller: caller, record: s.tools == nil}
	coreTools(tb)
	if s.o.Browser != nil {
		browserTools(tb, s.o.Browser)
	}
	if s.o.Templates != nil {
		templateTools(tb, s.o.Templates)
	}
	return srv, tb.err
}

// quiet passes on the SDK's warnings and errors only (it logs every
// session at info).
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(levelFloor{l.Handler(), slog.LevelWarn})
}

type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
func (h levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{h.Handler.WithAttrs(a), h.min}
}
func (h levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{h.Handler.WithGroup(n), h.min}
}

// dropNullArguments removes arguments sent as null, which many clients
// and models send for "not given": the schemas say plain types (see
// schemaFor), and null means the same as omitted.
func dropNullArguments(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if ctr, ok := req.(*sdk.CallToolRequest); ok && ctr.Params != nil && bytes.Contains(ctr.Params.Arguments, []byte("null")) {
			var args map[string]json.RawMessage
			if json.Unmarshal(ctr.Params.Arguments, &args) == nil {
				changed := false
				for k, v := range args {
					if string(bytes.TrimSpace(v)) == "null" {
						delete(args, k)
						changed = true
					}
				}
				if changed {
					if b, err := json.Marshal(args); err == nil {
						ctr.Params.Arguments = b
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}

// Toolbox is where tools are registered (see Add).
type Toolbox struct {
	s      *Server
	srv    *sdk.Server
	caller callerFunc
	record bool // list the tools in Server.Tools (the first build)
	err    error
}

// Backend is the backend the tools act on.
func (tb *Toolbox) Backend() Backend { return tb.s.b }

// Tool describes a tool for Add.
type Tool struct {
	Name, Title, Description string
	// Need is what a caller must hold for the tool to do its work: the
	// rights of the services it calls, which check them (a caller lacking
	// one gets a forbidden tool error). Every tool declares it; the
	// every-route test holds each tool to it.
	Need rights.Set
	// ReadOnly tools change nothing; Additive ones only add (create,
	// start) and destroy nothing; Idempotent ones may be repeated safely.
	ReadOnly, Additive, Idempotent bool
}

// Add registers a tool whose input and output schemas are inferred from
// In and Out (descriptions from jsonschema tags). A handler's error
// becomes an isError result worded for a model (see explain).
func Add[In, Out any](tb *Toolbox, t Tool, h func(c *Call, in In) (Out, error)) {
	if tb.err != nil {
		return
	}
	in, err := schemaFor[In]()
	if err != nil {
		tb.err = fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		return
	}
	out, err := schemaFor[Out]()
	if err != nil {
		tb.err = fmt.Errorf("tool %s: output schema: %w", t.Name, err)
		return
	}
	ann := &sdk.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, IdempotentHint: t.Idempotent || t.ReadOnly}
	if t.ReadOnly || t.Additive {
		f := false
		ann.DestructiveHint = &f
	}
	tool := &sdk.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in, OutputSchema: out, Annotations: ann}
	if t.Need == 0 {
		tb.err = fmt.Errorf("tool %s declares no right (Tool.Need)", t.Name)
		return
	}
	if tb.record {
		tb.s.tools = append(tb.s.tools, ToolInfo{Name: t.Name, Need: t.Need})
	}
	defer func() {
		// The SDK panics on a tool it cannot use; report it as an error.
		if v := recover(); v != nil {
			tb.err = fmt.Errorf("tool %s: %v", t.Name, v)
		}
	}()
	s, caller := tb.s, tb.caller
	sdk.AddTool(tb.srv, tool, func(ctx context.Context, req *sdk.CallToolRequest, input In) (*sdk.CallToolResult, Out, error) {
		var zero Out
		c, err := s.newCall(ctx, req, caller)
		if err != nil {
			return nil, zero, s.fail(t.Name, c, err)
		}
		res, err := h(c, input)
		if err != nil {
			return nil, zero, s.fail(t.Name, c, err)
		}
		if len(c.notes) == 0 && len(c.extra) == 0 {
			return nil, res, nil
		}
		js, err := json.Marshal(res)
		if err != nil {
			return nil, zero, s.fail(t.Name, c, errs.Wrap(errs.CodeInternal, err, "cannot encode the result"))
		}
		content := append([]sdk.Content{&sdk.TextContent{Text: string(js)}}, c.extra...)
		if len(c.notes) > 0 {
			content = append(content, &sdk.TextContent{Text: "Note: " + strings.Join(c.notes, " ")})
		}
		return &sdk.CallToolResult{Content: content}, res, nil
	})
}

// fail words err for the model, and logs what the model does not see.
func (s *Server) fail(tool string, c *Call, err error) error {
	te := explain(err)
	if te.Code == errs.CodeInternal {
		s.log.Error("mcp tool failed", "tool", tool, "err", err)
	} else {
		s.log.Debug("mcp tool refused", "tool", tool, "code", string(te.Code), "err", err)
	}
	if c != nil && len(c.notes) > 0 {
		return &toolError{Code: te.Code, Msg: te.Msg + " Note: " + strings.Join(c.notes, " ")}
	}
	return te
}

// Call is one tool call: who is calling, in which session.
type Call struct {
	s     *Server
	ctx   context.Context
	p     auth.Principal
	sess  *session
	notes []string
	extra []sdk.Content // content after the JSON result (run_code's images)
}

// Context carries the caller (auth.FromContext) for the backend.
func (c *Call) Context() context.Context { return c.ctx }

// Backend is the backend to act on.
func (c *Call) Backend() Backend { return c.s.b }

// Note adds a remark for the model to the result.
func (c *Call) Note(s string) { c.notes = append(c.notes, s) }

func (s *Server) newCall(ctx context.Context, req *sdk.CallToolRequest, caller callerFunc) (*Call, error) {
	p, base, err := caller(req)
	if err != nil {
		return nil, err
	}
	ctx = gate.WithScope(ctx, p, auth.ScopeOf(p))
	if base != "" {
		ctx = gate.WithBaseURL(ctx, base)
	}
	c := &Call{s: s, ctx: ctx, p: p}
	if req.Session != nil {
		if c.sess, err = s.sessionFor(req.Session); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// On runs fn on the sandbox named explicit, or on this session's sandbox
// if explicit is empty, and returns the id used. If the session's sandbox
// has vanished (expired, deleted elsewhere, failed) it is replaced once,
// with a note; a missing explicit sandbox gets an answer saying so.
func (c *Call) On(explicit string, fn func(id string) error) (string, error) {
	id, own, err := c.resolve(explicit)
	if err != nil {
		return "", err
	}
	err = fn(id)
	if err == nil {
		return id, nil
	}
	if code := errs.CodeOf(err); code != errs.CodeNotFound && code != errs.CodeSandboxNotActive {
		return id, err
	}
	// Was it the sandbox that is missing, or something in it (a file)?
	sb, gerr := c.s.b.Get(c.ctx, id)
	gone := errs.CodeOf(gerr) == errs.CodeNotFound
	stopped := gerr == nil && sb.State != wire.StateRunning
	switch {
	case !gone && !stopped:
		return id, err
	case !own && gone:
		return id, errNoSandbox(id)
	case !own:
		return id, err
	}
	why := "was deleted"
	if stopped {
		why = "stopped (" + sb.Reason + ")"
		_ = c.s.b.Delete(context.WithoutCancel(c.ctx), id)
	}
	c.sess.forget(id)
	nid, _, err := c.resolve("")
	if err != nil {
		return "", err
	}
	c.Note(fmt.Sprintf("this session's sandbox %s %s, so this call ran in a new sandbox %s: files and processes from before are gone.", id, why, nid))
	return nid, fn(nid)
}

// resolve names the sandbox a call acts on; own reports the session's.
func (c *Call) resolve(explicit string) (id string, own bool, err error) {
	if explicit != "" {
		if c.sess != nil && explicit == c.sess.current() {
			id, err := c.sess.ensure(c)
			return id, true, err
		}
		return explicit, false, nil
	}
	if c.p.Sandbox != "" {
		// A sandbox-scoped token reaches one sandbox: that is this
		// session's sandbox.
		return c.p.Sandbox, false, nil
	}
	if c.sess == nil {
		return "", false, newToolError(errs.CodeInvalid, "This connection has no MCP session; pass `sandbox` with the id of a sandbox (sandbox_list, sandbox_create).")
	}
	id, err = c.sess.ensure(c)
	return id, true, err
}

// SessionSandbox is the id of this session's sandbox, "" if none yet.
func (c *Call) SessionSandbox() string {
	if c.p.Sandbox != "" {
		return c.p.Sandbox
	}
	if c.sess == nil {
		return ""
	}
	return c.sess.current()
}

// session is the state of one MCP session: its own sandbox.
type session struct {
	key  string // the label value marking its sandbox
	once sync.Once

	mu        sync.Mutex
	closed    bool
	principal auth.Principal // who created the sandbox (and deletes it)
	sandbox   string
	expires   time.Time
	ttl       time.Duration
}

func (s *Server) sessionFor(ss *sdk.ServerSession) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[ss]; sess != nil {
		return sess, nil
	}
	if s.closed {
		return nil, newToolError(errs.CodeUnavailable, "The Paddock MCP server is shutting down.")
	}
	sess := &session{key: randomKey()}
	s.sessions[ss] = sess
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		_ = ss.Wait()
		s.endSession(ss)
	}()
	return sess, nil
}

func randomKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x", b)
}

func (sess *session) current() string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.sandbox
}

// forget drops the record of sandbox id (deleted or gone).
func (sess *session) forget(id string) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.sandbox == id {
		sess.sandbox = ""
	}
}

// ensure returns the session's sandbox, creating it on first use, and
// renews its life while the session uses it. The lock makes concurrent
// first calls create one sandbox.
func (sess *session) ensure(c *Call) (string, error) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.closed {
		return "", newToolError(errs.CodeUnavailable, "This MCP session has ended; reconnect to get a new one.")
	}
	now := time.Now()
	if sess.sandbox != "" {
		if now.Before(sess.expires) {
			if left := sess.expires.Sub(now); sess.ttl > 0 && left < sess.ttl/2 {
				if sb, err := c.s.b.SetTimeout(c.ctx, sess.sandbox, sess.ttl); err == nil {
					sess.expires = sb.ExpiresAt
				} else {
					c.s.log.Debug("mcp: cannot renew the session sandbox", "sandbox", sess.sandbox, "err", err)
				}
			}
			return sess.sandbox, nil
		}
		c.Note(fmt.Sprintf("this session's sandbox %s reached its time limit (%s) without use and was removed, so this call ran in a new sandbox: files and processes from before are gone.", sess.sandbox, sess.ttl))
		sess.sandbox = ""
	}
	sb, err := c.s.b.Create(c.ctx, wire.Spec{Labels: map[string]string{SessionLabel: sess.key}})
	if err != nil {
		te := explain(err)
		return "", &toolError{Code: te.Code, Msg: "Cannot create this session's sandbox: " + te.Msg + " Or pass `sandbox` with the id of an existing sandbox (sandbox_list)."}
	}
	sess.principal = c.p
	sess.sandbox, sess.expires = sb.ID, sb.ExpiresAt
	sess.ttl = time.Duration(sb.Spec.TimeoutS) * time.Second
	return sb.ID, nil
}

// endSession deletes a finished session's sandbox (once; concurrent
// callers wait for it).
func (s *Server) endSession(ss *sdk.ServerSession) {
	s.mu.Lock()
	sess := s.sessions[ss]
	s.mu.Unlock()
	if sess == nil {
		return
	}
	sess.once.Do(func() {
		sess.mu.Lock()
		sess.closed = true
		id, p := sess.sandbox, sess.principal
		sess.sandbox = ""
		sess.mu.Unlock()
		if id != "" {
			ctx, cancel := context.WithTimeout(gate.WithScope(context.Background(), p, auth.ScopeOf(p)), time.Minute)
			defer cancel()
			if err := s.b.Delete(ctx, id); err != nil && errs.CodeOf(err) != errs.CodeNotFound {
				s.log.Warn("mcp: cannot delete the sandbox of a finished session; it expires on its own", "sandbox", id, "err", err)
			}
		}
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
	})
}

// Close ends every session (deleting their sandboxes) and waits for that,
// up to ctx.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	open := make([]*sdk.ServerSession, 0, len(s.sessions))
	for ss := range s.sessions {
		open = append(open, ss)
	}
	s.mu.Unlock()
	for ss := range s.http.Sessions() {
		open = append(open, ss)
	}
	for _, ss := range open {
		_ = ss.Close()
	}
	done := make(chan struct{})
	go func() { s.bg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
