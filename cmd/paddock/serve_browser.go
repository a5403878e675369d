package main

import (
	"log/slog"

	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/mcp"
)

// openBrowser runs the sandboxes' browsers (docs/browser.md): the service
// behind /v1/sandboxes/{id}/browser and the browser MCP tools. The manager
// is told of it only to start the browsers of sandboxes created with one.
// The browsers are Debian's chromium inside each sandbox; closing the
// service drops the server's connections to them.
func openBrowser(st *stack, log *slog.Logger) {
	svc := browser.New(st.mgr, browser.Options{Log: log})
	st.mgr.SetBrowser(svc)
	st.browser = svc
	st.onClose(svc.Close)
}

// mcpBrowser is what the MCP browser tools drive in st (nil: no browser
// service, no browser tools).
func mcpBrowser(st *stack) mcp.Browser {
	if st.browser == nil {
		return nil
	}
	return st.browser.Caller()
}
