//go:build linux

package e2b_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/testenv/npmtest"
)

// sdkVersion is the e2b npm package the test pins (with its whole
// dependency tree, in testdata/npm/e2b/package-lock.json).
const sdkVersion = "2.51.0"

// sdkSecret is the secret the script stores with Secret.create and uses in
// a network rule's header; it must never be found in the sandbox.
const sdkSecret = "sdksecret-0b8e2f4c6a1d9e37-never-in-the-sandbox"

// installSDK installs the unmodified e2b SDK with npm ci (once per
// machine, in the temp dir) and returns the directory to run scripts in.
func installSDK(t *testing.T) string {
	return npmtest.Install(t, filepath.Join("testdata", "npm", "e2b"), "e2b@"+sdkVersion)
}

// TestSDK runs testdata/sdk.mjs — the unmodified e2b SDK doing what an
// E2B user's code does — against the adapter, with E2B_API_URL and
// E2B_SANDBOX_URL both pointing at the Paddock server and an e2b_ key.
// It then checks that the manager's audit trail holds the actions, done
// by that key in its tenant.
func TestSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the e2b SDK and runs Node")
	}
	dir := installSDK(t)
	// Internet by default, and updateNetwork, as in E2B; echo.test is the
	// lab's echo server (echolab_linux_test.go), for network rules; a
	// registry for Template.build.
	lab := newEchoLab(t, "Bearer "+sdkSecret)
	s, tplEnv := lab.sdkStack(t)
	key := s.key(t, "sdk")
	script, err := os.ReadFile(filepath.Join("testdata", "sdk.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// ESM resolves "e2b" from the script's own directory.
	run := filepath.Join(dir, "paddock-sdk-test.mjs")
	if err := os.WriteFile(run, script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", run)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "E2B_API_URL="+s.URL, "E2B_SANDBOX_URL="+s.URL, "E2B_API_KEY="+key.Key,
		"E2B_DOMAIN=paddock.invalid", "E2B_DEBUG=false",
		"PADDOCK_ECHO_URL=https://"+echoHost+"/", "PADDOCK_SECRET_VALUE="+sdkSecret) // the script's network-rules block
	cmd.Env = append(cmd.Env, tplEnv...)
	out, err := cmd.CombinedOutput()
	var id string
	passed := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "SANDBOX "); ok {
			id = v
		}
		if strings.HasPrefix(line, "ok ") {
			passed++
		}
	}
	t.Logf("SDK script output:\n%s", out)
	if err != nil || !strings.Contains(string(out), "ALL OK") {
		t.Fatalf("the SDK script failed: %v", err)
	}
	if passed < 20 {
		t.Fatalf("only %d steps passed", passed)
	}
	requireEveryStep(t, "sdk.mjs", out) // the feature table's checks (featuretable_test.go)

	// The echo server got the secret in the rule's header, and nothing
	// once the rules were cleared (the script checks its verdicts).
	var traces []string
	for _, r := range lab.requests() {
		traces = append(traces, r.Trace)
		if want := "Bearer " + sdkSecret; r.Trace != "" && (r.Auth != want || !r.TLS) {
			t.Errorf("the echo server got %+v, want Authorization %q over TLS", r, want)
		}
	}
	if strings.Join(traces, ",") != "sdk-create,sdk-update," {
		t.Errorf("the echo server saw the traces %q, want sdk-create, sdk-update and one without rules", traces)
	}
	if raw, _ := json.Marshal(s.AuditRecords(audit.Query{Limit: 100000})); strings.Contains(string(raw), sdkSecret) {
		t.Error("the audit log holds the secret's value")
	}

	// The audit trail: the manager's events for the sandbox, attributed
	// to the key and its tenant, and the API requests of both APIs.
	recs := s.AuditRecords(audit.Query{Sandbox: id, Limit: 1000})
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Tenant != "sdk" {
			t.Errorf("record %d (%s) has tenant %q", r.Seq, r.Action, r.Tenant)
		}
		if r.Phase != "event" && r.Actor != key.ID {
			t.Errorf("record %d (%s) has actor %q, want %s", r.Seq, r.Action, r.Actor, key.ID)
		}
		seen[r.Action+"/"+r.Phase] = true
	}
	for _, want := range []string{"sandbox.create/result", "process.start/intent", "process.start/result",
		"process.stdin/result", "process.close_stdin/result", "process.kill/result", "file.write/result",
		"file.read/result", "file.list/result", "file.stat/result", "file.move/result", "file.mkdir/result",
		"file.remove/result", "file.watch/result", "sandbox.delete/intent", "sandbox.delete/result", "http/intent", "http/result"} {
		if !seen[want] {
			t.Errorf("no %s record for the sandbox; have %v", want, seen)
		}
	}
}
