package main

import (
	"log/slog"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// openBrowser runs the sandboxes' browsers (docs/browser.md): the service
// behind /v1/sandboxes/{id}/browser and the browser MCP tools, registered
// with the manager. The browsers are Debian's chromium inside each
// sandbox; closing the service drops the server's connections to them.
func openBrowser(st *stack, log *slog.Logger) {
	svc := browser.New(st.mgr, browser.Options{Log: log})
	st.mgr.SetBrowser(svc)
	st.onClose(svc.Close)
}

// browserTools are the MCP browser tools over mgr's browser service (none
// if it has none).
func browserTools(mgr *sandbox.Manager) []mcp.Group {
	if svc, ok := mgr.BrowserService().(*browser.Service); ok && svc != nil {
		return []mcp.Group{browser.MCPTools(browser.ServiceActions(svc))}
	}
	return nil
}

// clientBrowserTools are the MCP browser tools through a Paddock server.
func clientBrowserTools(c *client.Client) []mcp.Group {
	return []mcp.Group{browser.MCPTools(browser.ClientActions(c))}
}
