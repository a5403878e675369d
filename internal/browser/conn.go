package browser

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Bounds on what the browser (the sandbox's, so untrusted) may send.
const (
	// maxCDPMessage bounds one DevTools message the server reads: a
	// full-page screenshot (capped at maxFullPageHeight) fits, base64 and
	// all.
	maxCDPMessage = 96 << 20
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
}

func newDevtools(m Sandboxes, sc sandbox.Scope, id string, need rights.Right, info sandbox.BrowserState) devtools {
	return devtools{m: m, sc: sc, id: id, need: need, instance: info.Instance, port: info.Port, wsPath: info.WSPath}
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
	c.SetReadLimit(maxCDPMessage)
	return c, nil
}

// wsTransport is chromedp's Transport over a DevTools WebSocket.
type wsTransport struct {
	c  *websocket.Conn
	mu sync.Mutex // one writer at a time
}

// Read reads the next message. The context chromedp passes lives as long
// as the browser connection, so reading does not tie up a timer.
func (t *wsTransport) Read(ctx context.Context, msg *cdproto.Message) error {
	typ, data, err := t.c.Read(ctx)
	if err != nil {
		return err
	}
	if typ != websocket.MessageText {
		return fmt.Errorf("DevTools sent a binary message")
	}
	return jsonv2.Unmarshal(data, msg, chromedp.DefaultUnmarshalOptions)
}

// Write sends one message as one text frame (Chromium does not accept
// fragmented messages).
func (t *wsTransport) Write(ctx context.Context, msg *cdproto.Message) error {
	b, err := jsonv2.Marshal(msg, chromedp.DefaultMarshalOptions)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c.Write(ctx, websocket.MessageText, b)
}

func (t *wsTransport) Close() error { return t.c.CloseNow() }

// allocator gives chromedp the browser of one sandbox: it attaches to the
// running instance (it never starts one: the guest does).
type allocator struct {
	d    devtools
	opts []chromedp.BrowserOption
	wg   sync.WaitGroup
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
	return chromedp.NewBrowserTransport(wctx, &wsTransport{c: c}, append(append([]chromedp.BrowserOption{}, a.opts...), opts...)...)
}

func (a *allocator) Wait()          { a.wg.Wait() }
func (a *allocator) Attaches() bool { return true }
