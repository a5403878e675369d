package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/wire"
)

// Types of the browser API (docs/browser.md; package wire).
type (
	BrowserStatus     = wire.BrowserStatus
	BrowserTab        = wire.BrowserTab
	BrowserTabs       = wire.BrowserTabs
	BrowserTarget     = wire.BrowserTarget
	BrowserPage       = wire.BrowserPage
	NavigateRequest   = wire.NavigateRequest
	ClickRequest      = wire.ClickRequest
	TypeRequest       = wire.TypeRequest
	PressRequest      = wire.PressRequest
	ScrollRequest     = wire.ScrollRequest
	ScrollResult      = wire.ScrollResult
	TextRequest       = wire.TextRequest
	TextResult        = wire.TextResult
	SnapshotRequest   = wire.SnapshotRequest
	SnapshotResult    = wire.SnapshotResult
	EvalRequest       = wire.EvalRequest
	EvalResult        = wire.EvalResult
	ScreenshotRequest = wire.ScreenshotRequest
	Screenshot        = wire.Screenshot
	OpenTabRequest    = wire.OpenTabRequest
	BrowserDownloads  = wire.BrowserDownloads
)

// maxScreenshot bounds a screenshot read from the server.
const maxScreenshot = 128 << 20

func browserPath(id, sub string) string {
	return "/v1/sandboxes/" + url.PathEscape(id) + "/browser" + sub
}

// BrowserStatus reports a sandbox's browser.
func (c *Client) BrowserStatus(ctx context.Context, id string) (BrowserStatus, error) {
	return do[BrowserStatus](ctx, c, http.MethodGet, browserPath(id, ""), nil)
}

// BrowserStart starts a sandbox's browser (actions also start it).
func (c *Client) BrowserStart(ctx context.Context, id string) (BrowserStatus, error) {
	return do[BrowserStatus](ctx, c, http.MethodPost, browserPath(id, "/start"), nil)
}

// BrowserStop stops a sandbox's browser.
func (c *Client) BrowserStop(ctx context.Context, id string) (BrowserStatus, error) {
	return do[BrowserStatus](ctx, c, http.MethodPost, browserPath(id, "/stop"), nil)
}

// BrowserNavigate loads a URL and waits for it.
func (c *Client) BrowserNavigate(ctx context.Context, id string, req NavigateRequest) (BrowserPage, error) {
	return do[BrowserPage](ctx, c, http.MethodPost, browserPath(id, "/navigate"), req)
}

// BrowserClick clicks an element.
func (c *Client) BrowserClick(ctx context.Context, id string, req ClickRequest) (BrowserPage, error) {
	return do[BrowserPage](ctx, c, http.MethodPost, browserPath(id, "/click"), req)
}

// BrowserType types into an element.
func (c *Client) BrowserType(ctx context.Context, id string, req TypeRequest) (BrowserPage, error) {
	return do[BrowserPage](ctx, c, http.MethodPost, browserPath(id, "/type"), req)
}

// BrowserPress presses a key.
func (c *Client) BrowserPress(ctx context.Context, id string, req PressRequest) (BrowserPage, error) {
	return do[BrowserPage](ctx, c, http.MethodPost, browserPath(id, "/press"), req)
}

// BrowserScroll scrolls the page or an element into view.
func (c *Client) BrowserScroll(ctx context.Context, id string, req ScrollRequest) (ScrollResult, error) {
	return do[ScrollResult](ctx, c, http.MethodPost, browserPath(id, "/scroll"), req)
}

// BrowserEval evaluates JavaScript in the page.
func (c *Client) BrowserEval(ctx context.Context, id string, req EvalRequest) (EvalResult, error) {
	return do[EvalResult](ctx, c, http.MethodPost, browserPath(id, "/eval"), req)
}

// BrowserText reads the page's text or Markdown.
func (c *Client) BrowserText(ctx context.Context, id string, req TextRequest) (TextResult, error) {
	q := url.Values{}
	if req.Format != "" {
		q.Set("format", req.Format)
	}
	if req.MaxBytes > 0 {
		q.Set("max_bytes", strconv.Itoa(req.MaxBytes))
	}
	if req.Tab != "" {
		q.Set("tab", req.Tab)
	}
	return do[TextResult](ctx, c, http.MethodGet, withQuery(browserPath(id, "/text"), q), nil)
}

// BrowserSnapshot takes the page's accessibility snapshot.
func (c *Client) BrowserSnapshot(ctx context.Context, id string, req SnapshotRequest) (SnapshotResult, error) {
	q := url.Values{}
	if req.MaxBytes > 0 {
		q.Set("max_bytes", strconv.Itoa(req.MaxBytes))
	}
	if req.Tab != "" {
		q.Set("tab", req.Tab)
	}
	return do[SnapshotResult](ctx, c, http.MethodGet, withQuery(browserPath(id, "/snapshot"), q), nil)
}

// BrowserScreenshot takes a PNG.
func (c *Client) BrowserScreenshot(ctx context.Context, id string, req ScreenshotRequest) (Screenshot, error) {
	q := url.Values{}
	if req.FullPage {
		q.Set("full_page", "1")
	}
	if req.Tab != "" {
		q.Set("tab", req.Tab)
	}
	resp, err := c.open(ctx, http.MethodGet, withQuery(browserPath(id, "/screenshot"), q), nil, "")
	if err != nil {
		return Screenshot{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxScreenshot+1))
	if err != nil {
		return Screenshot{}, err
	}
	if len(data) > maxScreenshot {
		return Screenshot{}, fmt.Errorf("screenshot over %d bytes", maxScreenshot)
	}
	shot := Screenshot{PNG: data, Tab: resp.Header.Get("X-Paddock-Tab")}
	shot.Width, _ = strconv.Atoi(resp.Header.Get("X-Paddock-Width"))
	shot.Height, _ = strconv.Atoi(resp.Header.Get("X-Paddock-Height"))
	shot.URL, _ = url.QueryUnescape(resp.Header.Get("X-Paddock-Url"))
	return shot, nil
}

// BrowserTabs lists the tabs.
func (c *Client) BrowserTabs(ctx context.Context, id string) (BrowserTabs, error) {
	return do[BrowserTabs](ctx, c, http.MethodGet, browserPath(id, "/tabs"), nil)
}

// BrowserOpenTab opens a tab (it becomes current).
func (c *Client) BrowserOpenTab(ctx context.Context, id string, req OpenTabRequest) (BrowserTab, error) {
	return do[BrowserTab](ctx, c, http.MethodPost, browserPath(id, "/tabs"), req)
}

// BrowserSwitchTab makes a tab current.
func (c *Client) BrowserSwitchTab(ctx context.Context, id, tab string) (BrowserTab, error) {
	return do[BrowserTab](ctx, c, http.MethodPost, browserPath(id, "/tabs/"+url.PathEscape(tab)+"/activate"), nil)
}

// BrowserCloseTab closes a tab and returns the tabs left.
func (c *Client) BrowserCloseTab(ctx context.Context, id, tab string) (BrowserTabs, error) {
	return do[BrowserTabs](ctx, c, http.MethodDelete, browserPath(id, "/tabs/"+url.PathEscape(tab)), nil)
}

// BrowserDownloads lists the browser's downloads.
func (c *Client) BrowserDownloads(ctx context.Context, id string) (BrowserDownloads, error) {
	return do[BrowserDownloads](ctx, c, http.MethodGet, browserPath(id, "/downloads"), nil)
}

// BrowserCDPURL is the DevTools endpoint to give Playwright's
// connectOverCDP (with an Authorization header): http(s), from which the
// client reads json/version.
func (c *Client) BrowserCDPURL(id string) string { return c.base + browserPath(id, "") }

// BrowserViewURL is the live view page of a sandbox, for a person with a
// sandbox token (or key) in token.
func (c *Client) BrowserViewURL(id, token string) string {
	u := c.base + browserPath(id, "/view")
	if token != "" {
		u += "?token=" + url.QueryEscape(token)
	}
	return u
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	if strings.Contains(path, "?") {
		return path + "&" + q.Encode()
	}
	return path + "?" + q.Encode()
}
