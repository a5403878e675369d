//go:build linux

package e2b_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
)

// The secret of these tests: long and distinctive, so that any copy of it
// anywhere is unambiguous.
const echoSecret = "e2bsecret-5d1f0c9a7b3e4a21-never-in-the-sandbox"

// dumpScript writes, gzipped and base64'd, what a sandbox could read of a
// secret: its processes' environments and command lines, and the files
// Paddock and the sandbox write (the egress CA bundle, resolver files,
// temp and home directories). The search is made outside the sandbox:
// giving the sandbox the value to grep for would put it there.
const dumpScript = `{ env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' '\n' < "$f"; echo; done
find /etc/ssl /etc/resolv.conf /etc/hosts /tmp /home /root /run /var/tmp -xdev -type f -size -4M -exec cat {} + ; } 2>/dev/null | gzip -c | base64 -w0`

// sandboxHolds reports whether the sandbox's environment, processes or
// files hold needle.
func sandboxHolds(t *testing.T, cl *client.Client, id, needle string) bool {
	t.Helper()
	r, err := cl.Exec(context.Background(), id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", dumpScript}})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("dump: %v %d %s", err, r.ExitCode, r.Stderr)
	}
	if strings.Contains(r.Stdout+r.Stderr, needle) {
		return true
	}
	gz, err := base64.StdEncoding.DecodeString(strings.TrimSpace(r.Stdout))
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	all, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	if len(all) < 1000 {
		t.Fatalf("the dump is %d bytes: it looked at nothing", len(all))
	}
	return bytes.Contains(all, []byte(needle))
}

// TestNetworkSecretsEcho: E2B's /secrets and a network rule whose
// transform header uses ${e2b.secrets.NAME}: the echo server (in a
// namespace of the test's) gets the value on HTTPS, the sandbox never has
// it, an update replaces the rules, and no rule means no header (the
// positive control of the echo server's verdict).
func TestNetworkSecretsEcho(t *testing.T) {
	lab := newEchoLab(t, "Bearer "+echoSecret)
	s := lab.stack(t)
	key := s.key(t, "sec")
	hdr := map[string]string{"X-API-KEY": key.Key, "Content-Type": "application/json"}
	pk, err := s.Auth.CreateKey(context.Background(), s.Scope, auth.KeyRequest{Tenant: "sec", Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeExec}})
	if err != nil {
		t.Fatal(err)
	}
	cl := client.New(s.URL, pk.Key) // the tenant's own REST client, for exec

	// /secrets: create (names lower-cased), a second create is a conflict,
	// no answer carries the value.
	st, _, b := s.do(t, "POST", "/secrets", hdr, []byte(`{"name":"Echo-Token","value":"`+echoSecret+`"}`))
	if st != http.StatusCreated || !strings.Contains(string(b), `"name":"echo-token"`) || !strings.Contains(string(b), `"secretID":"sec_echo-token"`) {
		t.Fatalf("create: %d %s", st, b)
	}
	if st, _, b = s.do(t, "POST", "/secrets", hdr, []byte(`{"name":"echo-token","value":"x"}`)); st != http.StatusConflict {
		t.Fatalf("second create: %d %s", st, b)
	}
	if st, _, b = s.do(t, "POST", "/secrets", hdr, []byte(`{"name":"m","value":"x","metadata":{"a":"b"}}`)); st != http.StatusNotImplemented {
		t.Fatalf("metadata: %d %s (refused, never ignored)", st, b)
	}
	for _, path := range []string{"/secrets", "/secrets/sec_echo-token", "/secrets/Echo-Token"} {
		st, _, b := s.do(t, "GET", path, hdr, nil)
		if st != http.StatusOK || !strings.Contains(string(b), "echo-token") || strings.Contains(string(b), echoSecret) {
			t.Fatalf("GET %s: %d %s", path, st, b)
		}
	}
	if st, _, b = s.do(t, "GET", "/secrets/nope", hdr, nil); st != http.StatusNotFound {
		t.Fatalf("a missing secret: %d %s", st, b)
	}
	if st, _, b = s.do(t, "POST", "/secrets/nope", hdr, []byte(`{"value":"x"}`)); st != http.StatusNotFound {
		t.Fatalf("an update never creates: %d %s", st, b)
	}
	// A key without the secrets right reads names, never sets.
	ro := s.key(t, "sec", auth.ScopeRead)
	roHdr := map[string]string{"X-API-KEY": ro.Key, "Content-Type": "application/json"}
	if st, _, b = s.do(t, "POST", "/secrets", roHdr, []byte(`{"name":"ro","value":"x"}`)); st != http.StatusForbidden {
		t.Fatalf("read-only create: %d %s", st, b)
	}
	if st, _, b = s.do(t, "DELETE", "/secrets/echo-token", roHdr, nil); st != http.StatusForbidden {
		t.Fatalf("read-only delete: %d %s", st, b)
	}

	rules := func(trace string) string {
		return `{"` + echoHost + `":[{"transform":{"headers":{"Authorization":"Bearer ${e2b.secrets.Echo-Token}","X-Paddock-Trace":"` + trace + `"}}}]}`
	}
	c := s.create(t, key.Key, `{"templateID":"base","timeout":120,"network":{"rules":`+rules("create")+`}}`)
	curl := func(flags ...string) string {
		t.Helper()
		cmd := append(append([]string{"curl", "-sS", "-m", "10"}, flags...), "https://"+echoHost+"/")
		r, err := cl.Exec(context.Background(), c.SandboxID, client.ExecRequest{Cmd: cmd})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r.Stdout+r.Stderr, echoSecret) {
			t.Fatalf("the sandbox saw the secret in a response: %s", r.Stdout)
		}
		return strings.TrimSpace(r.Stdout + r.Stderr)
	}
	if got := curl(); got != `{"auth":"match","trace":"create"}` {
		t.Fatalf("with the rule: %s", got)
	}
	if got := lab.requests(); len(got) != 1 || got[0] != (echoSeen{Auth: "Bearer " + echoSecret, Trace: "create", TLS: true}) {
		t.Fatalf("the echo server saw %+v", got)
	}
	// The rule bound the secret to its domain (the key has the secrets right).
	var info struct {
		Hosts []string `json:"hosts"`
	}
	st, _, b = s.do(t, "GET", "/v1/secrets/echo-token?tenant=sec", map[string]string{"Authorization": "Bearer " + s.AdminKey}, nil)
	if json.Unmarshal(b, &info); st != http.StatusOK || len(info.Hosts) != 1 || info.Hosts[0] != echoHost {
		t.Fatalf("bindings: %d %s", st, b)
	}
	// getInfo shows the rule with its placeholder, never the value.
	st, _, b = s.do(t, "GET", "/sandboxes/"+c.SandboxID, hdr, nil)
	if st != http.StatusOK || !strings.Contains(string(b), `"Authorization":"Bearer ${e2b.secrets.echo-token}"`) || strings.Contains(string(b), echoSecret) {
		t.Fatalf("info: %d %s", st, b)
	}
	// The value is nowhere in the sandbox; the search finds what is there.
	if _, err := cl.Exec(context.Background(), c.SandboxID, client.ExecRequest{Cmd: []string{"sh", "-c", "echo planted-marker-7c1d > /tmp/planted"}}); err != nil {
		t.Fatal(err)
	}
	if !sandboxHolds(t, cl, c.SandboxID, "planted-marker-7c1d") {
		t.Fatal("positive control: the search does not find a value the sandbox holds")
	}
	if sandboxHolds(t, cl, c.SandboxID, echoSecret) {
		t.Fatal("the secret's value is in the sandbox")
	}

	// An update replaces the rules; {} clears them: no header at all.
	put := func(body string) {
		t.Helper()
		if st, _, b := s.do(t, "PUT", "/sandboxes/"+c.SandboxID+"/network", hdr, []byte(body)); st != http.StatusNoContent {
			t.Fatalf("update %s: %d %s", body, st, b)
		}
	}
	put(`{"rules":` + rules("update") + `}`)
	if got := curl(); got != `{"auth":"match","trace":"update"}` {
		t.Fatalf("after the update: %s", got)
	}
	put(`{}`)
	// Not intercepted, the connection reaches the echo server itself, whose
	// certificate is the lab's (the sandbox does not trust it: -k).
	if got := curl("-k"); got != `{"auth":"absent","trace":""}` {
		t.Fatalf("without rules: %s", got)
	}
	// A deleted secret is sent nowhere: the request is refused, not sent bare.
	put(`{"rules":` + rules("deleted") + `}`)
	if st, _, b = s.do(t, "DELETE", "/secrets/echo-token", hdr, nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d %s", st, b)
	}
	if got := curl(); strings.Contains(got, `"trace":"deleted"`) {
		t.Fatalf("a request went out with a deleted secret's rule: %s", got)
	}
	if st, _, b = s.do(t, "DELETE", "/secrets/echo-token", hdr, nil); st != http.StatusNotFound {
		t.Fatalf("second delete: %d %s", st, b)
	}
	for _, r := range lab.requests() {
		if r.Trace == "deleted" {
			t.Fatalf("the echo server got a request of the deleted secret's rule: %+v", r)
		}
	}

	// The audit trail has the rules (placeholders) and never the value.
	recs := s.AuditRecords(audit.Query{Limit: 10000})
	raw, _ := json.Marshal(recs)
	if strings.Contains(string(raw), echoSecret) {
		t.Fatal("the audit log holds the secret's value")
	}
	if !strings.Contains(string(raw), "{secret:echo-token}") {
		t.Fatal("the audit log does not show the rules")
	}
}

// TestSecretsTenantIsolation: another tenant's secret does not exist for
// a key, on every /secrets route and in a rule (nothing is bound), with
// the owner's key as the positive control.
func TestSecretsTenantIsolation(t *testing.T) {
	s := newStack(t)
	hdr := func(k auth.CreatedKey) map[string]string {
		return map[string]string{"X-API-KEY": k.Key, "Content-Type": "application/json"}
	}
	a, b := hdr(s.key(t, "tenant-a")), hdr(s.key(t, "tenant-b"))
	if st, _, body := s.do(t, "POST", "/secrets", a, []byte(`{"name":"a-only","value":"`+echoSecret+`"}`)); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, body)
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/secrets/a-only", ""}, {"GET", "/secrets/sec_a-only", ""},
		{"POST", "/secrets/a-only", `{"value":"x"}`}, {"DELETE", "/secrets/a-only", ""},
	} {
		if st, _, body := s.do(t, c.method, c.path, b, []byte(c.body)); st != http.StatusNotFound {
			t.Errorf("tenant B: %s %s: %d %s, want 404", c.method, c.path, st, body)
		}
	}
	if _, _, body := s.do(t, "GET", "/secrets", b, nil); strings.Contains(string(body), "a-only") {
		t.Errorf("tenant B lists A's secret: %s", body)
	}
	rule := `{"network":{"allowOut":["api.example.com"],"denyOut":["0.0.0.0/0"],"rules":{"api.example.com":[{"transform":{"headers":{"Authorization":"${e2b.secrets.a-only}"}}}]}}}`
	if st, _, body := s.do(t, "POST", "/v2/sandboxes", b, []byte(rule)); st != http.StatusBadRequest || !strings.Contains(string(body), "does not exist") {
		t.Errorf("tenant B's rule naming A's secret: %d %s", st, body)
	}
	// The owner sees it, still bound to nothing (B's rule bound nothing).
	st, _, body := s.do(t, "GET", "/v1/secrets/a-only?tenant=tenant-a", map[string]string{"Authorization": "Bearer " + s.AdminKey}, nil)
	if st != http.StatusOK || !strings.Contains(string(body), `"hosts":[]`) {
		t.Errorf("A's secret: %d %s", st, body)
	}
	if st, _, body := s.do(t, "GET", "/secrets/a-only", a, nil); st != http.StatusOK || strings.Contains(string(body), echoSecret) {
		t.Errorf("tenant A: %d %s", st, body)
	}
}
