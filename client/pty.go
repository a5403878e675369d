package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/wire"
)

// wsProtocol is the subprotocol of Paddock's interactive sockets.
const wsProtocol = "paddock.v1"

// dialWS opens one of the server's WebSockets, authenticating with the key.
func (c *Client) dialWS(ctx context.Context, path string, q url.Values) (*websocket.Conn, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	h := http.Header{}
	if c.key != "" {
		h.Set("Authorization", "Bearer "+c.key)
	}
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.hc, HTTPHeader: h, Subprotocols: []string{wsProtocol}})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols && resp.Body != nil {
			return nil, c.decodeError(resp)
		}
		return nil, fmt.Errorf("cannot open a WebSocket to the Paddock server at %s: %w", c.base, err)
	}
	conn.SetReadLimit(16 << 20)
	return conn, nil
}

func messageError(m wire.WSMessage) error {
	return &Error{Status: 200, Code: m.Code, Message: m.Message}
}

// TerminalOptions open a terminal.
type TerminalOptions struct {
	Cmd  []string // default: the user's login shell
	User string
	Cwd  string
	Env  map[string]string
	Rows int // default 24
	Cols int // default 80
	// Attach, when set, attaches to that running process's terminal
	// instead of starting a session; closing then only detaches. From is
	// where its output starts (default: new output only).
	Attach ProcessRef
	From   string
}

// TerminalExit is how a terminal's program ended.
type TerminalExit struct {
	ExitCode  int
	Signal    string
	OOMKilled bool
}

// Terminal is an interactive terminal in a sandbox: Read its output,
// Write keystrokes, Resize it. A session the terminal started ends (hang
// up) when it is closed.
type Terminal struct {
	conn    *websocket.Conn
	ctx     context.Context
	cancel  context.CancelFunc
	pr      *io.PipeReader
	pw      *io.PipeWriter
	pid     int
	id      string
	done    chan struct{}
	exit    *TerminalExit
	err     error
	dropped int64
	mu      sync.Mutex
}

// Terminal opens a terminal in sandbox id.
func (c *Client) Terminal(ctx context.Context, id string, opt TerminalOptions) (*Terminal, error) {
	q := url.Values{}
	for _, a := range opt.Cmd {
		q.Add("cmd", a)
	}
	for k, v := range opt.Env {
		q.Add("env", k+"="+v)
	}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("user", opt.User)
	set("cwd", opt.Cwd)
	set("pid", string(opt.Attach))
	set("from", opt.From)
	if opt.Rows > 0 || opt.Cols > 0 {
		q.Set("rows", strconv.Itoa(opt.Rows))
		q.Set("cols", strconv.Itoa(opt.Cols))
	}
	conn, err := c.dialWS(ctx, "/v1/sandboxes/"+url.PathEscape(id)+"/pty", q)
	if err != nil {
		return nil, err
	}
	// The session lives until Close, not until ctx of the dial ends.
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	typ, b, err := conn.Read(tctx)
	if err != nil {
		cancel()
		conn.CloseNow()
		return nil, fmt.Errorf("terminal: %w", err)
	}
	var m wire.WSMessage
	if typ != websocket.MessageText || json.Unmarshal(b, &m) != nil || (m.Type != "started" && m.Type != "error") {
		cancel()
		conn.CloseNow()
		return nil, errors.New("terminal: the server did not start a session")
	}
	if m.Type == "error" {
		cancel()
		conn.CloseNow()
		return nil, messageError(m)
	}
	pr, pw := io.Pipe()
	t := &Terminal{conn: conn, ctx: tctx, cancel: cancel, pr: pr, pw: pw, pid: m.Pid, id: m.ID, done: make(chan struct{})}
	go t.readLoop()
	return t, nil
}

func (t *Terminal) readLoop() {
	defer close(t.done)
	var err error
	defer func() {
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
		if err == nil {
			err = io.EOF
		}
		t.pw.CloseWithError(err)
	}()
	for {
		typ, b, rerr := t.conn.Read(t.ctx)
		if rerr != nil {
			t.mu.Lock()
			exited := t.exit != nil
			t.mu.Unlock()
			if !exited {
				err = fmt.Errorf("terminal connection lost: %w", rerr)
			}
			return
		}
		if typ == websocket.MessageBinary {
			if _, werr := t.pw.Write(b); werr != nil {
				return // the reader closed: nobody wants output any more
			}
			continue
		}
		var m wire.WSMessage
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		switch m.Type {
		case "exit":
			ex := TerminalExit{Signal: m.Signal, OOMKilled: m.OOMKilled}
			if m.ExitCode != nil {
				ex.ExitCode = *m.ExitCode
			}
			t.mu.Lock()
			t.exit = &ex
			t.mu.Unlock()
		case "error":
			err = messageError(m)
			return
		case "dropped":
			t.mu.Lock()
			t.dropped += m.Bytes
			t.mu.Unlock()
		}
	}
}

// Pid is the pid of the terminal's program in the sandbox.
func (t *Terminal) Pid() int { return t.pid }

// ID is its process id (for the process API).
func (t *Terminal) ID() string { return t.id }

// Read reads terminal output; io.EOF once the program has exited.
func (t *Terminal) Read(p []byte) (int, error) { return t.pr.Read(p) }

// Write sends keystrokes.
func (t *Terminal) Write(p []byte) (int, error) {
	if err := t.conn.Write(t.ctx, websocket.MessageBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (t *Terminal) control(m wire.WSMessage) error {
	b, _ := json.Marshal(m)
	return t.conn.Write(t.ctx, websocket.MessageText, b)
}

// Resize tells the terminal its new size.
func (t *Terminal) Resize(rows, cols int) error {
	return t.control(wire.WSMessage{Type: "resize", Rows: rows, Cols: cols})
}

// Signal sends a signal to the terminal's program ("SIGINT", ...).
func (t *Terminal) Signal(sig string) error {
	return t.control(wire.WSMessage{Type: "signal", Signal: sig})
}

// CloseInput ends the terminal's input: it gets its EOF character (^D).
func (t *Terminal) CloseInput() error {
	return t.control(wire.WSMessage{Type: "eof"})
}

// Dropped is how many output bytes the server had to drop because this
// client read too slowly.
func (t *Terminal) Dropped() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped
}

// Wait blocks until the program exits (or the connection ends) and says how
// it ended. Output not yet Read is discarded.
func (t *Terminal) Wait() (TerminalExit, error) {
	go func() { _, _ = io.Copy(io.Discard, t.pr) }()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return TerminalExit{}, t.err
	}
	if t.exit == nil {
		return TerminalExit{}, errors.New("terminal closed before its program exited")
	}
	return *t.exit, nil
}

// Close ends the connection (a session started by Terminal is hung up).
func (t *Terminal) Close() error {
	err := t.conn.Close(websocket.StatusNormalClosure, "")
	t.cancel()
	t.pr.Close()
	select {
	case <-t.done:
		return nil // the server had ended it already
	default:
	}
	return err
}

// ExecInteractive runs a command whose stdin streams from stdin (until its
// EOF), copying output to stdout and stderr as it arrives. As with os/exec,
// a goroutine may stay blocked reading stdin after the command ended until
// that read returns.
func (c *Client) ExecInteractive(ctx context.Context, id string, req ExecRequest, stdin io.Reader, stdout, stderr io.Writer) (ExecResult, error) {
	q := url.Values{}
	for _, a := range req.Cmd {
		q.Add("cmd", a)
	}
	for k, v := range req.Env {
		q.Add("env", k+"="+v)
	}
	if req.Cwd != "" {
		q.Set("cwd", req.Cwd)
	}
	if req.User != "" {
		q.Set("user", req.User)
	}
	if req.TimeoutMs > 0 {
		q.Set("timeout_ms", strconv.FormatInt(req.TimeoutMs, 10))
	}
	conn, err := c.dialWS(ctx, "/v1/sandboxes/"+url.PathEscape(id)+"/exec/ws", q)
	if err != nil {
		return ExecResult{}, err
	}
	defer conn.CloseNow()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if stdin != nil {
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := stdin.Read(buf)
				if n > 0 {
					if conn.Write(wctx, websocket.MessageBinary, buf[:n]) != nil {
						return
					}
				}
				if err != nil {
					b, _ := json.Marshal(wire.WSMessage{Type: "eof"})
					_ = conn.Write(wctx, websocket.MessageText, b)
					return
				}
			}
		}()
	} else {
		b, _ := json.Marshal(wire.WSMessage{Type: "eof"})
		if err := conn.Write(wctx, websocket.MessageText, b); err != nil {
			return ExecResult{}, err
		}
	}
	for {
		typ, b, err := conn.Read(ctx)
		if err != nil {
			return ExecResult{}, fmt.Errorf("exec connection lost: %w", err)
		}
		if typ == websocket.MessageBinary {
			if len(b) == 0 {
				continue
			}
			w := stdout
			if b[0] == 2 {
				w = stderr
			}
			if _, err := w.Write(b[1:]); err != nil {
				return ExecResult{}, err
			}
			continue
		}
		var m wire.WSMessage
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		switch m.Type {
		case "exit":
			res := ExecResult{Signal: m.Signal, OOMKilled: m.OOMKilled, TimedOut: m.TimedOut, Pid: m.Pid}
			if m.ExitCode != nil {
				res.ExitCode = *m.ExitCode
			}
			_ = conn.Close(websocket.StatusNormalClosure, "")
			return res, nil
		case "error":
			return ExecResult{}, messageError(m)
		}
	}
}
