package wire

import bw "github.com/paddockhq/paddock/internal/browser/wire"

// The browser API (docs/browser.md): the shapes of the dependency-free
// leaf internal/browser/wire, named here for clients.
type (
	BrowserStatus     = bw.Status
	BrowserTab        = bw.Tab
	BrowserTabs       = bw.Tabs
	BrowserTarget     = bw.Target
	BrowserPage       = bw.Page
	BrowserDownload   = bw.Download
	BrowserDownloads  = bw.Downloads
	NavigateRequest   = bw.NavigateRequest
	ClickRequest      = bw.ClickRequest
	TypeRequest       = bw.TypeRequest
	PressRequest      = bw.PressRequest
	ScrollRequest     = bw.ScrollRequest
	ScrollResult      = bw.ScrollResult
	TextRequest       = bw.TextRequest
	TextResult        = bw.TextResult
	SnapshotRequest   = bw.SnapshotRequest
	SnapshotResult    = bw.SnapshotResult
	EvalRequest       = bw.EvalRequest
	EvalResult        = bw.EvalResult
	ScreenshotRequest = bw.ScreenshotRequest
	Screenshot        = bw.Screenshot
	OpenTabRequest    = bw.OpenTabRequest
)
