package browser

import (
	"context"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/rights"
)

// Caller is the service as its callers use it: the browser methods of the
// REST client (package client) with the same signatures, each acting as
// the caller its context carries (rights.FromContext). A surface that
// drives browsers declares them as an interface (the MCP tools do), and
// both this and *client.Client satisfy it.
type Caller struct{ s *Service }

// Caller returns the service's caller view.
func (s *Service) Caller() *Caller { return &Caller{s: s} }

// BrowserStatus reports the sandbox's browser.
func (c *Caller) BrowserStatus(ctx context.Context, id string) (wire.Status, error) {
	return c.s.Status(ctx, rights.FromContext(ctx), id)
}

// BrowserStart starts the sandbox's browser.
func (c *Caller) BrowserStart(ctx context.Context, id string) (wire.Status, error) {
	return c.s.Start(ctx, rights.FromContext(ctx), id)
}

// BrowserStop stops the sandbox's browser.
func (c *Caller) BrowserStop(ctx context.Context, id string) (wire.Status, error) {
	return c.s.Stop(ctx, rights.FromContext(ctx), id)
}

// BrowserNavigate loads a URL.
func (c *Caller) BrowserNavigate(ctx context.Context, id string, req wire.NavigateRequest) (wire.Page, error) {
	return c.s.Navigate(ctx, rights.FromContext(ctx), id, req)
}

// BrowserClick clicks an element.
func (c *Caller) BrowserClick(ctx context.Context, id string, req wire.ClickRequest) (wire.Page, error) {
	return c.s.Click(ctx, rights.FromContext(ctx), id, req)
}

// BrowserType types into an element.
func (c *Caller) BrowserType(ctx context.Context, id string, req wire.TypeRequest) (wire.Page, error) {
	return c.s.Type(ctx, rights.FromContext(ctx), id, req)
}

// BrowserPress presses a key.
func (c *Caller) BrowserPress(ctx context.Context, id string, req wire.PressRequest) (wire.Page, error) {
	return c.s.Press(ctx, rights.FromContext(ctx), id, req)
}

// BrowserScroll scrolls.
func (c *Caller) BrowserScroll(ctx context.Context, id string, req wire.ScrollRequest) (wire.ScrollResult, error) {
	return c.s.Scroll(ctx, rights.FromContext(ctx), id, req)
}

// BrowserEval evaluates JavaScript in the page.
func (c *Caller) BrowserEval(ctx context.Context, id string, req wire.EvalRequest) (wire.EvalResult, error) {
	return c.s.Eval(ctx, rights.FromContext(ctx), id, req)
}

// BrowserText reads the page's text or Markdown.
func (c *Caller) BrowserText(ctx context.Context, id string, req wire.TextRequest) (wire.TextResult, error) {
	return c.s.Text(ctx, rights.FromContext(ctx), id, req)
}

// BrowserSnapshot reads the page's accessibility snapshot.
func (c *Caller) BrowserSnapshot(ctx context.Context, id string, req wire.SnapshotRequest) (wire.SnapshotResult, error) {
	return c.s.Snapshot(ctx, rights.FromContext(ctx), id, req)
}

// BrowserScreenshot takes a PNG.
func (c *Caller) BrowserScreenshot(ctx context.Context, id string, req wire.ScreenshotRequest) (wire.Screenshot, error) {
	return c.s.Screenshot(ctx, rights.FromContext(ctx), id, req)
}

// BrowserTabs lists the tabs.
func (c *Caller) BrowserTabs(ctx context.Context, id string) (wire.Tabs, error) {
	return c.s.Tabs(ctx, rights.FromContext(ctx), id)
}

// BrowserOpenTab opens a tab.
func (c *Caller) BrowserOpenTab(ctx context.Context, id string, req wire.OpenTabRequest) (wire.Tab, error) {
	return c.s.OpenTab(ctx, rights.FromContext(ctx), id, req)
}

// BrowserSwitchTab makes a tab the current one.
func (c *Caller) BrowserSwitchTab(ctx context.Context, id, tab string) (wire.Tab, error) {
	return c.s.SwitchTab(ctx, rights.FromContext(ctx), id, tab)
}

// BrowserCloseTab closes a tab.
func (c *Caller) BrowserCloseTab(ctx context.Context, id, tab string) (wire.Tabs, error) {
	return c.s.CloseTab(ctx, rights.FromContext(ctx), id, tab)
}

// BrowserDownloads lists the downloads of this browser session.
func (c *Caller) BrowserDownloads(ctx context.Context, id string) (wire.Downloads, error) {
	return c.s.Downloads(ctx, rights.FromContext(ctx), id)
}
