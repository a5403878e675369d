package testenv_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func get(t *testing.T, e *testenv.Env, path string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", e.Server.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.AdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A stack is serve's house: secrets, browser, E2B and /mcp are in it
// unless a test leaves them out; the sandbox network only when asked for.
func TestStackIsServes(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	st := e.Stack
	if st.Secrets == nil || st.Browser == nil || st.E2B == nil || st.MCP == nil || e.AuditLog() == nil {
		t.Fatalf("a part is missing: secrets %v browser %v e2b %v mcp %v audit %v",
			st.Secrets != nil, st.Browser != nil, st.E2B != nil, st.MCP != nil, e.AuditLog() != nil)
	}
	if st.Network != nil {
		t.Fatal("a host-wide sandbox network in a default stack")
	}
	if st.Manager != e.Manager || st.Auth != e.Auth || st.Store != e.Store || st.Backend != e.Backend {
		t.Fatal("the Env's parts are not the stack's")
	}
	for path, want := range map[string]int{"/v1/secrets": 200, "/v2/sandboxes": 200, "/healthz": 200} {
		if got := get(t, e, path); got != want {
			t.Errorf("GET %s: %d, want %d", path, got, want)
		}
	}
	sb := e.Create(sandbox.Spec{})
	if r := e.Sh(sb.ID, "echo ok"); r.Stdout != "ok\n" {
		t.Fatalf("exec: %+v", r)
	}

	lean := testenv.New(t, testenv.Options{NoSecrets: true, NoBrowser: true, NoE2B: true, NoMCP: true})
	if s := lean.Stack; s.Secrets != nil || s.Browser != nil || s.E2B != nil || s.MCP != nil {
		t.Fatal("a part left out is there")
	}
	for path, want := range map[string]int{"/v1/secrets": 501, "/v2/sandboxes": 404, "/mcp": 404} {
		if got := get(t, lean, path); got != want {
			t.Errorf("lean stack: GET %s: %d, want %d", path, got, want)
		}
	}
}

// NetworkConfig builds serve's network in the test's namespace.
func TestNetworkConfig(t *testing.T) {
	testenv.RequireRoot(t)
	ns := netlab.New(t)
	e := testenv.New(t, testenv.Options{NetworkConfig: &server.NetworkConfig{HostNS: ns.Path(), Upstreams: []netip.AddrPort{}}})
	if e.Stack.Network == nil {
		t.Fatal("no network")
	}
	if _, ok := e.Stack.Network.Attachment("none"); ok {
		t.Fatal("an attachment before any sandbox")
	}
	sb := e.Create(sandbox.Spec{Network: &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"example.test"}}})
	if _, ok := e.Stack.Network.Attachment(sb.ID); !ok {
		t.Fatal("the networked sandbox is not attached")
	}
}
