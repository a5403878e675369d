//go:build linux

package mcp_test

import (
	"testing"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

// The snapshot and fork tools, in this process (Local) and through the
// REST client (paddock mcp): snapshot the session's sandbox, list it,
// create a sandbox from it, fork it, delete the snapshot.
func TestStateTools(t *testing.T) {
	testenv.RequireRoot(t)
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	p := auth.Principal{KeyID: k.ID, Tenant: "a", Scopes: k.Scopes}
	viaREST, err := mcp.New(client.New(h.hs.URL, k.Key), mcp.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for name, srv := range map[string]struct {
		s *mcp.Server
		p auth.Principal
	}{"local": {h.srv, p}, "rest": {viaREST, auth.Principal{}}} {
		t.Run(name, func(t *testing.T) {
			cs, done := connectMemory(t, srv.s, srv.p)
			defer func() { _ = cs.Close(); <-done }()
			var ex execResult
			mustOK(t, "exec", call(t, cs, "exec", map[string]any{"command": "echo kept > /workspace/k"}, &ex))
			var snap struct {
				Name   string `json:"name"`
				Source string `json:"source"`
				Files  int    `json:"files"`
			}
			mustOK(t, "sandbox_snapshot", call(t, cs, "sandbox_snapshot", map[string]any{"name": "s-" + name}, &snap))
			if snap.Name != "s-"+name || snap.Source != ex.Sandbox || snap.Files == 0 {
				t.Fatalf("sandbox_snapshot = %+v", snap)
			}
			wantError(t, "bad name", call(t, cs, "sandbox_snapshot", map[string]any{"name": "../x"}, nil), "snapshot name")
			var list struct {
				Snapshots []struct {
					Name string `json:"name"`
				} `json:"snapshots"`
			}
			mustOK(t, "snapshot_list", call(t, cs, "snapshot_list", map[string]any{}, &list))
			found := false
			for _, s := range list.Snapshots {
				found = found || s.Name == "s-"+name
			}
			if !found {
				t.Fatalf("snapshot_list = %+v", list)
			}
			var created struct {
				ID string `json:"id"`
			}
			mustOK(t, "sandbox_create", call(t, cs, "sandbox_create", map[string]any{"snapshot": "s-" + name}, &created))
			var cat execResult
			mustOK(t, "exec", call(t, cs, "exec", map[string]any{"sandbox": created.ID, "command": "cat /workspace/k"}, &cat))
			if cat.Stdout != "kept\n" {
				t.Fatalf("from the snapshot: %+v", cat)
			}
			var forks struct {
				Sandboxes []struct {
					ID string `json:"id"`
				} `json:"sandboxes"`
			}
			mustOK(t, "sandbox_fork", call(t, cs, "sandbox_fork", map[string]any{"count": 2}, &forks))
			if len(forks.Sandboxes) != 2 {
				t.Fatalf("sandbox_fork = %+v", forks)
			}
			for _, f := range append(forks.Sandboxes, struct {
				ID string `json:"id"`
			}{created.ID}) {
				mustOK(t, "exec", call(t, cs, "exec", map[string]any{"sandbox": f.ID, "command": "cat /workspace/k"}, &cat))
				if cat.Stdout != "kept\n" {
					t.Fatalf("fork %s: %+v", f.ID, cat)
				}
				mustOK(t, "sandbox_delete", call(t, cs, "sandbox_delete", map[string]any{"sandbox": f.ID}, nil))
			}
			mustOK(t, "snapshot_delete", call(t, cs, "snapshot_delete", map[string]any{"name": "s-" + name}, nil))
			wantError(t, "deleted again", call(t, cs, "snapshot_delete", map[string]any{"name": "s-" + name}, nil), "not found")
		})
	}
}
