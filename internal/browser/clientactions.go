package browser

import (
	"context"
	"errors"
	"strings"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
)

// ClientActions runs the actions on a Paddock server through its REST API
// (paddock mcp without --embedded), as the client's key.
func ClientActions(c *client.Client) Actions { return clientActions{c} }

type clientActions struct{ c *client.Client }

// coded turns the client's errors back into coded ones, so the MCP tools
// word them as for the in-process service.
func coded[T any](c *client.Client, v T, err error) (T, error) {
	if err == nil {
		return v, nil
	}
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && strings.HasPrefix(ce.Code, "http_"):
		err = errs.New(errs.CodeUnavailable, "the Paddock server at %s answered %s", c.BaseURL(), ce.Message)
	case errors.As(err, &ce) && ce.Code != "":
		err = errs.New(errs.Code(ce.Code), "%s", ce.Message)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		err = errs.Wrap(errs.CodeTimeout, err, "the call was cancelled or timed out")
	default:
		err = errs.Wrap(errs.CodeUnavailable, err, "cannot reach the Paddock server at %s", c.BaseURL())
	}
	return v, err
}

func (a clientActions) Navigate(ctx context.Context, id string, req wire.NavigateRequest) (wire.Page, error) {
	v, err := a.c.BrowserNavigate(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Click(ctx context.Context, id string, req wire.ClickRequest) (wire.Page, error) {
	v, err := a.c.BrowserClick(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Type(ctx context.Context, id string, req wire.TypeRequest) (wire.Page, error) {
	v, err := a.c.BrowserType(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Press(ctx context.Context, id string, req wire.PressRequest) (wire.Page, error) {
	v, err := a.c.BrowserPress(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Scroll(ctx context.Context, id string, req wire.ScrollRequest) (wire.ScrollResult, error) {
	v, err := a.c.BrowserScroll(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Text(ctx context.Context, id string, req wire.TextRequest) (wire.TextResult, error) {
	v, err := a.c.BrowserText(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Snapshot(ctx context.Context, id string, req wire.SnapshotRequest) (wire.SnapshotResult, error) {
	v, err := a.c.BrowserSnapshot(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Eval(ctx context.Context, id string, req wire.EvalRequest) (wire.EvalResult, error) {
	v, err := a.c.BrowserEval(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Screenshot(ctx context.Context, id string, req wire.ScreenshotRequest) (wire.Screenshot, error) {
	v, err := a.c.BrowserScreenshot(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) Tabs(ctx context.Context, id string) (wire.Tabs, error) {
	v, err := a.c.BrowserTabs(ctx, id)
	return coded(a.c, v, err)
}
func (a clientActions) OpenTab(ctx context.Context, id string, req wire.OpenTabRequest) (wire.Tab, error) {
	v, err := a.c.BrowserOpenTab(ctx, id, req)
	return coded(a.c, v, err)
}
func (a clientActions) SwitchTab(ctx context.Context, id, tab string) (wire.Tab, error) {
	v, err := a.c.BrowserSwitchTab(ctx, id, tab)
	return coded(a.c, v, err)
}
func (a clientActions) CloseTab(ctx context.Context, id, tab string) (wire.Tabs, error) {
	v, err := a.c.BrowserCloseTab(ctx, id, tab)
	return coded(a.c, v, err)
}
