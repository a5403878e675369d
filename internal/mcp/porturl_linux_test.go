//go:build linux

package mcp_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/wire"
)

// The REST API's port URL and MCP's port_url are built by one function
// (wire.PortLink): for the same sandbox and port, at the same server, they
// are the same URL but for each one's own token.
func TestPortURLSameOnBothSurfaces(t *testing.T) {
	h := newHarness(t, harnessOptions{ports: true})
	k := h.key("a", tenant.Quotas{})
	cs := h.connectHTTP(k.Key)
	var pu struct {
		Sandbox string `json:"sandbox"`
		URL     string `json:"url"`
	}
	mustOK(t, "port_url", call(t, cs, "port_url", map[string]any{"port": 8080}, &pu))
	cl := client.New(h.hs.URL, k.Key)
	rest, err := cl.PortURL(context.Background(), pu.Sandbox, 8080, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	strip := func(t *testing.T, s string) (string, string) {
		t.Helper()
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		tok := u.Query().Get(wire.PortTokenParam)
		u.RawQuery = ""
		return u.String(), tok
	}
	mu, mt := strip(t, pu.URL)
	ru, rt := strip(t, rest.URL)
	if mu != ru || mt == "" || rt != rest.Token {
		t.Fatalf("MCP %q (token %q) and REST %q (token %q) differ", mu, mt, ru, rt)
	}
	if want := h.hs.URL + wire.PortPath(pu.Sandbox, 8080); mu != want {
		t.Fatalf("port URL %q, want %q", mu, want)
	}
}
