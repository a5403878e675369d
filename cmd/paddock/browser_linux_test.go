//go:build linux

package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/testenv"
)

// paddock browser against a real server with a browser service: a page
// from the sandbox's own files (no network needed).
func TestBrowserCLI(t *testing.T) {
	if _, err := os.Stat(browser.DefaultChromium); err != nil {
		t.Skipf("Debian's chromium is not installed (%s): apt-get install chromium (.ci/run installs it)", browser.DefaultChromium)
	}
	e := testenv.New(t, testenv.Options{}) // with serve's browser service
	t.Setenv("PADDOCK_URL", e.Server.URL)
	t.Setenv("PADDOCK_API_KEY", e.AdminKey)

	out, _, err := runCLI("create", "--browser")
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(out)
	sb, err := e.Client.Get(context.Background(), id)
	if err != nil || !sb.Spec.Browser || sb.Spec.MemoryMB < 1024 {
		t.Fatalf("create --browser: %+v %v", sb.Spec, err)
	}
	page := `<title>CLI page</title><h1 id=h>Hello CLI</h1><input id=q><button onclick="h.textContent='clicked '+q.value">Go</button>`
	if _, err := e.Client.WriteFile(context.Background(), id, client.WriteRequest{Path: "/workspace/index.html"},
		strings.NewReader(page), int64(len(page))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"browser", id, "navigate", "file:///workspace/index.html"}, "file:///workspace/index.html [200] CLI page"},
		{[]string{"browser", id, "type", "#q", "abc"}, "CLI page"},
		{[]string{"browser", id, "click", "text=Go"}, "CLI page"},
		{[]string{"browser", id, "text"}, "clicked abc"},
		{[]string{"browser", id, "text", "--markdown"}, "# clicked abc"},
		{[]string{"browser", id, "snapshot"}, `heading "clicked abc"`},
		{[]string{"browser", id, "eval", "document.title"}, `"CLI page"`},
		{[]string{"browser", id, "press", "Tab"}, "CLI page"},
		{[]string{"browser", id, "tabs"}, "file:///workspace/index.html"},
		{[]string{"browser", id, "status"}, "state: running"},
		{[]string{"browser", id, "cdp-url"}, "/v1/sandboxes/" + id + "/browser"},
	} {
		stdout, stderr, err := runCLI(tc.args...)
		if err != nil || !strings.Contains(stdout, tc.want) {
			t.Errorf("paddock %s: want %q, got %q %q %v", strings.Join(tc.args, " "), tc.want, stdout, stderr, err)
		}
	}
	file := filepath.Join(t.TempDir(), "shot.png")
	if _, stderr, err := runCLI("browser", id, "screenshot", "-o", file); err != nil || !strings.Contains(stderr, "1280x800") {
		t.Fatalf("screenshot: %q %v", stderr, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width != 1280 || cfg.Height != 800 {
		t.Errorf("screenshot file: %+v %v", cfg, err)
	}
	if _, _, err := runCLI("browser", id, "click", "#nothing", "--timeout", "1s"); err == nil || !strings.Contains(err.Error(), `no element matches "#nothing"`) {
		t.Errorf("a missing element: %v", err)
	}
	if _, _, err := runCLI("browser", id, "fly"); err == nil || !strings.Contains(err.Error(), "unknown browser action") {
		t.Errorf("an unknown action: %v", err)
	}
}
