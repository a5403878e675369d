package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/sandbox"
)

func openTest(t testing.TB, dir string, o Options) *Log {
	t.Helper()
	o.Dir = dir
	l, err := Open(o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l
}

func mustAppend(t testing.TB, l *Log, e Entry) Record {
	t.Helper()
	r, err := l.Append(context.Background(), e)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return r
}

// writeLog makes a closed log in dir with n exec records (plus the log's
// own start/stop/checkpoint records).
func writeLog(t testing.TB, dir string, n int, o Options) {
	t.Helper()
	l := openTest(t, dir, o)
	for i := 0; i < n; i++ {
		mustAppend(t, l, Entry{Action: "exec", Phase: PhaseIntent, Actor: "admin", Tenant: "default", Sandbox: "sb1",
			Args: map[string]any{"argv": []string{"echo", "hello", string(rune('a' + i%26))}}})
	}
	if err := l.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func segPath(dir string, idx int) string { return filepath.Join(dir, SegmentName(idx)) }

func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.Split(b, []byte("\n"))
}

func writeLines(t testing.TB, path string, lines [][]byte) {
	t.Helper()
	out := append(bytes.Join(lines, []byte("\n")), '\n')
	if len(lines) == 0 {
		out = nil
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustVerify(t testing.TB, dir string) *Report {
	t.Helper()
	rep, err := Verify(dir, nil)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

var fixedTime = mustTime("2026-12-01T10:00:00Z")

func mustTime(s string) (t time.Time) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func sandboxEvent(phase string, data map[string]any) sandbox.Event {
	return sandbox.Event{Kind: "exec", Phase: phase, Tenant: "default", Actor: "admin", Sandbox: "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa",
		Data: data, Duration: time.Millisecond}
}
