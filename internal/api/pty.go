package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// The interactive WebSockets (see docs/processes.md).
//
// GET /v1/sandboxes/{id}/pty: binary messages are terminal bytes both ways;
// text messages are JSON: from the client {"type":"resize","rows","cols"},
// {"type":"signal","signal"}, {"type":"eof"}; from the server
// {"type":"started","pid","id"}, {"type":"dropped","bytes"},
// {"type":"exit",...} and {"type":"error","code","message"}.
//
// GET /v1/sandboxes/{id}/exec/ws: an exec with streaming stdin. Binary
// messages from the client are stdin, {"type":"eof"} closes it; from the
// server a binary message is one byte of stream (1 stdout, 2 stderr) and
// the output.
const (
	// WSProtocol is the subprotocol the server selects (wire.WSProtocol).
	WSProtocol = wire.WSProtocol
	// wsTokenPrefix marks the key among the offered subprotocols.
	wsTokenPrefix = "bearer."

	wsReadLimit = 1 << 20
	wsPing      = 30 * time.Second
)

// Stream bytes of the exec WebSocket's server messages.
const (
	WSStdout = wire.WSStdout
	WSStderr = wire.WSStderr
)

// WSMessage is a text message of the server on the interactive sockets.
type WSMessage = wire.WSMessage

type wsOriginsKey struct{}

// WebSocketOrigins returns middleware that lets browser pages served from
// other origins open the interactive WebSockets (for Options.Middleware).
// Each pattern is matched (path.Match, case insensitive) against the
// Origin's host, or against "scheme://host" if it contains "://" — so the
// values of serve's --allowed-origin work as they are. Without it only
// same-origin pages (Origin host equal to the request's Host) and
// non-browser clients (no Origin) are accepted: cross-site WebSocket
// hijacking is a browser page opening a socket to an API on its visitor's
// behalf.
func WebSocketOrigins(patterns []string) (func(http.Handler) http.Handler, error) {
	if err := gate.ValidOriginPatterns(patterns); err != nil {
		return nil, err
	}
	ps := append([]string(nil), patterns...)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), wsOriginsKey{}, ps)))
		})
	}, nil
}

// AllowWebSocketOrigins wraps next with WebSocketOrigins(patterns).
func AllowWebSocketOrigins(next http.Handler, patterns []string) (http.Handler, error) {
	mw, err := WebSocketOrigins(patterns)
	if err != nil {
		return nil, err
	}
	return mw(next), nil
}

func wsOrigins(r *http.Request) []string {
	ps, _ := r.Context().Value(wsOriginsKey{}).([]string)
	return ps
}

// wsToken finds an API key offered as a subprotocol "bearer.<key>" or as
// ?token= (for clients that can set neither header).
func wsToken(r *http.Request) string {
	if tok := gate.Subprotocol(r.Header, wsTokenPrefix); tok != "" {
		return tok
	}
	return r.URL.Query().Get("token")
}

// authedWS registers a WebSocket route: the Origin is checked first
// (gate.CheckWebSocketOrigin: cross-site WebSocket hijacking), so that a
// refused page cannot even learn whether a sandbox exists; then the
// request goes through the gate like every route, with the key also taken
// from the subprotocol or ?token=.
func (s *Server) authedWS(pattern string, need rights.Right, h handler) {
	method, path, _ := strings.Cut(pattern, " ")
	inner := s.gated(pattern, need, h)
	s.route(Route{Method: method, Pattern: path, Need: need, WebSocket: true}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := gate.CheckWebSocketOrigin(r, wsOrigins(r)); err != nil {
			writeError(w, r, err)
			return
		}
		inner.ServeHTTP(w, wsCredential(r))
	}))
}

// wsCredential moves a key offered as a subprotocol or ?token= into the
// Authorization header; ?token= is dropped from the URL so that it reaches
// no log or audit record.
func wsCredential(r *http.Request) *http.Request {
	q := r.URL.Query()
	hasQuery := q.Has("token")
	tok := wsToken(r)
	if !hasQuery && (r.Header.Get("Authorization") != "" || tok == "") {
		return r
	}
	r = r.Clone(r.Context())
	if hasQuery {
		q.Del("token")
		r.URL.RawQuery = q.Encode()
		r.RequestURI = r.URL.RequestURI()
	}
	if r.Header.Get("Authorization") == "" && tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return r
}

// accept upgrades r; it answers the request itself on failure. The
// Origin was checked before anything else (authedWS), by the one rule of
// every surface; the library's own check, which compares hosts without
// normalising them, is not run again.
func accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{WSProtocol}, InsecureSkipVerify: true})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(wsReadLimit)
	return c, nil
}

// wsSession is the server side of one interactive socket.
type wsSession struct {
	c      *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
}

// openSession upgrades a WebSocket call on sandbox id once its query parsed
// (qerr is its error) and the caller may exec there; before the upgrade
// errors are ordinary answers. Nil: the call was answered.
func (s *Server) openSession(w http.ResponseWriter, r *http.Request, sc sandbox.Scope, id string, qerr error) *wsSession {
	if qerr != nil {
		writeError(w, r, qerr)
		return nil
	}
	if _, err := s.m.Resolve(r.Context(), sc, id, rights.Exec); err != nil {
		writeError(w, r, err)
		return nil
	}
	c, err := accept(w, r)
	if err != nil {
		return nil
	}
	return newSession(r, c)
}

func newSession(r *http.Request, c *websocket.Conn) *wsSession {
	// After the upgrade the request's context is not the connection's;
	// keep its values (principal, request id) but not its cancellation.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	s := &wsSession{c: c, ctx: ctx, cancel: cancel}
	go s.keepalive()
	return s
}

// keepalive pings so that idle terminals survive proxies that drop quiet
// connections.
func (s *wsSession) keepalive() {
	t := time.NewTicker(wsPing)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(s.ctx, wsPing)
			err := s.c.Ping(pctx)
			cancel()
			if err != nil {
				s.cancel()
				return
			}
		}
	}
}

func (s *wsSession) send(m WSMessage) error {
	b, _ := json.Marshal(m)
	return s.c.Write(s.ctx, websocket.MessageText, b)
}

func (s *wsSession) fail(err error) {
	_ = s.send(WSMessage{Type: "error", Code: string(errs.CodeOf(err)), Message: errs.Public(err)})
	_ = s.c.Close(websocket.StatusInternalError, clipReason(errs.Public(err)))
}

func (s *wsSession) close() {
	s.cancel()
	_ = s.c.CloseNow()
}

// clipReason fits a close reason in a control frame (123 bytes).
func clipReason(s string) string {
	if len(s) > 120 {
		s = s[:120]
	}
	return strings.ToValidUTF8(s, "?")
}

// terminalQuery is what ?cmd=&cmd=&user=&cwd=&env=K=V&rows=&cols=&pid= ask.
type terminalQuery struct {
	req  sandbox.TerminalRequest
	pid  string // attach to this running process instead of starting one
	from string // where an attachment's output starts (default: new output)
}

func parseTerminalQuery(q url.Values) (terminalQuery, error) {
	var t terminalQuery
	t.req.Cmd = q["cmd"]
	t.req.User = q.Get("user")
	t.req.Cwd = q.Get("cwd")
	t.pid = q.Get("pid")
	t.from = wire.FromTail
	if v := q.Get("from"); v != "" {
		if t.pid == "" {
			return t, errs.Invalid("from applies only with pid (a new session starts at its first byte)")
		}
		if err := sandbox.ValidFrom(v); err != nil {
			return t, err
		}
		t.from = v
	}
	env, err := parseEnvParams(q["env"])
	if err != nil {
		return t, err
	}
	t.req.Env = env
	for _, f := range []struct {
		name string
		dst  *int
	}{{"rows", &t.req.Size.Rows}, {"cols", &t.req.Size.Cols}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return t, errs.Invalid("%s must be a number", f.name)
		}
		*f.dst = n
	}
	if t.req.Size != (sandbox.PTYSize{}) {
		if err := sandbox.ValidPTY(t.req.Size); err != nil {
			return t, err
		}
	}
	if t.pid != "" && (len(t.req.Cmd) > 0 || len(t.req.Env) > 0 || t.req.User != "" || t.req.Cwd != "") {
		return t, errs.Invalid("pid attaches to a running process: cmd, env, user and cwd do not apply")
	}
	return t, nil
}

// parseEnvParams reads repeated env=KEY=VALUE parameters.
func parseEnvParams(items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(items))
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, errs.Invalid("env parameter must be KEY=VALUE")
		}
		m[k] = v
	}
	return m, nil
}

// terminal serves the PTY WebSocket: a new session (the user's login shell
// unless cmd is given), or with ?pid= an attachment to a running process's
// terminal. A new session ends with its socket (hang-up); an attachment
// only detaches.
func (s *Server) terminal(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	id := r.PathValue("id")
	tq, err := parseTerminalQuery(r.URL.Query())
	ss := s.openSession(w, r, sc, id, err)
	if ss == nil {
		return
	}
	defer ss.close()
	c := ss.c
	var att *sandbox.Attachment
	if tq.pid != "" {
		att, err = s.m.AttachProcess(ss.ctx, sc, id, tq.pid, tq.from)
		if err == nil && tq.req.Size != (sandbox.PTYSize{}) {
			err = att.Resize(tq.req.Size)
		}
	} else {
		att, err = s.m.OpenTerminal(ss.ctx, sc, id, tq.req)
	}
	if err != nil {
		if att != nil {
			att.Close()
		}
		ss.fail(err)
		return
	}
	defer att.Close()
	info := att.Info()
	if err := ss.send(WSMessage{Type: "started", Pid: info.Pid, ID: info.ID}); err != nil {
		return
	}
	go func() {
		// Input. A read error is the client leaving: detach (or hang up),
		// which ends Receive below.
		defer att.Close()
		defer ss.cancel()
		for {
			typ, b, err := c.Read(ss.ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageBinary {
				if err := att.Write(b); err != nil {
					return
				}
				continue
			}
			ctl, err := sandbox.ParseControl(b)
			if err != nil {
				_ = ss.send(WSMessage{Type: "error", Code: string(errs.CodeOf(err)), Message: errs.Public(err)})
				continue
			}
			switch ctl.Type {
			case sandbox.ControlResize:
				err = att.Resize(sandbox.PTYSize{Rows: ctl.Rows, Cols: ctl.Cols})
			case sandbox.ControlEOF:
				err = att.CloseStdin()
			case sandbox.ControlSignal:
				err = att.Signal(ctl.Signal, ctl.Tree)
			}
			if err != nil {
				_ = ss.send(WSMessage{Type: "error", Code: string(errs.CodeOf(err)), Message: errs.Public(err)})
			}
		}
	}()
	final, err := att.Receive(func(ev sandbox.OutputEvent) error {
		if len(ev.Data) == 0 {
			if ev.Dropped > 0 {
				return ss.send(WSMessage{Type: "dropped", Bytes: ev.Dropped})
			}
			return nil
		}
		return c.Write(ss.ctx, websocket.MessageBinary, ev.Data)
	})
	if err != nil {
		if ss.ctx.Err() == nil {
			ss.fail(err)
		}
		return
	}
	_ = ss.send(WSMessage{Type: "exit", Pid: final.Pid, ID: final.ID, ExitCode: final.ExitCode, Signal: final.Signal, OOMKilled: final.OOMKilled})
	_ = c.Close(websocket.StatusNormalClosure, "")
}

// parseExecQuery reads an exec from ?cmd=&cmd=&env=K=V&cwd=&user=&timeout_ms=.
func parseExecQuery(q url.Values) (sandbox.ExecRequest, error) {
	req := sandbox.ExecRequest{Cmd: q["cmd"], Cwd: q.Get("cwd"), User: q.Get("user")}
	if len(req.Cmd) == 0 {
		return req, errs.Invalid("cmd is required (repeat it for each argument)")
	}
	env, err := parseEnvParams(q["env"])
	if err != nil {
		return req, err
	}
	req.Env = env
	if v := q.Get("timeout_ms"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return req, errs.Invalid("timeout_ms must be a non-negative number")
		}
		req.TimeoutMs = n
	}
	return req, nil
}

// wsExecOut sends exec output as binary messages with a stream byte.
type wsExecOut struct {
	ss  *wsSession
	mu  sync.Mutex
	buf []byte
}

func (o *wsExecOut) send(stream byte, p []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(append(o.buf[:0], stream), p...)
	return o.ss.c.Write(o.ss.ctx, websocket.MessageBinary, o.buf)
}

func (o *wsExecOut) Stdout(p []byte) error { return o.send(WSStdout, p) }
func (o *wsExecOut) Stderr(p []byte) error { return o.send(WSStderr, p) }

// execWS serves an exec whose stdin streams from the socket (paddock exec
// -i). The command ends as an exec does: exit, timeout, or the socket
// closing (which kills it).
func (s *Server) execWS(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	id := r.PathValue("id")
	req, err := parseExecQuery(r.URL.Query())
	ss := s.openSession(w, r, sc, id, err)
	if ss == nil {
		return
	}
	defer ss.close()
	c := ss.c
	stdin := newWSStdin()
	go func() {
		defer ss.cancel()
		defer stdin.closeWrite(errors.New("client went away"))
		for {
			typ, b, err := c.Read(ss.ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageBinary {
				if err := stdin.write(b); err != nil {
					return
				}
				continue
			}
			ctl, err := sandbox.ParseControl(b)
			if err != nil || ctl.Type != sandbox.ControlEOF {
				msg := "only {\"type\":\"eof\"} controls an exec"
				if err != nil {
					msg = errs.Public(err)
				}
				_ = ss.send(WSMessage{Type: "error", Code: string(errs.CodeInvalid), Message: msg})
				continue
			}
			stdin.closeWrite(nil)
		}
	}()
	res, err := s.m.Exec(ss.ctx, sc, id, req, stdin, &wsExecOut{ss: ss}, true)
	stdin.closeRead()
	if err != nil {
		if ss.ctx.Err() == nil {
			ss.fail(err)
		}
		return
	}
	code := res.ExitCode
	_ = ss.send(WSMessage{Type: "exit", Pid: res.Pid, ExitCode: &code, Signal: res.Signal, OOMKilled: res.OOMKilled, TimedOut: res.TimedOut})
	_ = c.Close(websocket.StatusNormalClosure, "")
}

// wsStdin carries the socket's binary messages to an exec's stdin.
// Used by the socket's reader goroutine (write, closeWrite) and the exec
// (Read, closeRead).
type wsStdin struct {
	pr  *io.PipeReader
	pw  *io.PipeWriter
	eof bool
}

func newWSStdin() *wsStdin {
	pr, pw := io.Pipe()
	return &wsStdin{pr: pr, pw: pw}
}

func (s *wsStdin) Read(p []byte) (int, error) { return s.pr.Read(p) }

// write blocks until the command has taken b (backpressure to the client).
// Input after eof is ignored.
func (s *wsStdin) write(b []byte) error {
	if s.eof {
		return nil
	}
	_, err := s.pw.Write(b)
	return err
}

// closeWrite ends the input: EOF when err is nil.
func (s *wsStdin) closeWrite(err error) {
	s.eof = true
	_ = s.pw.CloseWithError(err)
}

// closeRead unblocks a writer once the exec is over.
func (s *wsStdin) closeRead() { _ = s.pr.Close() }
