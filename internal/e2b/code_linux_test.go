//go:build linux

package e2b_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// Port 49999 is the code interpreter, behind the sandbox's token (sent
// as X-Access-Token or as the traffic token create hands out), never an
// API key or another sandbox's token.
func TestCodeInterpreterPort(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel for the host template: %v", err)
	}
	s := newStack(t)
	key := s.key(t, "ci").Key
	st, _, b := s.do(t, "POST", "/v2/sandboxes", map[string]string{"X-API-KEY": key, "Content-Type": "application/json"},
		[]byte(`{"templateID":"code-interpreter-v1"}`))
	if st != 201 {
		t.Fatalf("create: %d %s", st, b)
	}
	var sb struct {
		SandboxID, TemplateID, EnvdAccessToken string
		TrafficAccessToken                     *string
	}
	if err := json.Unmarshal(b, &sb); err != nil || sb.TrafficAccessToken == nil || *sb.TrafficAccessToken != sb.EnvdAccessToken {
		t.Fatalf("create answer %s: the traffic token must be the sandbox token", b)
	}
	if sb.TemplateID != "host" {
		t.Fatalf("code-interpreter-v1 mapped to %q, want the default template", sb.TemplateID)
	}
	other := s.create(t, key, `{}`)
	hdr := func(kv ...string) map[string]string {
		m := map[string]string{"E2b-Sandbox-Id": sb.SandboxID, "E2b-Sandbox-Port": "49999", "Content-Type": "application/json"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tok := sb.EnvdAccessToken
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		body               string
		status             int
		want               string
	}{
		{"execute", "POST", "/execute", hdr("X-Access-Token", tok), `{"code":"6*7"}`, 200, `"text":"42"`},
		{"execute with the traffic token", "POST", "/execute", hdr("E2B-Traffic-Access-Token", tok), `{"code":"1"}`, 200, "end_of_execution"},
		{"contexts with the traffic token", "GET", "/contexts", hdr("E2B-Traffic-Access-Token", tok), ``, 200, `"language":"python"`},
		{"no token", "POST", "/execute", hdr(), `{"code":"1"}`, 401, "X-Access-Token"},
		{"a key is not a token", "POST", "/execute", hdr("X-Access-Token", key), `{"code":"1"}`, 401, "envdAccessToken"},
		{"another sandbox's token", "POST", "/execute", hdr("X-Access-Token", other.EnvdAccessToken), `{"code":"1"}`, 404, ""},
		{"missing code", "POST", "/execute", hdr("X-Access-Token", tok), `{}`, 422, "code"},
		{"both context and language", "POST", "/execute", hdr("X-Access-Token", tok), `{"code":"1","context_id":"a","language":"python"}`, 400, "Only one of"},
		{"unknown context", "POST", "/execute", hdr("X-Access-Token", tok), `{"code":"1","context_id":"nope"}`, 404, "Context nope not found"},
		{"unknown path", "GET", "/contexts/a/b", hdr("X-Access-Token", tok), ``, 404, "code-interpreter endpoint"},
		{"envd's port is still envd", "GET", "/contexts", hdr("E2b-Sandbox-Port", "49983", "X-Access-Token", tok), ``, 404, "envd endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, b := s.do(t, tc.method, tc.path, tc.hdr, []byte(tc.body))
			if st != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%s %s: %d %s; want %d with %q", tc.method, tc.path, st, b, tc.status, tc.want)
			}
		})
	}
	// The cells ran as E2B's default user.
	st, _, b = s.do(t, "POST", "/execute", hdr("X-Access-Token", tok), []byte(`{"code":"import os\nos.getuid()"}`))
	if st != 200 || !strings.Contains(string(b), `"text":"1000"`) {
		t.Fatalf("uid: %d %s", st, b)
	}
}
