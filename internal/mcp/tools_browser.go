package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	bw "github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// The browser tools (docs/browser.md): the sandbox's headless Chromium,
// driven by an agent.

// Browser is what the browser tools act on: the browser service of this
// process (its Caller view) or a Paddock server's (*client.Client), with
// the same methods and signatures.
type Browser interface {
	BrowserNavigate(ctx context.Context, id string, req bw.NavigateRequest) (bw.Page, error)
	BrowserClick(ctx context.Context, id string, req bw.ClickRequest) (bw.Page, error)
	BrowserType(ctx context.Context, id string, req bw.TypeRequest) (bw.Page, error)
	BrowserPress(ctx context.Context, id string, req bw.PressRequest) (bw.Page, error)
	BrowserScroll(ctx context.Context, id string, req bw.ScrollRequest) (bw.ScrollResult, error)
	BrowserText(ctx context.Context, id string, req bw.TextRequest) (bw.TextResult, error)
	BrowserSnapshot(ctx context.Context, id string, req bw.SnapshotRequest) (bw.SnapshotResult, error)
	BrowserEval(ctx context.Context, id string, req bw.EvalRequest) (bw.EvalResult, error)
	BrowserScreenshot(ctx context.Context, id string, req bw.ScreenshotRequest) (bw.Screenshot, error)
	BrowserTabs(ctx context.Context, id string) (bw.Tabs, error)
	BrowserOpenTab(ctx context.Context, id string, req bw.OpenTabRequest) (bw.Tab, error)
	BrowserSwitchTab(ctx context.Context, id, tab string) (bw.Tab, error)
	BrowserCloseTab(ctx context.Context, id, tab string) (bw.Tabs, error)
}

// The MCP tools' inputs and outputs.

// sandboxIn is the sandbox a browser tool acts on (first in every input).
type sandboxIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
}

// sandboxOut names the sandbox acted on (first in every output).
type sandboxOut struct {
	Sandbox string `json:"sandbox"`
}

func (o *sandboxOut) setSandbox(id string) { o.Sandbox = id }

// onSandbox runs fn on the call's sandbox (Call.On) with the output to
// fill, then names the sandbox in that output: the frame of every browser
// tool, written once.
func onSandbox[O any, P interface {
	*O
	setSandbox(string)
}](c *Call, in sandboxIn, fn func(id string, out P) error) (O, error) {
	var out O
	id, err := c.On(in.Sandbox, func(id string) error { return fn(id, &out) })
	P(&out).setSandbox(id)
	return out, err
}

type targetIn struct {
	Selector string `json:"selector,omitempty" jsonschema:"A CSS selector (e.g. \"#email\", \"button.primary\"), or text=Visible text, or ref=e12. Give one of selector, text and ref."`
	Text     string `json:"text,omitempty" jsonschema:"Visible text of the element (a button's label, a link's text), matched case-insensitively; exact matches and clickable elements win."`
	Ref      string `json:"ref,omitempty" jsonschema:"A reference from browser_snapshot, e.g. \"e12\" (valid until the page navigates)."`
}

func (t targetIn) target() bw.Target {
	return bw.Target{Selector: t.Selector, Text: t.Text, Ref: t.Ref}
}

type navigateIn struct {
	sandboxIn
	URL       string  `json:"url" jsonschema:"The URL to open (http, https; file:// for the sandbox's files)."`
	WaitUntil string  `json:"wait_until,omitempty" jsonschema:"load (default), domcontentloaded or none."`
	Tab       string  `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
	TimeoutS  float64 `json:"timeout_s,omitempty" jsonschema:"Give up after this many seconds (default 30)."`
}

type pageOut struct {
	sandboxOut
	bw.Page
}

type clickIn struct {
	sandboxIn
	targetIn
	Button     string  `json:"button,omitempty" jsonschema:"left (default), right or middle."`
	ClickCount int     `json:"click_count,omitempty" jsonschema:"2 for a double click."`
	Tab        string  `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
	TimeoutS   float64 `json:"timeout_s,omitempty" jsonschema:"How long to wait for the element to be clickable (default 15)."`
}

type typeIn struct {
	sandboxIn
	targetIn
	Value    string  `json:"value" jsonschema:"The text to type."`
	Clear    bool    `json:"clear,omitempty" jsonschema:"Replace what the field holds (default: append)."`
	Submit   bool    `json:"submit,omitempty" jsonschema:"Press Enter afterwards (submits most forms)."`
	Tab      string  `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
	TimeoutS float64 `json:"timeout_s,omitempty" jsonschema:"How long to wait for the field (default 15)."`
}

type pressIn struct {
	sandboxIn
	Key string `json:"key" jsonschema:"Enter, Tab, Escape, Backspace, ArrowDown, PageDown, a character, or a combination such as Control+A or Shift+Tab."`
	targetIn
	Tab string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type scrollIn struct {
	sandboxIn
	targetIn
	Direction string `json:"direction,omitempty" jsonschema:"down (default), up, left or right; ignored when an element is named (it is scrolled into view)."`
	Amount    int    `json:"amount,omitempty" jsonschema:"Pixels (default: most of a screen)."`
	Tab       string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type scrollOut struct {
	sandboxOut
	bw.ScrollResult
}

type textIn struct {
	sandboxIn
	Format   string `json:"format,omitempty" jsonschema:"markdown (default: the readable content with links, headings, lists, tables) or text (all visible text)."`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"Most bytes to return (default 262144)."`
	Tab      string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type textOut struct {
	sandboxOut
	bw.TextResult
}

type snapshotIn struct {
	sandboxIn
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"Most bytes to return (default 131072)."`
	Tab      string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type snapshotOut struct {
	sandboxOut
	bw.SnapshotResult
}

type evalIn struct {
	sandboxIn
	Expression string  `json:"expression" jsonschema:"JavaScript evaluated in the page; its value is returned as JSON (promises are awaited; top-level await works)."`
	Tab        string  `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
	TimeoutS   float64 `json:"timeout_s,omitempty" jsonschema:"Stop the script after this many seconds (default 15)."`
}

type evalOut struct {
	sandboxOut
	Tab       string `json:"tab"`
	Type      string `json:"type" jsonschema:"JavaScript type of the value (string, number, object, undefined...)."`
	Value     any    `json:"value" jsonschema:"The value, as JSON."`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"The value was over 1 MiB and is cut (as a string)."`
}

type screenshotIn struct {
	sandboxIn
	FullPage bool   `json:"full_page,omitempty" jsonschema:"The whole page, not just the visible part."`
	Path     string `json:"path,omitempty" jsonschema:"Where to save the PNG in the sandbox (default /workspace/screenshots/screenshot-N.png)."`
	Tab      string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type screenshotOut struct {
	sandboxOut
	Path   string `json:"path" jsonschema:"The PNG, in the sandbox's files."`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Bytes  int    `json:"bytes"`
	URL    string `json:"url"`
	Tab    string `json:"tab"`
}

type tabsIn struct {
	sandboxIn
}

type tabsOut struct {
	sandboxOut
	Tabs []bw.Tab `json:"tabs"`
}

type tabOpenIn struct {
	sandboxIn
	URL string `json:"url,omitempty" jsonschema:"URL to load in the new tab (default about:blank)."`
}

type tabRefIn struct {
	sandboxIn
	Tab string `json:"tab" jsonschema:"The tab's id (from browser_tab_list) or its index in the list."`
}

type tabOut struct {
	sandboxOut
	bw.Tab
}

// millis reads an optional timeout in seconds as milliseconds (0: the
// action's default).
func millis(s float64) int64 {
	if s <= 0 {
		return 0
	}
	return int64(s * 1000)
}

// browserTools registers the browser tools over br.
func browserTools(tb *Toolbox, br Browser) {
	// page is the frame of the tools whose result is the page they left.
	page := func(c *Call, in sandboxIn, fn func(id string) (bw.Page, error)) (pageOut, error) {
		return onSandbox(c, in, func(id string, out *pageOut) (err error) {
			out.Page, err = fn(id)
			return err
		})
	}
	Add(tb, Tool{Name: "browser_navigate", Need: rights.Of(rights.Exec), Title: "Open a URL in the browser",
		Description: "Open a URL in the sandbox's headless Chromium (started on first use) and wait for it to load. " +
			"The browser obeys the sandbox's network policy: a refused destination fails saying so. " +
			"Then read the page with browser_snapshot or browser_text, and act with browser_click, browser_type, browser_press."},
		func(c *Call, in navigateIn) (pageOut, error) {
			return page(c, in.sandboxIn, func(id string) (bw.Page, error) {
				return br.BrowserNavigate(c.Context(), id, bw.NavigateRequest{URL: in.URL, WaitUntil: in.WaitUntil, Tab: in.Tab,
					TimeoutMs: millis(in.TimeoutS)})
			})
		})
	Add(tb, Tool{Name: "browser_click", Need: rights.Of(rights.Exec), Title: "Click an element",
		Description: "Click an element of the page, named by ref (from browser_snapshot, best), visible text, or CSS selector. " +
			"Waits until it is visible, enabled and not covered; if the click starts a navigation, waits for the new page."},
		func(c *Call, in clickIn) (pageOut, error) {
			return page(c, in.sandboxIn, func(id string) (bw.Page, error) {
				return br.BrowserClick(c.Context(), id, bw.ClickRequest{Target: in.target(), Button: in.Button, ClickCount: in.ClickCount,
					Tab: in.Tab, TimeoutMs: millis(in.TimeoutS)})
			})
		})
	Add(tb, Tool{Name: "browser_type", Need: rights.Of(rights.Exec), Title: "Type into a field",
		Description: "Type text into an input, textarea or editable element (named by ref, text or selector); " +
			"clear replaces its content, submit presses Enter afterwards."},
		func(c *Call, in typeIn) (pageOut, error) {
			return page(c, in.sandboxIn, func(id string) (bw.Page, error) {
				return br.BrowserType(c.Context(), id, bw.TypeRequest{Target: in.target(), Text: in.Value, Clear: in.Clear, Submit: in.Submit,
					Tab: in.Tab, TimeoutMs: millis(in.TimeoutS)})
			})
		})
	Add(tb, Tool{Name: "browser_press", Need: rights.Of(rights.Exec), Title: "Press a key",
		Description: "Press a key or a combination (Enter, Escape, Tab, ArrowDown, Control+A...) in the page, on an element if one is named."},
		func(c *Call, in pressIn) (pageOut, error) {
			return page(c, in.sandboxIn, func(id string) (bw.Page, error) {
				return br.BrowserPress(c.Context(), id, bw.PressRequest{Target: in.target(), Key: in.Key, Tab: in.Tab})
			})
		})
	Add(tb, Tool{Name: "browser_scroll", Need: rights.Of(rights.Exec), Title: "Scroll the page",
		Description: "Scroll the page (down by default, about a screen) or scroll an element into view; says whether the end was reached."},
		func(c *Call, in scrollIn) (scrollOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *scrollOut) (err error) {
				out.ScrollResult, err = br.BrowserScroll(c.Context(), id, bw.ScrollRequest{Target: in.target(), Direction: in.Direction,
					Amount: in.Amount, Tab: in.Tab})
				return err
			})
		})
	Add(tb, Tool{Name: "browser_text", Need: rights.Of(rights.Read), Title: "Read the page", ReadOnly: true,
		Description: "The page's content: readable Markdown (default: main content, headings, links, lists, tables) or all visible text."},
		func(c *Call, in textIn) (textOut, error) {
			format := in.Format
			if format == "" {
				format = bw.FormatMarkdown
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *textOut) (err error) {
				out.TextResult, err = br.BrowserText(c.Context(), id, bw.TextRequest{Format: format, MaxBytes: in.MaxBytes, Tab: in.Tab})
				return err
			})
		})
	Add(tb, Tool{Name: "browser_snapshot", Need: rights.Of(rights.Read), Title: "Accessibility snapshot", ReadOnly: true,
		Description: "The page's accessibility tree, one element a line (role, name, state), each with a ref " +
			"(\"[ref=e7]\") to pass to browser_click, browser_type, browser_press or browser_scroll. Take a new one after the page changes."},
		func(c *Call, in snapshotIn) (snapshotOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *snapshotOut) (err error) {
				out.SnapshotResult, err = br.BrowserSnapshot(c.Context(), id, bw.SnapshotRequest{MaxBytes: in.MaxBytes, Tab: in.Tab})
				return err
			})
		})
	Add(tb, Tool{Name: "browser_eval", Need: rights.Of(rights.Exec), Title: "Run JavaScript in the page",
		Description: "Evaluate JavaScript in the page and return its value as JSON (promises are awaited)."},
		func(c *Call, in evalIn) (evalOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *evalOut) error {
				res, err := br.BrowserEval(c.Context(), id, bw.EvalRequest{Expression: in.Expression, Tab: in.Tab,
					TimeoutMs: millis(in.TimeoutS)})
				if err != nil {
					return err
				}
				out.Tab, out.Type, out.Truncated = res.Tab, res.Type, res.Truncated
				if len(res.Value) > 0 && json.Unmarshal(res.Value, &out.Value) != nil {
					out.Value = string(res.Value)
				}
				return nil
			})
		})
	Add(tb, Tool{Name: "browser_screenshot", Need: rights.Of(rights.Read, rights.Write), Title: "Screenshot the page", Additive: true,
		Description: "Take a PNG screenshot of the page (the viewport, or the full page) and save it in the sandbox's files; " +
			"returns its path and size."},
		func(c *Call, in screenshotIn) (screenshotOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *screenshotOut) error {
				shot, err := br.BrowserScreenshot(c.Context(), id, bw.ScreenshotRequest{FullPage: in.FullPage, Tab: in.Tab})
				if err != nil {
					return err
				}
				path := in.Path
				if path == "" {
					path = "/workspace/screenshots/screenshot-" + strconv.FormatInt(time.Now().UnixMilli(), 10) + ".png"
				}
				fi, err := c.Backend().WriteFile(c.Context(), id, wire.WriteRequest{Path: path, Parents: true},
					bytes.NewReader(shot.PNG), int64(len(shot.PNG)))
				if err != nil {
					return err
				}
				*out = screenshotOut{Path: fi.Path, Width: shot.Width, Height: shot.Height, Bytes: len(shot.PNG), URL: shot.URL, Tab: shot.Tab}
				if out.Path == "" {
					out.Path = path
				}
				return nil
			})
		})
	Add(tb, Tool{Name: "browser_tab_list", Need: rights.Of(rights.Read), Title: "List the browser's tabs", ReadOnly: true,
		Description: "The browser's tabs (id, URL, title); the current one is where actions go when they name no tab."},
		func(c *Call, in tabsIn) (tabsOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *tabsOut) error {
				t, err := br.BrowserTabs(c.Context(), id)
				out.Tabs = t.Tabs
				return err
			})
		})
	Add(tb, Tool{Name: "browser_tab_open", Need: rights.Of(rights.Exec), Title: "Open a tab", Additive: true,
		Description: "Open a new tab (it becomes the current one), optionally loading a URL."},
		func(c *Call, in tabOpenIn) (tabOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *tabOut) (err error) {
				out.Tab, err = br.BrowserOpenTab(c.Context(), id, bw.OpenTabRequest{URL: in.URL})
				return err
			})
		})
	Add(tb, Tool{Name: "browser_tab_switch", Need: rights.Of(rights.Exec), Title: "Switch tabs", Idempotent: true,
		Description: "Make a tab the current one (actions that name no tab go there)."},
		func(c *Call, in tabRefIn) (tabOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *tabOut) (err error) {
				out.Tab, err = br.BrowserSwitchTab(c.Context(), id, in.Tab)
				return err
			})
		})
	Add(tb, Tool{Name: "browser_tab_close", Need: rights.Of(rights.Exec), Title: "Close a tab",
		Description: "Close a tab; returns the tabs left."},
		func(c *Call, in tabRefIn) (tabsOut, error) {
			return onSandbox(c, in.sandboxIn, func(id string, out *tabsOut) error {
				t, err := br.BrowserCloseTab(c.Context(), id, in.Tab)
				out.Tabs = t.Tabs
				return err
			})
		})
}
