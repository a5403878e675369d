package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func find(recs []audit.Record, action, phase string) []audit.Record {
	var out []audit.Record
	for _, r := range recs {
		if r.Action == action && (phase == "" || r.Phase == phase) {
			out = append(out, r)
		}
	}
	return out
}

// grepDir reports which files under dir contain needle.
func grepDir(t *testing.T, dir, needle string) []string {
	t.Helper()
	var hits []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(needle)) {
			hits = append(hits, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// Through the real API: every request has an intent before and a result
// after, the manager's exec records sit between them with argv, exit and
// byte counts, and all carry actor, tenant, sandbox and request id.
func TestRecordsOfARealExec(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	// A command that holds newlines and a forged record of its own.
	forged := `{"seq":999,"time":"2026-12-01T00:00:00.000000000Z","action":"sandbox.delete","phase":"result","prev":"` + audit.ZeroHash + `"}`
	res := e.Exec(sb.ID, "sh", "-c", "printf 'x\\n'\n# "+forged+"\necho done")
	if res.ExitCode != 0 {
		t.Fatalf("exec: %+v", res)
	}
	recs := e.AuditRecords(audit.Query{Sandbox: sb.ID})
	var seq []string
	for _, r := range recs {
		seq = append(seq, r.Action+"/"+r.Phase)
	}
	want := "http/intent exec/intent exec/result http/result"
	if !strings.Contains(strings.Join(seq, " "), want) {
		t.Fatalf("records for the sandbox: %v", seq)
	}
	intent := find(recs, "exec", "intent")[0]
	result := find(recs, "exec", "result")[0]
	httpRes := find(recs, "http", "result")
	if intent.Actor != "admin" || intent.Tenant != auth.DefaultTenant || intent.Request == "" ||
		intent.Request != httpRes[len(httpRes)-1].Request || !bytes.Contains(intent.Args, []byte(`sandbox.delete`)) {
		t.Errorf("exec intent: %+v", intent)
	}
	var out struct {
		ExitCode    int   `json:"exit_code"`
		StdoutBytes int64 `json:"stdout_bytes"`
	}
	if err := json.Unmarshal(result.Result, &out); err != nil || out.StdoutBytes != int64(len("x\ndone\n")) || result.DurationNs == 0 {
		t.Errorf("exec result: %+v %s", result, result.Result)
	}
	if len(find(recs, "sandbox.delete", "")) != 0 {
		t.Fatal("the forged record became a record")
	}
	if last := httpRes[len(httpRes)-1]; last.Status != 200 {
		t.Errorf("http result status %d", last.Status)
	}
	if err := e.Client.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if len(find(e.AuditRecords(audit.Query{Sandbox: sb.ID}), "sandbox.delete", "result")) != 1 {
		t.Error("delete not recorded")
	}
	e.Close()
	if _, err := audit.Verify(e.AuditDir(), nil); err != nil {
		t.Fatalf("verify after a real run: %v", err)
	}
}

// Secrets never reach the log: a key created and used (as the bearer, in
// argv, in env), and the admin key.
func TestSecretsNeverLogged(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	k, err := e.Client.CreateKey(ctx, client.KeyRequest{Tenant: auth.DefaultTenant, Scopes: []client.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(e.Server.URL, k.Key)
	sb, err := c.Create(ctx, client.Spec{Env: map[string]string{"API_TOKEN": k.Key}})
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"echo", k.Key},
		{"sh", "-c", "curl -H 'Authorization: Bearer " + k.Key + "' http://x || true"},
		{"sh", "-c", "PADDOCK_API_KEY=" + k.Key + " true"},
		{"env", "MY_SECRET=" + k.Key, "true"},
	} {
		if _, err := c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: argv, Env: map[string]string{"TOKEN": k.Key}}); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := c.CreateToken(ctx, sb.ID, []client.Scope{auth.ScopeRead}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(e.Server.URL, tok.Token).Get(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	// Positive control: the key's id is recorded as the actor.
	if recs := e.AuditRecords(audit.Query{Actor: k.ID}); len(recs) < 8 {
		t.Fatalf("the key's actions are not in the log: %d records", len(recs))
	}
	e.Close()
	for name, secret := range map[string]string{"key": k.Key, "key body": strings.TrimPrefix(k.Key, "pdk_"),
		"token": tok.Token, "admin key": e.AdminKey} {
		if hits := grepDir(t, e.AuditDir(), secret); len(hits) > 0 {
			t.Errorf("the %s appears in %v", name, hits)
		}
	}
}

// mountTinyAudit puts DATA/audit on a small tmpfs, so a test can fill it.
func mountTinyAudit(t *testing.T) string {
	t.Helper()
	data, err := os.MkdirTemp("", "pdkfc")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(data, "audit")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		_ = os.RemoveAll(data)
	})
	return data
}

// fill fills the audit filesystem, then spends the slack of the
// segment's last page (tmpfs allocates whole pages) with harmless
// requests until the log refuses one.
func fill(t *testing.T, e *testenv.Env) {
	t.Helper()
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(e.AuditDir(), "filler"), "bs=4k").CombinedOutput(); err == nil {
		t.Fatalf("dd should stop at ENOSPC: %s", out)
	}
	for i := 0; i < 200; i++ {
		if _, err := e.AuditLog().Append(context.Background(), audit.Entry{Action: "test.fill", Phase: audit.PhaseEvent}); err != nil {
			return
		}
	}
	t.Fatal("the audit log still takes records on a full filesystem")
}

func status(err error) int {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Status
	}
	return 0
}

// Fail closed: when the log cannot be written, a create and an exec are
// refused with 503 and nothing happens; once it can, work resumes and the
// refusals are recorded as a gap.
func TestFailClosed(t *testing.T) {
	testenv.RequireRoot(t)
	data := mountTinyAudit(t)
	e := testenv.New(t, testenv.Options{DataDir: data})
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatalf("control: create with a working log: %v", err)
	}
	fill(t, e)
	count := func() int { l, _ := e.Manager.List(ctx, e.Scope, nil); return len(l) }
	before := count()
	_, err = e.Client.Create(ctx, client.Spec{})
	if status(err) != http.StatusServiceUnavailable {
		t.Fatalf("create with a full audit disk: %v", err)
	}
	_, err = e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"touch", "/workspace/marker"}})
	if status(err) != http.StatusServiceUnavailable {
		t.Fatalf("exec with a full audit disk: %v", err)
	}
	// The manager refuses too, for callers that do not come through the API.
	if _, err := e.Manager.Exec(ctx, e.Scope, sb.ID, sandbox.ExecRequest{Cmd: []string{"touch", "/workspace/marker2"}}, nil, discard{}, false); err == nil {
		t.Fatal("manager exec with a full audit disk must fail")
	}
	if n := count(); n != before {
		t.Fatalf("a sandbox was created anyway: %d -> %d", before, n)
	}
	os.Remove(filepath.Join(e.AuditDir(), "filler"))
	res := e.Exec(sb.ID, "sh", "-c", "ls /workspace/marker /workspace/marker2 2>&1 || true")
	if !strings.Contains(res.Stdout, "No such file") || strings.Count(res.Stdout, "No such file") != 2 {
		t.Fatalf("the refused execs ran: %q", res.Stdout)
	}
	if gaps := find(e.AuditRecords(audit.Query{}), audit.ActionGap, ""); len(gaps) == 0 {
		t.Error("the refused records are not recorded as a gap")
	}
	e.Close()
	if _, err := audit.Verify(e.AuditDir(), nil); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

type discard struct{}

func (discard) Stdout([]byte) error { return nil }
func (discard) Stderr([]byte) error { return nil }

// Fail open (configured): the action proceeds; the log records the gap.
func TestFailOpen(t *testing.T) {
	testenv.RequireRoot(t)
	data := mountTinyAudit(t)
	e := testenv.New(t, testenv.Options{DataDir: data, Audit: testenv.AuditOptions{FailOpen: true}})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{})
	fill(t, e)
	if res, err := e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"touch", "/workspace/marker"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("fail-open exec: %v %+v", err, res)
	}
	os.Remove(filepath.Join(e.AuditDir(), "filler"))
	if res := e.Exec(sb.ID, "test", "-e", "/workspace/marker"); res.ExitCode != 0 {
		t.Fatal("the fail-open exec did not run")
	}
	if gaps := find(e.AuditRecords(audit.Query{}), audit.ActionGap, ""); len(gaps) == 0 {
		t.Error("gap not recorded")
	}
}

// The webhook hears policy violations: a forbidden call, a limit hit and
// an OOM kill — and the action path never waits for it.
func TestWebhookGetsViolations(t *testing.T) {
	got := make(chan audit.WebhookBody, 32)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b audit.WebhookBody
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &b) == nil {
			got <- b
		}
	}))
	defer hook.Close()
	e := testenv.New(t, testenv.Options{MaxSandboxes: 1, Audit: testenv.AuditOptions{Webhook: hook.URL}})
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{MemoryMB: 64})
	if err != nil {
		t.Fatal(err)
	}
	// Limit hit: the server holds one sandbox at most.
	if _, err := e.Client.Create(ctx, client.Spec{}); status(err) != http.StatusTooManyRequests {
		t.Fatalf("second create: %v", err)
	}
	// Forbidden: a sandbox token (write scope) tries to create a sandbox.
	tok, err := e.Client.CreateToken(ctx, sb.ID, []client.Scope{auth.ScopeWrite}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(e.Server.URL, tok.Token).Create(ctx, client.Spec{}); status(err) != http.StatusForbidden {
		t.Fatalf("a token created a sandbox: %v", err)
	}
	// OOM kill.
	res := e.Exec(sb.ID, "awk", "BEGIN{s=\"x\"; while (1) s = s s}")
	if !res.OOMKilled {
		t.Fatalf("control: the exec was not OOM-killed: %+v", res)
	}
	reasons := map[string]audit.WebhookBody{}
	deadline := time.After(30 * time.Second)
	for len(reasons) < 3 {
		select {
		case b := <-got:
			reasons[b.Reason] = b
		case <-deadline:
			t.Fatalf("webhook got %v", reasons)
		}
	}
	if b, ok := reasons["denied:limit_exceeded"]; !ok || b.Record.Status != 429 {
		t.Errorf("limit hit not sent: %v", reasons)
	}
	if b, ok := reasons["denied:forbidden"]; !ok || b.Record.Sandbox != sb.ID {
		t.Errorf("forbidden not sent: %v", reasons)
	}
	if b, ok := reasons["oom_killed"]; !ok || b.Record.Sandbox != sb.ID {
		t.Errorf("OOM kill not sent: %v", reasons)
	}
	// The OOM kill is in the log, too.
	var oom bool
	for _, r := range find(e.AuditRecords(audit.Query{Sandbox: sb.ID}), "exec", "result") {
		oom = oom || bytes.Contains(r.Result, []byte(`"oom_killed":true`))
	}
	if !oom {
		t.Error("OOM kill not in the log")
	}
}

// Nothing inside a sandbox can reach the log: the data directory is not
// in its root at all. Positive control: the host reads it.
func TestSandboxCannotReachLog(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	seg := filepath.Join(e.AuditDir(), audit.SegmentName(1))
	if _, err := os.ReadFile(seg); err != nil {
		t.Fatalf("control: the host reads the log: %v", err)
	}
	for _, script := range []string{"cat " + seg, "ls -d " + e.Data, "cat /proc/1/root" + seg, "echo x >> " + seg} {
		res := e.Sh(sb.ID, script)
		if res.ExitCode == 0 || strings.Contains(res.Stdout, `"seq":`) {
			t.Fatalf("%s: the sandbox reaches the log: %+v", script, res)
		}
	}
	if res := e.Sh(sb.ID, "find / -xdev -name 'audit-0*.jsonl' -o -name "+audit.KeyFile+" 2>/dev/null; true"); strings.TrimSpace(res.Stdout) != "" {
		t.Fatalf("the sandbox finds audit files:\n%s", res.Stdout)
	}
	e.Close()
	if _, err := audit.Verify(e.AuditDir(), nil); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// GET /v1/audit and the export: admin only, filters, cursor, JSON lines.
func TestAuditAPI(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{})
	for i := 0; i < 5; i++ {
		e.Exec(sb.ID, "true")
	}
	page, err := e.Client.Audit(ctx, client.AuditQuery{Sandbox: sb.ID, Action: "exec", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 3 || !page.More {
		t.Fatalf("page: %d records, more=%v", len(page.Records), page.More)
	}
	next, err := e.Client.Audit(ctx, client.AuditQuery{Sandbox: sb.ID, Action: "exec", Cursor: page.Next, Limit: 100})
	if err != nil || len(next.Records) != 7 || next.More {
		t.Fatalf("next page: %v %d", err, len(next.Records))
	}
	var buf bytes.Buffer
	if err := e.Client.AuditExport(ctx, client.AuditQuery{Sandbox: sb.ID}, &buf); err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if _, err := audit.ParseLine(line); err != nil {
			t.Fatalf("export line: %v", err)
		}
	}
	k, err := e.Client.CreateKey(ctx, client.KeyRequest{Tenant: auth.DefaultTenant, Scopes: []client.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(e.Server.URL, k.Key).Audit(ctx, client.AuditQuery{}); status(err) != http.StatusForbidden {
		t.Fatalf("a non-admin key read the log: %v", err)
	}
	// Following: a long-poll wakes when a record arrives.
	tail, err := e.Client.Audit(ctx, client.AuditQuery{Tail: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan client.AuditPage, 1)
	go func() {
		p, _ := e.Client.Audit(ctx, client.AuditQuery{Cursor: tail.Next, Action: "exec", Wait: 30 * time.Second})
		done <- p
	}()
	time.Sleep(100 * time.Millisecond)
	e.Exec(sb.ID, "true")
	select {
	case p := <-done:
		if len(p.Records) == 0 {
			t.Fatal("the follower woke with nothing")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the follower did not wake")
	}
}
