package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestAuditScripts runs testdata/audit/*.txtar against a real server, with
// $PADDOCK_DATA its data directory (for the offline verify).
func TestAuditScripts(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	testscript.Run(t, testscript.Params{
		Dir: "testdata/audit",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PADDOCK_URL", e.Server.URL)
			env.Setenv("PADDOCK_API_KEY", e.AdminKey)
			env.Setenv("PADDOCK_DATA", e.Data)
			return nil
		},
	})
}

// runCLI runs the paddock command line in-process.
func runCLI(args ...string) (stdout, stderr string, err error) {
	var o, eb bytes.Buffer
	root := newRoot(&env{stdin: strings.NewReader(""), stdout: &o, stderr: &eb})
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return o.String(), eb.String(), err
}

// `paddock audit verify` on a log written by the audit package (no
// server): the control passes; each tampering fails naming the record.
func TestAuditVerifyCommand(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "audit")
	l, err := audit.Open(audit.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := l.Append(context.Background(), audit.Entry{Action: "exec", Phase: audit.PhaseIntent, Args: map[string]int{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI("audit", "verify", "--data", data)
	if err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("control: %v\n%s", err, out)
	}
	// The audit directory itself is accepted too.
	if _, _, err := runCLI("audit", "verify", "--data", dir); err != nil {
		t.Fatalf("verify --data AUDITDIR: %v", err)
	}
	seg := filepath.Join(dir, audit.SegmentName(1))
	b, _ := os.ReadFile(seg)
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	lines[7] = bytes.Replace(lines[7], []byte(`"i":6`), []byte(`"i":7`), 1)
	os.WriteFile(seg, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600)
	_, _, err = runCLI("audit", "verify", "--data", data)
	if err == nil || !strings.Contains(err.Error(), "seq 8 (audit-00000001.jsonl line 8)") {
		t.Fatalf("edited record: %v", err)
	}
}
