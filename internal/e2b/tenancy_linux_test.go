//go:build linux

package e2b_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/audit"
)

// TestTenantIsolation: tenant B's key, and the envdAccessToken of B's own
// sandbox, get 404 for tenant A's sandbox on every control-plane and envd
// route — exactly what a sandbox that does not exist gets — while A's own
// credentials (the positive control) succeed on the same requests; A's
// sandbox is untouched.
func TestTenantIsolation(t *testing.T) {
	s := newStack(t)
	keyA, keyB := s.key(t, "tenant-a"), s.key(t, "tenant-b")
	a := s.create(t, keyA.Key, `{"metadata":{"owner":"a"}}`)
	b := s.create(t, keyB.Key, `{"metadata":{"owner":"b"}}`)
	if st, _ := s.unary(t, a.SandboxID, a.EnvdAccessToken, "filesystem.Filesystem/MakeDir", `{"path":"/home/user/a-only"}`); st != 200 {
		t.Fatalf("setup: %d", st)
	}

	control := []struct{ method, path, body string }{
		{"GET", "/sandboxes/" + a.SandboxID, ""},
		{"POST", "/sandboxes/" + a.SandboxID + "/timeout", `{"timeout":100}`},
		{"POST", "/sandboxes/" + a.SandboxID + "/refreshes", `{"duration":100}`},
		{"POST", "/v2/sandboxes/" + a.SandboxID + "/connect", `{"timeout":100}`},
		{"POST", "/sandboxes/" + a.SandboxID + "/connect", `{}`},
		{"DELETE", "/sandboxes/" + a.SandboxID, ""}, // last: the control succeeds at it
	}
	for _, c := range control {
		st, _, body := s.do(t, c.method, c.path, map[string]string{"X-API-KEY": keyB.Key, "Content-Type": "application/json"}, []byte(c.body))
		var e struct {
			Code int `json:"code"`
		}
		_ = json.Unmarshal(body, &e)
		if st != http.StatusNotFound || e.Code != 404 {
			t.Errorf("tenant B: %s %s: %d %s; want 404", c.method, c.path, st, body)
		}
	}
	for _, path := range []string{"/v2/sandboxes", "/sandboxes"} {
		_, _, body := s.do(t, "GET", path, map[string]string{"X-API-KEY": keyB.Key}, nil)
		if strings.Contains(string(body), a.SandboxID) || !strings.Contains(string(body), b.SandboxID) {
			t.Errorf("tenant B's list %s: %s", path, body)
		}
	}

	type envdCall struct {
		name   string
		do     func(id, token string) (status int, body string)
		wantOK int
	}
	unary := func(proc, msg string) func(id, token string) (int, string) {
		return func(id, token string) (int, string) {
			st, b := s.unary(t, id, token, proc, msg)
			return st, string(b)
		}
	}
	stream := func(proc, msg string) func(id, token string) (int, string) {
		return func(id, token string) (int, string) {
			_, _, end := s.streamed(t, id, token, proc, msg, nil)
			if strings.Contains(string(end), `"not_found"`) {
				return 404, string(end)
			}
			if string(end) == "{}" {
				return 200, string(end)
			}
			return 500, string(end)
		}
	}
	plain := func(method, path string, body string, hdr map[string]string) func(id, token string) (int, string) {
		return func(id, token string) (int, string) {
			h := envdHeaders(id, token)
			for k, v := range hdr {
				h[k] = v
			}
			st, _, b := s.do(t, method, path, h, []byte(body))
			return st, string(b)
		}
	}
	calls := []envdCall{
		{"read a file", plain("GET", "/files?path=/etc/hostname", "", nil), 200},
		{"write a file", plain("POST", "/files?path=/home/user/planted", "x", map[string]string{"Content-Type": "application/octet-stream"}), 200},
		{"stat", unary("filesystem.Filesystem/Stat", `{"path":"/home/user/a-only"}`), 200},
		{"list a directory", unary("filesystem.Filesystem/ListDir", `{"path":"/home/user"}`), 200},
		{"make a directory", unary("filesystem.Filesystem/MakeDir", `{"path":"/home/user/planted-dir"}`), 200},
		{"remove", unary("filesystem.Filesystem/Remove", `{"path":"/home/user/planted-dir"}`), 200},
		{"list processes", unary("process.Process/List", `{}`), 200},
		{"create a watcher", unary("filesystem.Filesystem/CreateWatcher", `{"path":"/home/user"}`), 200},
		{"start a process", stream("process.Process/Start", `{"process":{"cmd":"/bin/true"}}`), 200},
		{"watch", stream("filesystem.Filesystem/WatchDir", `{"path":"/nope"}`), 404}, // not found either way: the path
	}
	for _, c := range calls {
		// B's token, aimed at A's sandbox.
		if st, body := c.do(a.SandboxID, b.EnvdAccessToken); st != http.StatusNotFound || !strings.Contains(body, "sandbox not found") && c.wantOK != 404 {
			t.Errorf("B's token on A's sandbox: %s: %d %s; want 404 sandbox not found", c.name, st, body)
		}
		// A's token on B's sandbox, the same.
		if st, body := c.do(b.SandboxID, a.EnvdAccessToken); st != http.StatusNotFound {
			t.Errorf("A's token on B's sandbox: %s: %d %s; want 404", c.name, st, body)
		}
		// Positive control: A's own token on A's sandbox.
		if st, body := c.do(a.SandboxID, a.EnvdAccessToken); st != c.wantOK {
			t.Errorf("positive control: %s: %d %s; want %d", c.name, st, body, c.wantOK)
		}
	}
	if st, _, _ := s.do(t, "GET", "/health", envdHeaders(a.SandboxID, b.EnvdAccessToken), nil); st != http.StatusBadGateway {
		t.Errorf("B's token: /health of A's sandbox: %d; want 502 (as for a sandbox that is gone)", st)
	}
	if st, _, _ := s.do(t, "GET", "/health", envdHeaders(a.SandboxID, a.EnvdAccessToken), nil); st != http.StatusNoContent {
		t.Errorf("positive control: /health: %d", st)
	}
	// An API key is not an envd credential, even the owner's.
	if st, _, _ := s.do(t, "GET", "/files?path=/etc/hostname", envdHeaders(a.SandboxID, keyA.Key), nil); st != http.StatusUnauthorized {
		t.Errorf("a key as X-Access-Token: %d", st)
	}

	// Nothing B did reached A's sandbox, and A's key still controls it.
	if st, _, body := s.do(t, "GET", "/sandboxes/"+a.SandboxID, map[string]string{"X-API-KEY": keyA.Key}, nil); st != 200 ||
		!strings.Contains(string(body), `"owner":"a"`) {
		t.Fatalf("A's sandbox: %d %s", st, body)
	}
	// The refused attempts are on the record, in B's name, and no action
	// ran in A's sandbox for B.
	var refused int
	for _, r := range s.AuditRecords(audit.Query{Tenant: "tenant-b", Action: "http", Limit: 1000}) {
		if r.Phase == "result" && r.Status == http.StatusNotFound {
			refused++
		}
	}
	// (A stream's refusal is in its trailer: its HTTP status is 200.)
	if want := len(control) + len(calls) - 2; refused < want {
		t.Errorf("only %d refused requests of tenant B recorded", refused)
	}
	for _, r := range s.AuditRecords(audit.Query{Sandbox: a.SandboxID, Limit: 1000}) {
		if r.Action != "http" && r.Tenant != "tenant-a" {
			t.Errorf("record %d: %s in A's sandbox by tenant %s", r.Seq, r.Action, r.Tenant)
		}
	}
	if st, _, _ := s.do(t, "DELETE", "/sandboxes/"+a.SandboxID, map[string]string{"X-API-KEY": keyA.Key}, nil); st != 204 {
		t.Fatalf("positive control: A kills its sandbox: %d", st)
	}
}

// TestAuditTrail: what the adapter does is the manager's action, seen by
// its Observer with the key as actor, and each request is recorded by the
// Auditor with its route and sandbox.
func TestAuditTrail(t *testing.T) {
	s := newStack(t)
	k := s.key(t, "audited")
	sb := s.create(t, k.Key, `{}`)
	_, _, end := s.streamed(t, sb.SandboxID, sb.EnvdAccessToken, "process.Process/Start",
		`{"process":{"cmd":"/bin/sh","args":["-c","echo audited"]}}`, nil)
	if string(end) != "{}" {
		t.Fatalf("start: %s", end)
	}
	if st, _, _ := s.do(t, "POST", "/files?path=/tmp/a", func() map[string]string {
		h := envdHeaders(sb.SandboxID, sb.EnvdAccessToken)
		h["Content-Type"] = "application/octet-stream"
		return h
	}(), []byte("x")); st != 200 {
		t.Fatal(st)
	}
	if st, _, _ := s.do(t, "DELETE", "/sandboxes/"+sb.SandboxID, map[string]string{"X-API-KEY": k.Key}, nil); st != 204 {
		t.Fatal(st)
	}
	recs := s.AuditRecords(audit.Query{Sandbox: sb.SandboxID, Limit: 1000})
	find := func(action, phase string, match func(audit.Record) bool) bool {
		for _, r := range recs {
			if r.Action == action && r.Phase == phase && r.Actor == k.ID && r.Tenant == "audited" && (match == nil || match(r)) {
				return true
			}
		}
		return false
	}
	route := func(want string) func(audit.Record) bool {
		return func(r audit.Record) bool {
			var args struct{ Route string }
			_ = json.Unmarshal(r.Args, &args)
			return args.Route == want
		}
	}
	for _, c := range []struct {
		action, phase string
		match         func(audit.Record) bool
	}{
		{"sandbox.create", "result", nil},
		{"process.start", "intent", func(r audit.Record) bool { return strings.Contains(string(r.Args), `"echo audited"`) }},
		{"process.start", "result", nil},
		{"file.write", "intent", func(r audit.Record) bool { return strings.Contains(string(r.Args), `"/tmp/a"`) }},
		{"file.write", "result", nil},
		{"sandbox.delete", "intent", nil},
		{"sandbox.delete", "result", nil},
		{"http", "intent", route("/process.Process/Start")},
		{"http", "intent", route("/files")},
		{"http", "result", func(r audit.Record) bool { return r.Status == 200 }},
	} {
		if !find(c.action, c.phase, c.match) {
			t.Errorf("no %s/%s record for the sandbox by %s", c.action, c.phase, k.ID)
		}
	}
}
