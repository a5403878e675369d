//go:build linux

package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/mcp"
)

// The MCP tools, in-process (the /mcp endpoint and paddock mcp
// --embedded) and through the REST client (plain paddock mcp).
func TestShowMCPTools(t *testing.T) {
	e := newEnv(t, browser.Options{})
	sb := e.sandbox(t, "site.test")
	admin := auth.NewAdmin(e.AdminKey).Principal()
	for _, tc := range []struct {
		name    string
		backend mcp.Backend
		browser mcp.Browser
	}{
		{"in process", mcp.Local(e.Manager.Caller(), nil), e.svc.Caller()},
		{"through the REST client", e.Client, e.Client},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := mcp.New(tc.backend, mcp.Options{Browser: tc.browser})
			if err != nil {
				t.Fatalf("the browser tools do not register: %v", err)
			}
			st, ct := sdk.NewInMemoryTransports()
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = srv.Serve(context.Background(), st, admin)
			}()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cs.Close(); <-done }()
			call := func(name string, args map[string]any, out any) *sdk.CallToolResult {
				t.Helper()
				args["sandbox"] = sb.ID
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !res.IsError && out != nil {
					b, _ := json.Marshal(res.StructuredContent)
					if err := json.Unmarshal(b, out); err != nil {
						t.Fatalf("%s: %s: %v", name, b, err)
					}
				}
				return res
			}
			ok := func(name string, res *sdk.CallToolResult) {
				t.Helper()
				if res.IsError {
					t.Fatalf("%s failed: %v", name, res.Content)
				}
			}
			var page struct{ Title, URL string }
			ok("navigate", call("browser_navigate", map[string]any{"url": "http://site.test/"}, &page))
			if page.Title != "Test site" {
				t.Errorf("navigate: %+v", page)
			}
			var snap struct{ Snapshot string }
			ok("snapshot", call("browser_snapshot", map[string]any{}, &snap))
			ref := refOf(t, snap.Snapshot, `textbox "Your name"`)
			ok("type", call("browser_type", map[string]any{"ref": ref, "value": "MCP", "submit": true}, nil))
			ok("click", call("browser_click", map[string]any{"text": "Change the page"}, nil))
			var txt struct{ Text string }
			ok("text", call("browser_text", map[string]any{"format": "text"}, &txt))
			if !strings.Contains(txt.Text, "Hello, MCP") || !strings.Contains(txt.Text, "changed by a click") {
				t.Errorf("text: %q", txt.Text)
			}
			var md struct{ Text string }
			ok("markdown", call("browser_text", map[string]any{}, &md))
			if !strings.Contains(md.Text, "# Welcome to the test site") {
				t.Errorf("markdown: %q", md.Text)
			}
			var shot struct {
				Path          string
				Width, Height int
			}
			ok("screenshot", call("browser_screenshot", map[string]any{"path": "/workspace/shot.png"}, &shot))
			data, err := e.Client.ReadFile(context.Background(), sb.ID, "/workspace/shot.png")
			if err != nil {
				t.Fatal(err)
			}
			if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width != shot.Width || shot.Width != browser.DefaultWidth {
				t.Errorf("the saved screenshot: %+v %v (%+v)", cfg, err, shot)
			}
			var ev struct{ Value json.RawMessage }
			ok("eval", call("browser_eval", map[string]any{"expression": "1 + 2"}, &ev))
			if string(ev.Value) != "3" {
				t.Errorf("eval: %s", ev.Value)
			}
			var tabs struct{ Tabs []struct{ ID string } }
			ok("tab open", call("browser_tab_open", map[string]any{"url": "http://site.test/article"}, nil))
			ok("tab list", call("browser_tab_list", map[string]any{}, &tabs))
			if len(tabs.Tabs) < 2 {
				t.Fatalf("tabs: %+v", tabs)
			}
			ok("tab switch", call("browser_tab_switch", map[string]any{"tab": "0"}, nil))
			ok("tab close", call("browser_tab_close", map[string]any{"tab": tabs.Tabs[len(tabs.Tabs)-1].ID}, nil))
			ok("scroll", call("browser_scroll", map[string]any{"direction": "down"}, nil))
			ok("press", call("browser_press", map[string]any{"key": "Tab"}, nil))
			// Failures are tool results a model can act on.
			res := call("browser_navigate", map[string]any{"url": "http://blocked.test/"}, nil)
			if !res.IsError || !strings.Contains(resultText(res), "network policy") {
				t.Errorf("a refused navigation: %v", resultText(res))
			}
			res = call("browser_click", map[string]any{"selector": "#nope", "timeout_s": 0.5}, nil)
			if !res.IsError || !strings.Contains(strings.ToLower(resultText(res)), `no element matches "#nope"`) {
				t.Errorf("a missing element: %v", resultText(res))
			}
		})
	}
}

func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
