package browser

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Actions are the browser actions the MCP tools call: the Service in this
// process (ServiceActions), or a Paddock server through its REST API
// (ClientActions).
type Actions interface {
	Navigate(ctx context.Context, id string, req wire.NavigateRequest) (wire.Page, error)
	Click(ctx context.Context, id string, req wire.ClickRequest) (wire.Page, error)
	Type(ctx context.Context, id string, req wire.TypeRequest) (wire.Page, error)
	Press(ctx context.Context, id string, req wire.PressRequest) (wire.Page, error)
	Scroll(ctx context.Context, id string, req wire.ScrollRequest) (wire.ScrollResult, error)
	Text(ctx context.Context, id string, req wire.TextRequest) (wire.TextResult, error)
	Snapshot(ctx context.Context, id string, req wire.SnapshotRequest) (wire.SnapshotResult, error)
	Eval(ctx context.Context, id string, req wire.EvalRequest) (wire.EvalResult, error)
	Screenshot(ctx context.Context, id string, req wire.ScreenshotRequest) (wire.Screenshot, error)
	Tabs(ctx context.Context, id string) (wire.Tabs, error)
	OpenTab(ctx context.Context, id string, req wire.OpenTabRequest) (wire.Tab, error)
	SwitchTab(ctx context.Context, id, tab string) (wire.Tab, error)
	CloseTab(ctx context.Context, id, tab string) (wire.Tabs, error)
}

// ServiceActions runs the actions on s as the caller in each call's
// context (gate.Scope); the service checks what it may do.
func ServiceActions(s *Service) Actions { return serviceActions{s} }

type serviceActions struct{ s *Service }

// scoped runs fn as the caller of the tool call (the service checks what
// it may do).
func scoped[T any](ctx context.Context, fn func(sandbox.Scope) (T, error)) (T, error) {
	return fn(gate.Scope(ctx))
}

func (a serviceActions) Navigate(ctx context.Context, id string, req wire.NavigateRequest) (wire.Page, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Page, error) { return a.s.Navigate(ctx, sc, id, req) })
}
func (a serviceActions) Click(ctx context.Context, id string, req wire.ClickRequest) (wire.Page, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Page, error) { return a.s.Click(ctx, sc, id, req) })
}
func (a serviceActions) Type(ctx context.Context, id string, req wire.TypeRequest) (wire.Page, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Page, error) { return a.s.Type(ctx, sc, id, req) })
}
func (a serviceActions) Press(ctx context.Context, id string, req wire.PressRequest) (wire.Page, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Page, error) { return a.s.Press(ctx, sc, id, req) })
}
func (a serviceActions) Scroll(ctx context.Context, id string, req wire.ScrollRequest) (wire.ScrollResult, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.ScrollResult, error) { return a.s.Scroll(ctx, sc, id, req) })
}
func (a serviceActions) Text(ctx context.Context, id string, req wire.TextRequest) (wire.TextResult, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.TextResult, error) { return a.s.Text(ctx, sc, id, req) })
}
func (a serviceActions) Snapshot(ctx context.Context, id string, req wire.SnapshotRequest) (wire.SnapshotResult, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.SnapshotResult, error) { return a.s.Snapshot(ctx, sc, id, req) })
}
func (a serviceActions) Eval(ctx context.Context, id string, req wire.EvalRequest) (wire.EvalResult, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.EvalResult, error) { return a.s.Eval(ctx, sc, id, req) })
}
func (a serviceActions) Screenshot(ctx context.Context, id string, req wire.ScreenshotRequest) (wire.Screenshot, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Screenshot, error) { return a.s.Screenshot(ctx, sc, id, req) })
}
func (a serviceActions) Tabs(ctx context.Context, id string) (wire.Tabs, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Tabs, error) { return a.s.Tabs(ctx, sc, id) })
}
func (a serviceActions) OpenTab(ctx context.Context, id string, req wire.OpenTabRequest) (wire.Tab, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Tab, error) { return a.s.OpenTab(ctx, sc, id, req) })
}
func (a serviceActions) SwitchTab(ctx context.Context, id, tab string) (wire.Tab, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Tab, error) { return a.s.SwitchTab(ctx, sc, id, tab) })
}
func (a serviceActions) CloseTab(ctx context.Context, id, tab string) (wire.Tabs, error) {
	return scoped(ctx, func(sc sandbox.Scope) (wire.Tabs, error) { return a.s.CloseTab(ctx, sc, id, tab) })
}

// The MCP tools' inputs and outputs.

type targetIn struct {
	Selector string `json:"selector,omitempty" jsonschema:"A CSS selector (e.g. \"#email\", \"button.primary\"), or text=Visible text, or ref=e12. Give one of selector, text and ref."`
	Text     string `json:"text,omitempty" jsonschema:"Visible text of the element (a button's label, a link's text), matched case-insensitively; exact matches and clickable elements win."`
	Ref      string `json:"ref,omitempty" jsonschema:"A reference from browser_snapshot, e.g. \"e12\" (valid until the page navigates)."`
}

func (t targetIn) wire() wire.Target {
	return wire.Target{Selector: t.Selector, Text: t.Text, Ref: t.Ref}
}

type navigateIn struct {
	Sandbox   string  `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	URL       string  `json:"url" jsonschema:"The URL to open (http, https; file:// for the sandbox's files)."`
	WaitUntil string  `json:"wait_until,omitempty" jsonschema:"load (default), domcontentloaded or none."`
	Tab       string  `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
	TimeoutS  float64 `json:"timeout_s,omitempty" jsonschema:"Give up after this many seconds (default 30)."`
}

type pageOut struct {
	Sandbox string `json:"sandbox"`
	wire.Page
}

type clickIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	targetIn
	Button     string  `json:"button,omitempty" jsonschema:"left (default), right or middle."`
	ClickCount int     `json:"click_count,omitempty" jsonschema:"2 for a double click."`
	Tab        string  `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
	TimeoutS   float64 `json:"timeout_s,omitempty" jsonschema:"How long to wait for the element to be clickable (default 15)."`
}

type typeIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	targetIn
	Value    string  `json:"value" jsonschema:"The text to type."`
	Clear    bool    `json:"clear,omitempty" jsonschema:"Replace what the field holds (default: append)."`
	Submit   bool    `json:"submit,omitempty" jsonschema:"Press Enter afterwards (submits most forms)."`
	Tab      string  `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
	TimeoutS float64 `json:"timeout_s,omitempty" jsonschema:"How long to wait for the field (default 15)."`
}

type pressIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	Key     string `json:"key" jsonschema:"Enter, Tab, Escape, Backspace, ArrowDown, PageDown, a character, or a combination such as Control+A or Shift+Tab."`
	targetIn
	Tab string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type scrollIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	targetIn
	Direction string `json:"direction,omitempty" jsonschema:"down (default), up, left or right; ignored when an element is named (it is scrolled into view)."`
	Amount    int    `json:"amount,omitempty" jsonschema:"Pixels (default: most of a screen)."`
	Tab       string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type scrollOut struct {
	Sandbox string `json:"sandbox"`
	wire.ScrollResult
}

type textIn struct {
	Sandbox  string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	Format   string `json:"format,omitempty" jsonschema:"markdown (default: the readable content with links, headings, lists, tables) or text (all visible text)."`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"Most bytes to return (default 262144)."`
	Tab      string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type textOut struct {
	Sandbox string `json:"sandbox"`
	wire.TextResult
}

type snapshotIn struct {
	Sandbox  string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"Most bytes to return (default 131072)."`
	Tab      string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type snapshotOut struct {
	Sandbox string `json:"sandbox"`
	wire.SnapshotResult
}

type evalIn struct {
	Sandbox    string  `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	Expression string  `json:"expression" jsonschema:"JavaScript evaluated in the page; its value is returned as JSON (promises are awaited; top-level await works)."`
	Tab        string  `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
	TimeoutS   float64 `json:"timeout_s,omitempty" jsonschema:"Stop the script after this many seconds (default 15)."`
}

type evalOut struct {
	Sandbox   string `json:"sandbox"`
	Tab       string `json:"tab"`
	Type      string `json:"type" jsonschema:"JavaScript type of the value (string, number, object, undefined...)."`
	Value     any    `json:"value" jsonschema:"The value, as JSON."`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"The value was over 1 MiB and is cut (as a string)."`
}

type screenshotIn struct {
	Sandbox  string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	FullPage bool   `json:"full_page,omitempty" jsonschema:"The whole page, not just the visible part."`
	Path     string `json:"path,omitempty" jsonschema:"Where to save the PNG in the sandbox (default /workspace/screenshots/screenshot-N.png)."`
	Tab      string `json:"tab,omitempty" jsonschema:"Tab id or index (default: the current tab)."`
}

type screenshotOut struct {
	Sandbox string `json:"sandbox"`
	Path    string `json:"path" jsonschema:"The PNG, in the sandbox's files."`
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	Bytes   int    `json:"bytes"`
	URL     string `json:"url"`
	Tab     string `json:"tab"`
}

type tabsIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
}

type tabsOut struct {
	Sandbox string     `json:"sandbox"`
	Tabs    []wire.Tab `json:"tabs"`
}

type tabOpenIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	URL     string `json:"url,omitempty" jsonschema:"URL to load in the new tab (default about:blank)."`
}

type tabRefIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	Tab     string `json:"tab" jsonschema:"The tab's id (from browser_tab_list) or its index in the list."`
}

type tabOut struct {
	Sandbox string `json:"sandbox"`
	wire.Tab
}

func seconds(s float64) int64 {
	if s <= 0 {
		return 0
	}
	return int64(s * 1000)
}

// MCPTools registers the browser tools (for mcp.Options.Groups).
func MCPTools(br Actions) mcp.Group {
	return func(tb *mcp.Toolbox) {
		// One helper per result shape, so each tool stays a few lines.
		page := func(c *mcp.Call, sandbox string, fn func(id string) (wire.Page, error)) (pageOut, error) {
			var out pageOut
			id, err := c.On(sandbox, func(id string) error {
				var err error
				out.Page, err = fn(id)
				return err
			})
			out.Sandbox = id
			return out, err
		}
		mcp.Add(tb, mcp.Tool{Name: "browser_navigate", Title: "Open a URL in the browser",
			Description: "Open a URL in the sandbox's headless Chromium (started on first use) and wait for it to load. " +
				"The browser obeys the sandbox's network policy: a refused destination fails saying so. " +
				"Then read the page with browser_snapshot or browser_text, and act with browser_click, browser_type, browser_press."},
			func(c *mcp.Call, in navigateIn) (pageOut, error) {
				return page(c, in.Sandbox, func(id string) (wire.Page, error) {
					return br.Navigate(c.Context(), id, wire.NavigateRequest{URL: in.URL, WaitUntil: in.WaitUntil, Tab: in.Tab,
						TimeoutMs: seconds(in.TimeoutS)})
				})
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_click", Title: "Click an element",
			Description: "Click an element of the page, named by ref (from browser_snapshot, best), visible text, or CSS selector. " +
				"Waits until it is visible, enabled and not covered; if the click starts a navigation, waits for the new page."},
			func(c *mcp.Call, in clickIn) (pageOut, error) {
				return page(c, in.Sandbox, func(id string) (wire.Page, error) {
					return br.Click(c.Context(), id, wire.ClickRequest{Target: in.wire(), Button: in.Button, ClickCount: in.ClickCount,
						Tab: in.Tab, TimeoutMs: seconds(in.TimeoutS)})
				})
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_type", Title: "Type into a field",
			Description: "Type text into an input, textarea or editable element (named by ref, text or selector); " +
				"clear replaces its content, submit presses Enter afterwards."},
			func(c *mcp.Call, in typeIn) (pageOut, error) {
				return page(c, in.Sandbox, func(id string) (wire.Page, error) {
					return br.Type(c.Context(), id, wire.TypeRequest{Target: in.wire(), Text: in.Value, Clear: in.Clear, Submit: in.Submit,
						Tab: in.Tab, TimeoutMs: seconds(in.TimeoutS)})
				})
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_press", Title: "Press a key",
			Description: "Press a key or a combination (Enter, Escape, Tab, ArrowDown, Control+A...) in the page, on an element if one is named."},
			func(c *mcp.Call, in pressIn) (pageOut, error) {
				return page(c, in.Sandbox, func(id string) (wire.Page, error) {
					return br.Press(c.Context(), id, wire.PressRequest{Target: in.wire(), Key: in.Key, Tab: in.Tab})
				})
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_scroll", Title: "Scroll the page",
			Description: "Scroll the page (down by default, about a screen) or scroll an element into view; says whether the end was reached."},
			func(c *mcp.Call, in scrollIn) (scrollOut, error) {
				var out scrollOut
				id, err := c.On(in.Sandbox, func(id string) error {
					var err error
					out.ScrollResult, err = br.Scroll(c.Context(), id, wire.ScrollRequest{Target: in.wire(), Direction: in.Direction,
						Amount: in.Amount, Tab: in.Tab})
					return err
				})
				out.Sandbox = id
				return out, err
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_text", Title: "Read the page", ReadOnly: true,
			Description: "The page's content: readable Markdown (default: main content, headings, links, lists, tables) or all visible text."},
			func(c *mcp.Call, in textIn) (textOut, error) {
				format := in.Format
				if format == "" {
					format = wire.FormatMarkdown
				}
				var out textOut
				id, err := c.On(in.Sandbox, func(id string) error {
					var err error
					out.TextResult, err = br.Text(c.Context(), id, wire.TextRequest{Format: format, MaxBytes: in.MaxBytes, Tab: in.Tab})
					return err
				})
				out.Sandbox = id
				return out, err
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_snapshot", Title: "Accessibility snapshot", ReadOnly: true,
			Description: "The page's accessibility tree, one element a line (role, name, state), each with a ref " +
				"(\"[ref=e7]\") to pass to browser_click, browser_type, browser_press or browser_scroll. Take a new one after the page changes."},
			func(c *mcp.Call, in snapshotIn) (snapshotOut, error) {
				var out snapshotOut
				id, err := c.On(in.Sandbox, func(id string) error {
					var err error
					out.SnapshotResult, err = br.Snapshot(c.Context(), id, wire.SnapshotRequest{MaxBytes: in.MaxBytes, Tab: in.Tab})
					return err
				})
				out.Sandbox = id
				return out, err
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_eval", Title: "Run JavaScript in the page",
			Description: "Evaluate JavaScript in the page and return its value as JSON (promises are awaited)."},
			func(c *mcp.Call, in evalIn) (evalOut, error) {
				var out evalOut
				id, err := c.On(in.Sandbox, func(id string) error {
					res, err := br.Eval(c.Context(), id, wire.EvalRequest{Expression: in.Expression, Tab: in.Tab,
						TimeoutMs: seconds(in.TimeoutS)})
					if err != nil {
						return err
					}
					out.Tab, out.Type, out.Truncated = res.Tab, res.Type, res.Truncated
					if len(res.Value) > 0 && json.Unmarshal(res.Value, &out.Value) != nil {
						out.Value = string(res.Value)
					}
					return nil
				})
				out.Sandbox = id
				return out, err
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_screenshot", Title: "Screenshot the page", Additive: true,
			Description: "Take a PNG screenshot of the page (the viewport, or the full page) and save it in the sandbox's files; " +
				"returns its path and size."},
			func(c *mcp.Call, in screenshotIn) (screenshotOut, error) {
				var out screenshotOut
				id, err := c.On(in.Sandbox, func(id string) error {
					shot, err := br.Screenshot(c.Context(), id, wire.ScreenshotRequest{FullPage: in.FullPage, Tab: in.Tab})
					if err != nil {
						return err
					}
					path := in.Path
					if path == "" {
						path = "/workspace/screenshots/screenshot-" + strconv.FormatInt(time.Now().UnixMilli(), 10) + ".png"
					}
					fi, err := c.Backend().WriteFile(c.Context(), id, sandbox.WriteRequest{Path: path, Parents: true}, shot.PNG)
					if err != nil {
						return err
					}
					out = screenshotOut{Path: fi.Path, Width: shot.Width, Height: shot.Height, Bytes: len(shot.PNG), URL: shot.URL, Tab: shot.Tab}
					if out.Path == "" {
						out.Path = path
					}
					return nil
				})
				out.Sandbox = id
				return out, err
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_tab_list", Title: "List the browser's tabs", ReadOnly: true,
			Description: "The browser's tabs (id, URL, title); the current one is where actions go when they name no tab."},
			func(c *mcp.Call, in tabsIn) (tabsOut, error) {
				var out tabsOut
				id, err := c.On(in.Sandbox, func(id string) error {
					t, err := br.Tabs(c.Context(), id)
					out.Tabs = t.Tabs
					return err
				})
				out.Sandbox = id
				return out, err
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_tab_open", Title: "Open a tab", Additive: true,
			Description: "Open a new tab (it becomes the current one), optionally loading a URL."},
			func(c *mcp.Call, in tabOpenIn) (tabOut, error) {
				var out tabOut
				id, err := c.On(in.Sandbox, func(id string) error {
					var err error
					out.Tab, err = br.OpenTab(c.Context(), id, wire.OpenTabRequest{URL: in.URL})
					return err
				})
				out.Sandbox = id
				return out, err
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_tab_switch", Title: "Switch tabs", Idempotent: true,
			Description: "Make a tab the current one (actions that name no tab go there)."},
			func(c *mcp.Call, in tabRefIn) (tabOut, error) {
				var out tabOut
				id, err := c.On(in.Sandbox, func(id string) error {
					var err error
					out.Tab, err = br.SwitchTab(c.Context(), id, in.Tab)
					return err
				})
				out.Sandbox = id
				return out, err
			})
		mcp.Add(tb, mcp.Tool{Name: "browser_tab_close", Title: "Close a tab",
			Description: "Close a tab; returns the tabs left."},
			func(c *mcp.Call, in tabRefIn) (tabsOut, error) {
				var out tabsOut
				id, err := c.On(in.Sandbox, func(id string) error {
					t, err := br.CloseTab(c.Context(), id, in.Tab)
					out.Tabs = t.Tabs
					return err
				})
				out.Sandbox = id
				return out, err
			})
	}
}
