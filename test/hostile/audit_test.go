//go:build linux

package hostile

// Group: audit tampering. The log must hold what happened, hold only
// that, and show any change made to it afterwards.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/testenv"
)

// forged is a complete, plausible audit record of its own.
const forged = `{"seq":2,"time":"2026-01-01T00:00:00.000000000Z","action":"sandbox.delete","phase":"result","actor":"admin","prev":"` +
	audit.ZeroHash + `","hash":"` + audit.ZeroHash + `"}`

// Newlines in a command line or a file name, carrying a forged record: it
// stays a string inside one record, and the log verifies.
func TestAuditForgedRecordThroughNewlines(t *testing.T) {
	payload := "x\n" + forged + "\n"
	// Control: a naive line-oriented log of the same argv carries the forged
	// record as a line of its own, which parses as a record.
	var naive bytes.Buffer
	fmt.Fprintf(&naive, "exec %s\n", payload)
	forgedLines := 0
	for _, line := range strings.Split(naive.String(), "\n") {
		var r audit.Record
		if json.Unmarshal([]byte(line), &r) == nil && r.Action == "sandbox.delete" {
			forgedLines++
		}
	}
	if forgedLines != 1 {
		t.Fatalf("positive control: the naive log holds %d forged records", forgedLines)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	r := e.exec(id, client.ExecRequest{Cmd: []string{"/bin/echo", payload}})
	if !strings.Contains(r.Stdout, forged) {
		t.Fatalf("the command did not get its argument: %+v", r)
	}
	if _, err := e.Client.WriteFile(ctxT(t, time.Minute), id, client.WriteRequest{Path: "/workspace/" + strings.ReplaceAll(payload, "/", "_")},
		strings.NewReader("x"), 1); err != nil {
		t.Logf("file named with the payload: %v", err)
	}
	e.stillServes(id)
	for _, rec := range e.records(audit.Query{}) {
		if rec.Action == "sandbox.delete" && rec.Actor == "admin" && rec.Sandbox == "" {
			t.Fatalf("the forged record became a record: %+v", rec)
		}
	}
	rep, err := audit.Verify(copyAuditDir(t, e.Env), nil)
	if err != nil {
		t.Fatalf("the log does not verify: %v", err)
	}
	intent := e.audited("the exec, payload inside", audit.Query{Sandbox: id, Action: "exec"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && bytes.Contains(r.Args, []byte(`sandbox.delete`))
	})
	if bytes.Contains(intent.Args, []byte("\n")) {
		t.Fatalf("a raw newline inside a record: %s", intent.Args)
	}
	t.Logf("log verifies: %d records", rep.Records)
}

// copyAuditDir copies the live log (the env's own must not be touched).
func copyAuditDir(t *testing.T, e *testenv.Env) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "audit")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(e.AuditDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range ents {
		if en.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(e.AuditDir(), en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, en.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// An unauthenticated flood cannot fill the log: requests refused before
// authentication are counted in the metrics, not recorded; authenticated
// ones are each recorded.
func TestAuditUnauthenticatedFlood(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	size := func() int64 {
		var n int64
		segs, _ := filepath.Glob(filepath.Join(e.AuditDir(), "audit-*.jsonl"))
		for _, s := range segs {
			if fi, err := os.Stat(s); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	// Control: authenticated requests are recorded, two records each.
	before := len(e.records(audit.Query{Action: audit.ActionHTTP}))
	for i := 0; i < 20; i++ {
		if status, _ := call(t, e.Server.URL, "GET", "/v1/sandboxes", e.AdminKey, nil); status != 200 {
			t.Fatal(status)
		}
	}
	if got := len(e.records(audit.Query{Action: audit.ActionHTTP})) - before; got != 40 {
		t.Fatalf("positive control: 20 authenticated requests made %d records, want 40", got)
	}
	sizeBefore := size()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	for i := 0; i < 2000; i++ {
		req, _ := http.NewRequest("GET", e.Server.URL+"/v1/sandboxes", nil)
		req.Header.Set("Authorization", fmt.Sprintf("Bearer pdk_%032d", i))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("a made-up key: %d", resp.StatusCode)
		}
	}
	if grown := size() - sizeBefore; grown != 0 {
		t.Fatalf("2000 unauthenticated requests grew the log by %d bytes", grown)
	}
	if !strings.Contains(e.MetricsText(), `status="401"`) {
		t.Fatal("the refusals are not counted")
	}
	e.stillServes()
	e.httpAudited("GET /v1/sandboxes", 200)
}

// One enormous command line (900 KiB in 100 arguments): the command gets
// all of it, its record is cut to a bounded size (with a hash of what was
// cut).
func TestAuditHugeArgumentBounded(t *testing.T) {
	argv := []string{"/bin/sh", "-c", `printf %s "$@" | wc -c`, "sh"}
	total := 0
	for i := 0; i < 100; i++ {
		a := strings.Repeat(string(rune('A'+i%26)), 9<<10)
		argv = append(argv, a)
		total += len(a)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	// Control: the sandboxed command receives the whole command line.
	r := e.exec(id, client.ExecRequest{Cmd: argv})
	if strings.TrimSpace(r.Stdout) != fmt.Sprint(total) {
		t.Fatalf("positive control: the command got %q bytes, want %d", r.Stdout, total)
	}
	e.stillServes(id)
	rec := e.audited("the exec of the huge argument", audit.Query{Sandbox: id, Action: "exec"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && bytes.Contains(r.Args, []byte("wc -c"))
	})
	line, _ := json.Marshal(rec)
	if len(line) > 80<<10 {
		t.Fatalf("the record is %d bytes: not bounded", len(line))
	}
	t.Logf("a %d-byte command line recorded in %d bytes", total, len(line))
}

// kill -9 of the server in the middle of an action: the log verifies,
// the action's intent is there, the next start carries on the chain.
// (The control: a byte changed in the same log is caught.)
func TestAuditKillMidAction(t *testing.T) {
	s := startServer(t, serverOptions{})
	id := s.create(client.Spec{})
	started := make(chan struct{})
	go func() {
		close(started)
		_, _ = s.c.Exec(ctxT(t, time.Minute), id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", "echo mid-action; sleep 30"}})
	}()
	<-started
	waitFor(10*time.Second, func() bool { return bytes.Contains(readAll(t, s.auditDir()), []byte("mid-action")) })
	s.kill9()
	rep, err := audit.Verify(s.auditDir(), nil)
	if err != nil {
		t.Fatalf("after kill -9 mid-action the log does not verify: %v", err)
	}
	if !bytes.Contains(readAll(t, s.auditDir()), []byte("mid-action")) {
		t.Fatal("the interrupted action's intent is not in the log")
	}
	t.Logf("after kill -9: %d records, unsigned tail %d", rep.Records, rep.UnsignedTail)
	// Control: tampering with the same log is caught.
	tampered := filepath.Join(t.TempDir(), "audit")
	copyDir(t, s.auditDir(), tampered)
	seg, _ := filepath.Glob(filepath.Join(tampered, "audit-*.jsonl"))
	b, _ := os.ReadFile(seg[0])
	_ = os.WriteFile(seg[0], bytes.Replace(b, []byte("mid-action"), []byte("mid-actioN"), 1), 0o600)
	if _, err := audit.Verify(tampered, nil); err == nil {
		t.Fatal("positive control: a changed record verified")
	}
	s.start()
	s.stillServes(id)
	s.stop()
	if code, out := s.verify(); code != 0 {
		t.Fatalf("after the restart `paddock audit verify` fails:\n%s", out)
	}
}

// readAll concatenates the segments of an audit directory.
func readAll(t *testing.T, dir string) []byte {
	t.Helper()
	var out []byte
	segs, _ := filepath.Glob(filepath.Join(dir, "audit-*.jsonl"))
	for _, s := range segs {
		b, _ := os.ReadFile(s)
		out = append(out, b...)
	}
	return out
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(src)
	for _, en := range ents {
		if en.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(src, en.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, en.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// From inside a sandbox the log cannot be found, read or written: it is
// not in the sandbox's mount namespace, and the host's processes are not
// in its pid namespace.
func TestAuditSandboxCannotReachLog(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	segs, _ := filepath.Glob(filepath.Join(e.AuditDir(), "audit-*.jsonl"))
	if len(segs) == 0 {
		t.Fatal("no segment")
	}
	// Control: the host reads it.
	if b, err := os.ReadFile(segs[0]); err != nil || !bytes.Contains(b, []byte(audit.ActionStart)) {
		t.Fatalf("positive control: the host cannot read the log: %v", err)
	}
	id := e.sandbox(client.Spec{})
	e.installProbe(id)
	r := e.sh(id, "", "cat "+segs[0]+"; ls "+e.AuditDir()+"; cat /proc/1/root"+segs[0]+"; find / -xdev \\( -name 'audit-*.jsonl' -o -name signing.key \\) 2>/dev/null; echo end")
	if strings.Contains(r.Stdout, audit.ActionStart) || strings.Contains(r.Stdout, ".jsonl") || strings.Contains(r.Stdout, "signing.key") {
		t.Fatalf("the sandbox reached the log: %s", r.Stdout)
	}
	if p, _ := e.probeIn(id, "", "write", segs[0], "{}\n"); p.OK {
		t.Fatal("the sandbox appended to the log")
	}
	e.stillServes(id)
	if _, err := audit.Verify(copyAuditDir(t, e.Env), nil); err != nil {
		t.Fatalf("the log does not verify: %v", err)
	}
	e.execAudited(id, "signing.key")
}

// Tampering after the fact — a changed byte, a removed record, a cut tail
// — is caught by verification and named; the untouched log verifies.
func TestAuditTamperingDetected(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	for i := 0; i < 5; i++ {
		e.sh(id, "", fmt.Sprintf("echo evidence-%d", i))
	}
	e.stillServes(id)
	e.execAudited(id, "evidence-4")
	// Let the signed head catch up with the records (interval sync: it is
	// rewritten after each fsync, every 10 ms).
	time.Sleep(300 * time.Millisecond)
	clean := copyAuditDir(t, e.Env)
	if _, err := audit.Verify(clean, nil); err != nil {
		t.Fatalf("positive control: the untouched log does not verify: %v", err)
	}
	seg := func(dir string) string {
		s, _ := filepath.Glob(filepath.Join(dir, "audit-*.jsonl"))
		return s[len(s)-1]
	}
	for name, tamper := range map[string]func([]byte) []byte{
		"a changed byte": func(b []byte) []byte { return bytes.Replace(b, []byte("evidence-2"), []byte("evidence-9"), 1) },
		"a removed record": func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			return bytes.Join(append(lines[:3:3], lines[4:]...), nil)
		},
		"a cut tail": func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			return bytes.Join(lines[:len(lines)-4], nil)
		},
	} {
		dir := filepath.Join(t.TempDir(), "audit")
		copyDir(t, clean, dir)
		b, _ := os.ReadFile(seg(dir))
		if err := os.WriteFile(seg(dir), tamper(b), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := audit.Verify(dir, nil)
		var bad *audit.BadRecord
		if !errors.As(err, &bad) {
			t.Errorf("%s: verification did not name a bad record: %v", name, err)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
}

// Secrets given to a command (environment, arguments, a key or token) reach
// the command but never the log.
func TestAuditSecretsRedacted(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	tok, err := e.Client.CreateToken(ctxT(t, time.Minute), id, []client.Scope{"read"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "hunter2-correct-horse", tok.Token, e.AdminKey}
	r := e.exec(id, client.ExecRequest{
		Cmd: []string{"/bin/sh", "-c", `echo "$GITHUB_TOKEN" "$1" "$2" "$3"`, "sh", "--password=" + secrets[1], "Authorization: Bearer " + secrets[2], "PADDOCK_API_KEY=" + secrets[3]},
		Env: map[string]string{"GITHUB_TOKEN": secrets[0]},
	})
	// Control: the command got every secret.
	for _, s := range secrets {
		if !strings.Contains(r.Stdout, s) {
			t.Fatalf("positive control: the command did not receive a secret: %q", r.Stdout)
		}
	}
	e.stillServes(id)
	e.execAudited(id, "GITHUB_TOKEN")
	all := readAll(t, e.AuditDir())
	for _, s := range secrets {
		if bytes.Contains(all, []byte(s)) {
			t.Errorf("a secret reached the audit log: %.12s…", s)
		}
	}
}
