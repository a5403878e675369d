// Package wire holds the types of the browser API (docs/browser.md) that
// the server, the Go client and the MCP tools share: requests and answers
// of the high-level actions under /v1/sandboxes/{id}/browser.
package wire

import (
	"encoding/json"
	"time"
)

// Status is the browser of a sandbox.
type Status struct {
	// State is stopped, starting, running or failed.
	State     string    `json:"state"`
	Pid       int       `json:"pid,omitempty"` // in the sandbox
	StartedAt time.Time `json:"started_at,omitzero"`
	// Restarts counts relaunches after crashes; LastExit says how the
	// previous instance ended; OOMKills counts instances the sandbox's
	// memory limit ended.
	Restarts int     `json:"restarts"`
	LastExit string  `json:"last_exit,omitempty"`
	OOMKills int     `json:"oom_kills,omitempty"`
	Error    string  `json:"error,omitempty"`
	StartMs  float64 `json:"start_ms,omitempty"` // launch to DevTools listening
	// Connected: the server holds a DevTools session with it.
	Connected bool  `json:"connected"`
	Tabs      []Tab `json:"tabs,omitempty"`
}

// Tab is one page of the browser.
type Tab struct {
	ID      string `json:"id"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	Current bool   `json:"current,omitempty"` // the tab actions use when they name none
}

// Target names the element an action works on: exactly one of Selector (a
// CSS selector, or "text=Visible text", "ref=e12" from a snapshot,
// "css=..."), Text (visible text) and Ref.
type Target struct {
	Selector string `json:"selector,omitempty"`
	Text     string `json:"text,omitempty"`
	Ref      string `json:"ref,omitempty"`
}

// Common fields: Tab names a tab by id or by its index in the tab list
// ("" is the current tab); TimeoutMs bounds the action (0: the server's
// default), waiting for the element included.

// NavigateRequest loads a URL.
type NavigateRequest struct {
	URL string `json:"url"`
	// WaitUntil is "load" (default), "domcontentloaded" or "none".
	WaitUntil string `json:"wait_until,omitempty"`
	Tab       string `json:"tab,omitempty"`
	TimeoutMs int64  `json:"timeout_ms,omitempty"`
}

// Page is the state of a tab after an action.
type Page struct {
	Tab        string  `json:"tab"`
	URL        string  `json:"url"`
	Title      string  `json:"title"`
	Status     int     `json:"status,omitempty"` // HTTP status of the document a navigation loaded
	DurationMs float64 `json:"duration_ms"`
	// Downloads are the downloads that began during the action.
	Downloads []Download `json:"downloads,omitempty"`
	// NewTabs are tabs the page opened during the action.
	NewTabs []Tab `json:"new_tabs,omitempty"`
}

// ClickRequest clicks an element (scrolled into view, once it is visible,
// enabled and not covered).
type ClickRequest struct {
	Target
	Button     string `json:"button,omitempty"` // left (default), right, middle
	ClickCount int    `json:"click_count,omitempty"`
	Tab        string `json:"tab,omitempty"`
	TimeoutMs  int64  `json:"timeout_ms,omitempty"`
}

// TypeRequest types text into an element (focused first).
type TypeRequest struct {
	Target
	Text      string `json:"text"`
	Clear     bool   `json:"clear,omitempty"`  // replace what the field holds
	Submit    bool   `json:"submit,omitempty"` // press Enter afterwards
	Tab       string `json:"tab,omitempty"`
	TimeoutMs int64  `json:"timeout_ms,omitempty"`
}

// PressRequest presses a key or a combination ("Enter", "Control+A",
// "Shift+Tab", "ArrowDown", "a"), on an element if one is named.
type PressRequest struct {
	Target
	Key       string `json:"key"`
	Tab       string `json:"tab,omitempty"`
	TimeoutMs int64  `json:"timeout_ms,omitempty"`
}

// ScrollRequest scrolls an element into view (if one is named) or the page.
type ScrollRequest struct {
	Target
	Direction string `json:"direction,omitempty"` // down (default), up, left, right
	Amount    int    `json:"amount,omitempty"`    // pixels; default 80% of the viewport
	Tab       string `json:"tab,omitempty"`
	TimeoutMs int64  `json:"timeout_ms,omitempty"`
}

// ScrollResult is where the page is scrolled to.
type ScrollResult struct {
	Page
	X         float64 `json:"x"`
	Y         float64 `json:"y"`
	MaxX      float64 `json:"max_x"`
	MaxY      float64 `json:"max_y"`
	AtEnd     bool    `json:"at_end"` // nothing more in that direction
	ScrolledX float64 `json:"scrolled_x"`
	ScrolledY float64 `json:"scrolled_y"`
}

// Text formats.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
)

// TextRequest reads a page's text, or its readable content as Markdown.
type TextRequest struct {
	Format   string `json:"format,omitempty"` // text (default) or markdown
	MaxBytes int    `json:"max_bytes,omitempty"`
	Tab      string `json:"tab,omitempty"`
}

// TextResult is a page's text.
type TextResult struct {
	Tab       string `json:"tab"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	Format    string `json:"format"`
	Text      string `json:"text"`
	Bytes     int    `json:"bytes"` // before truncation
	Truncated bool   `json:"truncated,omitempty"`
}

// SnapshotRequest asks for the accessibility snapshot of a page.
type SnapshotRequest struct {
	MaxBytes int    `json:"max_bytes,omitempty"`
	Tab      string `json:"tab,omitempty"`
}

// SnapshotResult is the page's accessibility tree as indented text: one
// line per node, with its role, name, state and a reference ("[ref=e7]")
// that actions accept until the page navigates.
type SnapshotResult struct {
	Tab       string `json:"tab"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	Snapshot  string `json:"snapshot"`
	Refs      int    `json:"refs"`
	Truncated bool   `json:"truncated,omitempty"`
}

// EvalRequest evaluates JavaScript in the page (a promise is awaited).
type EvalRequest struct {
	Expression string `json:"expression"`
	Tab        string `json:"tab,omitempty"`
	TimeoutMs  int64  `json:"timeout_ms,omitempty"`
}

// EvalResult is the value, as JSON (undefined is null with type
// "undefined"; functions, DOM nodes and the like are their descriptions).
type EvalResult struct {
	Tab       string          `json:"tab"`
	Type      string          `json:"type"`
	Value     json.RawMessage `json:"value"`
	Truncated bool            `json:"truncated,omitempty"`
}

// ScreenshotRequest takes a PNG of the viewport or the whole page.
type ScreenshotRequest struct {
	FullPage bool   `json:"full_page,omitempty"`
	Tab      string `json:"tab,omitempty"`
}

// Screenshot is a PNG.
type Screenshot struct {
	Tab    string `json:"tab"`
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	PNG    []byte `json:"-"`
}

// OpenTabRequest opens a tab (it becomes the current one).
type OpenTabRequest struct {
	URL       string `json:"url,omitempty"` // default about:blank
	TimeoutMs int64  `json:"timeout_ms,omitempty"`
}

// Tabs is the tab list.
type Tabs struct {
	Tabs []Tab `json:"tabs"`
}

// Download is a file the browser downloaded (into the sandbox).
type Download struct {
	URL        string  `json:"url"`
	Filename   string  `json:"filename"` // suggested by the server
	Path       string  `json:"path,omitempty"`
	State      string  `json:"state"` // inProgress, completed, canceled
	Bytes      float64 `json:"bytes"`
	TotalBytes float64 `json:"total_bytes,omitempty"`
}

// Downloads lists the downloads the server saw, newest last.
type Downloads struct {
	Dir       string     `json:"dir"`
	Downloads []Download `json:"downloads"`
}
