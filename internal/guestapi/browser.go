package guestapi

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// The sandbox's browser (docs/browser.md): the guest starts Chromium with
// the arguments the host chose, keeps it running (a crash restarts it) and
// relays TCP connections to its DevTools port on the sandbox's loopback.
// The DevTools stream is the sandbox's, and so untrusted: the host bounds
// what it reads from it. The DevTools route is the protocol's one answer
// that is not frames: after its 101 the connection is the relayed TCP
// connection itself.

// DevToolsProtocol is the Upgrade token of a DevTools connection: after the
// 101 answer the connection carries the bytes of a TCP connection to the
// browser's DevTools port.
const DevToolsProtocol = "paddock-devtools/1"

// Browser states.
const (
	BrowserStopped  = "stopped"
	BrowserStarting = "starting" // launched, DevTools not listening yet
	BrowserRunning  = "running"
	BrowserFailed   = "failed" // crashed too often, or could not start
)

// Bounds of a start request.
const (
	MaxBrowserArgs      = 128
	MaxBrowserArgBytes  = 64 << 10
	MaxBrowserPrefBytes = 256 << 10
	MaxBrowserStart     = 2 * time.Minute
)

// BrowserStartRequest is the body of POST /v1/browser/start. Start is
// idempotent: a running browser is left as it is (and reported).
type BrowserStartRequest struct {
	Path string            `json:"path"` // the browser binary inside the sandbox
	Args []string          `json:"args"` // without the binary; must include the profile and DevTools flags
	Env  map[string]string `json:"env,omitempty"`
	User string            `json:"user,omitempty"` // root or user (default)
	// ProfileDir is where the browser writes DevToolsActivePort (its
	// --user-data-dir); DownloadDir is created for it.
	ProfileDir  string `json:"profile_dir"`
	DownloadDir string `json:"download_dir,omitempty"`
	// Preferences is written to ProfileDir/Default/Preferences when the
	// profile has none yet (the download directory, no prompts).
	Preferences string `json:"preferences,omitempty"`
	// SmallShmArg is added to Args when /dev/shm is smaller than
	// ShmMinBytes (e.g. --disable-dev-shm-usage).
	SmallShmArg string `json:"small_shm_arg,omitempty"`
	ShmMinBytes int64  `json:"shm_min_bytes,omitempty"`
	// TimeoutMs bounds the wait for DevTools (0: 30 s).
	TimeoutMs int64 `json:"timeout_ms,omitempty"`
}

// BrowserInfo describes the sandbox's browser.
type BrowserInfo struct {
	State     string    `json:"state"`
	Pid       int       `json:"pid,omitempty"`
	Port      int       `json:"port,omitempty"`      // DevTools port on the sandbox's loopback
	WSPath    string    `json:"ws_path,omitempty"`   // /devtools/browser/<id>
	StartedAt time.Time `json:"started_at,omitzero"` // of the running instance
	// Instance counts launches (it changes at every restart); Restarts
	// counts the relaunches after a crash.
	Instance int     `json:"instance,omitempty"`
	Restarts int     `json:"restarts"`
	LastExit string  `json:"last_exit,omitempty"` // how the previous instance ended
	OOMKills int     `json:"oom_kills,omitempty"` // instances ended by the OOM killer
	Error    string  `json:"error,omitempty"`     // why it failed
	LogTail  string  `json:"log_tail,omitempty"`  // its last output, when it failed
	StartMs  float64 `json:"start_ms,omitempty"`  // launch to DevTools listening
	ShmSmall bool    `json:"shm_small,omitempty"` // SmallShmArg was added
}

// ParseDevToolsActivePort reads the file Chromium writes into its profile
// once DevTools listens: the port on the first line, the browser's
// WebSocket path on the second. The file is in the sandbox's files, so it
// is checked strictly.
func ParseDevToolsActivePort(b []byte) (port int, wsPath string, err error) {
	if len(b) > 4096 {
		return 0, "", errs.Invalid("DevToolsActivePort is too large")
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) != 2 {
		return 0, "", errs.Invalid("DevToolsActivePort: want 2 lines, got %d", len(lines))
	}
	p, perr := strconv.Atoi(strings.TrimSpace(lines[0]))
	if perr != nil || p < 1 || p > 65535 {
		return 0, "", errs.Invalid("DevToolsActivePort: bad port")
	}
	path := strings.TrimSpace(lines[1])
	id, ok := strings.CutPrefix(path, "/devtools/browser/")
	if !ok || !validDevToolsID(id) {
		return 0, "", errs.Invalid("DevToolsActivePort: bad browser path")
	}
	return p, path, nil
}

// validDevToolsID accepts what Chromium uses for browser and target ids:
// UUIDs and upper-case hex, at most 64 characters.
func validDevToolsID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

// ValidDevToolsID reports whether s looks like a DevTools target or browser
// id (hex digits and dashes, at most 64).
func ValidDevToolsID(s string) bool { return validDevToolsID(s) }

// StartBrowser starts the sandbox's browser (or reports the running one)
// and waits until its DevTools listen.
func (c *Client) StartBrowser(ctx context.Context, req BrowserStartRequest) (BrowserInfo, error) {
	return ask[BrowserInfo](ctx, c, RouteBrowserStart, req, maxAnswerHead)
}

// Browser reports the state of the sandbox's browser.
func (c *Client) Browser(ctx context.Context) (BrowserInfo, error) {
	return ask[BrowserInfo](ctx, c, RouteBrowserStatus, nil, maxAnswerHead)
}

// StopBrowser stops the sandbox's browser (and its restarts).
func (c *Client) StopBrowser(ctx context.Context) (BrowserInfo, error) {
	return ask[BrowserInfo](ctx, c, RouteBrowserStop, nil, maxAnswerHead)
}

// DialBrowser opens a TCP connection to the DevTools port of the sandbox's
// browser instance (instance 0: whichever runs), relayed by the guest. The
// connection is a plain stream: HTTP and WebSockets to Chromium go over it.
func (c *Client) DialBrowser(ctx context.Context, instance int) (net.Conn, error) {
	conn, br, err := c.dialUpgrade(ctx, RouteBrowserDevTools, DevToolsProtocol, DevToolsRequest{Instance: instance})
	if err != nil {
		return nil, err
	}
	return &bufConn{Conn: conn, r: br}, nil
}

// bufConn is a connection whose first bytes may already sit in a reader.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) {
	if c.r != nil {
		if c.r.Buffered() > 0 {
			return c.r.Read(p)
		}
		c.r = nil
	}
	return c.Conn.Read(p)
}

// CloseWrite half-closes the stream (a relay passes on the end of input).
func (c *bufConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
