//go:build linux

package e2b_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/testenv/npmtest"
)

// codeSDKVersion is the @e2b/code-interpreter release the test pins (with
// its whole dependency tree, in testdata/npm/code-interpreter).
const codeSDKVersion = "2.8.0"

// installCodeSDK installs the unmodified @e2b/code-interpreter SDK with npm
// ci (once per machine and lock file, in the temp dir).
func installCodeSDK(t *testing.T) string {
	return npmtest.Install(t, filepath.Join("testdata", "npm", "code-interpreter"), "@e2b/code-interpreter@"+codeSDKVersion)
}

// TestCodeInterpreterSDK runs testdata/code-sdk.mjs — the unmodified
// @e2b/code-interpreter SDK creating a sandbox from its own template and
// running cells on port 49999 — against a whole Paddock stack, then checks
// the audit trail holds the cells, done by the key in its tenant.
func TestCodeInterpreterSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the code-interpreter SDK and runs Node")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel, pandas, matplotlib").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel, pandas and matplotlib for the host template (Debian packages; .ci/run installs them): %v", err)
	}
	dir := installCodeSDK(t)
	s := newStack(t)
	key := s.key(t, "codesdk")
	script, err := os.ReadFile(filepath.Join("testdata", "code-sdk.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "paddock-code-sdk-test.mjs")
	if err := os.WriteFile(run, script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", run)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "E2B_API_URL="+s.URL, "E2B_SANDBOX_URL="+s.URL, "E2B_API_KEY="+key.Key,
		"E2B_DOMAIN=paddock.invalid", "E2B_DEBUG=false")
	out, err := cmd.CombinedOutput()
	t.Logf("SDK script output:\n%s", out)
	var id string
	passed := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "SANDBOX "); ok {
			id = v
		}
		if strings.HasPrefix(sc.Text(), "ok ") {
			passed++
		}
	}
	if err != nil || !strings.Contains(string(out), "ALL OK") {
		t.Fatalf("the SDK script failed: %v", err)
	}
	if passed < 9 {
		t.Fatalf("only %d steps passed", passed)
	}
	requireEveryStep(t, "code-sdk.mjs", out) // the feature table's checks (featuretable_test.go)
	seen := map[string]bool{}
	for _, r := range s.AuditRecords(audit.Query{Sandbox: id, Limit: 1000}) {
		if r.Tenant != "codesdk" {
			t.Errorf("record %d (%s) has tenant %q", r.Seq, r.Action, r.Tenant)
		}
		if r.Phase != "event" && r.Actor != key.ID {
			t.Errorf("record %d (%s) has actor %q, want %s", r.Seq, r.Action, r.Actor, key.ID)
		}
		seen[r.Action+"/"+r.Phase] = true
	}
	for _, want := range []string{"code.execute/intent", "code.execute/result", "code.context_create/result",
		"code.context_restart/result", "code.context_delete/result"} {
		if !seen[want] {
			t.Errorf("no %s record for the sandbox; have %v", want, seen)
		}
	}
}
