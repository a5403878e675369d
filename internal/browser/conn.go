package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Bounds on what the browser (the sandbox's, so untrusted) may send;
// DevTools messages: cdplimits.go.
const (
	// maxJSONDoc bounds a /json/* document read from the browser.
	maxJSONDoc  = 4 << 20
	dialTimeout = 10 * time.Second
)

// devtools reaches one instance of a sandbox's browser: TCP connections
// to its DevTools port, relayed by the guest through the manager (the
// port is on the sandbox's loopback, which nothing outside the sandbox
// can reach otherwise), for one caller.
type devtools struct {
	m        Sandboxes
	sc       sandbox.Scope
	id       string
	need     rights.Right
	instance int    // the guest refuses connections to another instance
	port     int    // for the Host header (Chromium accepts only IP hosts)
	wsPath   string // /devtools/browser/<id>
	limits   *cdpLimits
}

func newDevtools(m Sandboxes, sc sandbox.Scope, id string, need rights.Right, info sandbox.BrowserState, l *cdpLimits) devtools {
	return devtools{m: m, sc: sc, id: id, need: need, instance: info.Instance, port: info.Port, wsPath: info.WSPath, limits: l}
}

func (d devtools) dial(ctx context.Context) (net.Conn, error) {
	return d.m.DialBrowser(ctx, d.sc, d.id, d.need, d.instance)
}

// host is what Chromium must see in Host: it refuses names (DNS
// rebinding), so the loopback address it listens on.
func (d devtools) host() string { return "127.0.0.1:" + strconv.Itoa(d.port) }

// httpClient talks HTTP to DevTools, one relayed connection per request.
func (d devtools) httpClient() *http.Client {
	return &http.Client{Transport: d.transport(), Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (d devtools) transport() *http.Transport {
	return &http.Transport{
		DialContext:            func(ctx context.Context, _, _ string) (net.Conn, error) { return d.dial(ctx) },
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
		ResponseHeaderTimeout:  dialTimeout,
		Proxy:                  nil,
	}
}

// dialWS opens a DevTools WebSocket (path: /devtools/browser/<id> or
// /devtools/page/<id>).
func (d devtools) dialWS(ctx context.Context, path string) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws://"+d.host()+path, &websocket.DialOptions{HTTPClient: &http.Client{Transport: d.transport()}})
	if err != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return nil, fmt.Errorf("DevTools WebSocket %s: %w", path, err)
	}
	// Memory exhaustion by a hostile browser: the library's own limit
	// backs up the transport's (cdplimits.go), which is checked first.
	c.SetReadLimit(max(d.limits.message, d.limits.capture) + 1)
	return c, nil
}

// wsTransport is chromedp's Transport over a DevTools WebSocket. Read
// enforces the bounds of cdplimits.go on everything the browser sends.
type wsTransport struct {
	c        *websocket.Conn
	l        *cdpLimits
	mu       sync.Mutex // one writer at a time
	captures pendingCaptures
	events   eventMeter    // only Read uses it
	refused  *atomic.Value // why the connection was closed (a string), shared with the allocator
}

// Read reads the next message. The context chromedp passes lives as long
// as the browser connection, so reading does not tie up a timer.
func (t *wsTransport) Read(ctx context.Context, msg *cdproto.Message) error {
	err := t.read(ctx, msg)
	if errors.Is(err, errCDPLimit) {
		// Only this sandbox's connection closes; the next action
		// reconnects and reports why (session.lostExplained).
		t.refused.Store(err.Error())
		t.c.CloseNow()
	}
	return err
}

func (t *wsTransport) read(ctx context.Context, msg *cdproto.Message) error {
	typ, r, err := t.c.Reader(ctx)
	if err != nil {
		return err
	}
	if typ != websocket.MessageText {
		return fmt.Errorf("DevTools sent a binary message")
	}
	limit := t.l.message
	if t.captures.n.Load() > 0 {
		limit = max(limit, t.l.capture)
	}
	data, held, err := t.l.readBounded(ctx, r, limit)
	defer t.l.budget.release(held)
	if err != nil {
		return err
	}
	if err := jsonv2.Unmarshal(data, msg, chromedp.DefaultUnmarshalOptions); err != nil {
		return err
	}
	switch {
	case msg.ID != 0:
		// A large reply is one to a capture this connection asked for.
		if !t.captures.done(msg.ID) && int64(len(data)) > t.l.message {
			return fmt.Errorf("%w: the browser sent a DevTools reply of %d bytes (over %d) to a command that expects none so large", errCDPLimit, len(data), t.l.message)
		}
	case msg.Method != "":
		if !t.events.allow(int64(len(data)), t.l.eventRate) {
			return fmt.Errorf("%w: the browser sent DevTools events faster than %d MiB/s", errCDPLimit, t.l.eventRate>>20)
		}
		if int64(len(data)) > t.l.message {
			return fmt.Errorf("%w: the browser sent a DevTools event of %d bytes (over %d)", errCDPLimit, len(data), t.l.message)
		}
	}
	return nil
}

// Write sends one message as one text frame (Chromium does not accept
// fragmented messages).
func (t *wsTransport) Write(ctx context.Context, msg *cdproto.Message) error {
	b, err := jsonv2.Marshal(msg, chromedp.DefaultMarshalOptions)
	if err != nil {
		return err
	}
	if captureMethods[msg.Method] {
		t.captures.add(msg.ID)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c.Write(ctx, websocket.MessageText, b)
}

func (t *wsTransport) Close() error { return t.c.CloseNow() }

// allocator gives chromedp the browser of one sandbox: it attaches to the
// running instance (it never starts one: the guest does).
type allocator struct {
	d       devtools
	refused atomic.Value // string: why a connection was closed (cdplimits.go)
	opts    []chromedp.BrowserOption
	wg      sync.WaitGroup
}

// Allocate connects to the browser. Cancelling ctx closes the connection
// (the browser and its tabs stay).
func (a *allocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	c, err := a.d.dialWS(ctx, a.d.wsPath)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		<-ctx.Done()
		cancel()
	}()
	return chromedp.NewBrowserTransport(wctx, &wsTransport{c: c, l: a.d.limits, refused: &a.refused}, append(append([]chromedp.BrowserOption{}, a.opts...), opts...)...)
}

// refusedWhy is why the browser's connection was closed for breaking a
// DevTools bound ("" if it was not).
func (a *allocator) refusedWhy() string {
	s, _ := a.refused.Load().(string)
	return s
}

func (a *allocator) Wait()          { a.wg.Wait() }
func (a *allocator) Attaches() bool { return true }
