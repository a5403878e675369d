//go:build linux

package hostile

// MCP session flooding (issue 14, item 8): the server held 1,024
// streamable HTTP sessions for everyone, and a read-only key filled them
// in 0.6 s — the admin then got 503. Sessions are now limited per key and
// per tenant below the server's whole.

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
)

const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
	`"capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`

// openMCPSession opens one MCP session as key: its status, session id and
// body.
func openMCPSession(t *testing.T, s *server, key string) (int, string, string) {
	req, _ := http.NewRequest("POST", "http://"+s.addr+"/mcp", strings.NewReader(mcpInit))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := s.hc.Do(req)
	if err != nil {
		t.Errorf("open an MCP session: %v", err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// The four steps. Positive control: the flooding key does open sessions
// (64, its share), so the refusals that follow are the limit, not a
// broken endpoint. Then: the flood (8 workers, 400 attempts) gets no more
// than that; a second key of the same tenant is held to the tenant's
// share; another tenant's key and the admin still open sessions and call
// a tool; each refusal is a 429 naming the limit, and is recorded.
func TestMCPSessionFlood(t *testing.T) {
	s := startServer(t, serverOptions{})
	ctx := ctxT(t, time.Minute)
	if _, err := s.c.CreateTenant(ctx, "flood", client.Quotas{}); err != nil {
		t.Fatal(err)
	}
	keyOf := func(tenant string) string {
		k, err := s.c.CreateKey(ctx, client.KeyRequest{Tenant: tenant, Scopes: []client.Scope{auth.ScopeRead}})
		if err != nil {
			t.Fatal(err)
		}
		return k.Key
	}
	flood := keyOf("flood")
	var opened, refused atomic.Int64
	var refusal atomic.Value
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= 400 {
				code, id, body := openMCPSession(t, s, flood)
				switch {
				case code == 200 && id != "":
					opened.Add(1)
				case code == 429:
					refused.Add(1)
					refusal.Store(body)
				}
			}
		}()
	}
	wg.Wait()
	msg, _ := refusal.Load().(string)
	t.Logf("flood: %d sessions opened, %d refused (%s)", opened.Load(), refused.Load(), clipS(msg))
	if opened.Load() != 64 {
		t.Fatalf("the flooding key opened %d sessions, want exactly its limit of 64", opened.Load())
	}
	if refused.Load() < 300 || !strings.Contains(msg, "this key has 64 MCP sessions open") {
		t.Fatalf("refusals: %d, %q", refused.Load(), msg)
	}
	// More keys of the same tenant: held to the tenant's share (256).
	tenantOpened := opened.Load()
	for k := 0; k < 4 && tenantOpened < 256; k++ {
		key := keyOf("flood")
		for i := 0; i < 64; i++ {
			if code, id, _ := openMCPSession(t, s, key); code == 200 && id != "" {
				tenantOpened++
			}
		}
	}
	code, _, body := openMCPSession(t, s, keyOf("flood"))
	if tenantOpened != 256 || code != 429 || !strings.Contains(body, "tenant flood has 256 MCP sessions open") {
		t.Fatalf("the tenant's sessions: %d opened, then %d %s", tenantOpened, code, clipS(body))
	}
	// Another tenant, and the admin: served.
	if _, err := s.c.CreateTenant(ctx, "victim", client.Quotas{}); err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]string{"another tenant": keyOf("victim"), "the admin": s.key} {
		code, id, body := openMCPSession(t, s, key)
		if code != 200 || id == "" {
			t.Fatalf("%s cannot open an MCP session during the flood: %d %s", name, code, clipS(body))
		}
	}
	id := s.create(client.Spec{})
	s.stillServes(id)
	var seen bool
	for _, r := range s.httpRecords(t) {
		if r.Phase == audit.PhaseResult && r.Status == 429 && strings.Contains(string(r.Result), `/mcp"`) {
			seen = true
			break
		}
	}
	if !seen {
		t.Error("no refused MCP session (429, POST /mcp) in the audit log")
	}
}
