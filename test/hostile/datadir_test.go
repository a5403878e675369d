//go:build linux

package hostile

// Data directory permissions (issue 14, local information disclosure): a
// data directory left 0755 was kept and the SQLite files were 0644, so
// any local user read every sandbox's spec, env values included; the
// audit signing key was never checked. At start the server makes its
// directories 0700 and its keys and databases 0600 (logging and
// recording each change), and refuses a directory another user owns,
// printing the command that fixes it.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

// asNobody runs a shell script as uid/gid 65534 (an ordinary local user
// of the host) and returns its output.
func asNobody(t *testing.T, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The attack: a local user reads the server's database (a sandbox's env
// value), its keys and the audit signing key. Positive control: with the
// modes an older release or a hand-made directory left (0755, 0644) the
// user reads them all. After a restart the modes are 0700/0600, the user
// reads nothing, the change is in the server's log and on the audit
// record, and the server (its sandbox included) still serves. A
// directory another user owns stops the server with the command that
// fixes it.
func TestDataDirPermissions(t *testing.T) {
	s := startServer(t, serverOptions{})
	mark := randomMarker("ENV-SECRET")
	id := s.create(client.Spec{Env: map[string]string{"API_TOKEN": mark}})
	s.stop()

	// The parent is the test's own 0700 directory: open it, as /var/lib
	// would be, so that only the data directory's own modes decide.
	must(t, os.Chmod(s.dir, 0o755))
	loosen := map[string]os.FileMode{".": 0o755, "audit": 0o755, "run": 0o755}
	for _, f := range []string{"paddock.db", "paddock.db-wal", "paddock.db-shm", "token.key", "secrets.key", "audit/signing.key", "audit/head.json"} {
		loosen[f] = 0o644
	}
	var present []string
	for p, m := range loosen {
		if err := os.Chmod(filepath.Join(s.data, p), m); err == nil {
			present = append(present, p)
		} else if !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	var read string
	for _, f := range []string{"paddock.db", "paddock.db-wal", "token.key", "audit/signing.key"} {
		read += "cat " + filepath.Join(s.data, f) + " 2>&1; "
	}
	out, _ := asNobody(t, read)
	if !strings.Contains(out, mark) || !strings.Contains(out, "PRIVATE KEY") {
		t.Fatalf("positive control: a local user reads the open data directory (the env value and the signing key): %s", clipS(out))
	}

	s.start()
	for _, p := range present {
		want := os.FileMode(0o600)
		if loosen[p] == 0o755 {
			want = 0o700
		}
		fi, err := os.Stat(filepath.Join(s.data, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s after the start: %#o, want %#o", p, fi.Mode().Perm(), want)
		}
	}
	out, _ = asNobody(t, read)
	if strings.Contains(out, mark) || strings.Contains(out, "PRIVATE KEY") || !strings.Contains(out, "Permission denied") {
		t.Errorf("a local user after the start: %s", clipS(out))
	}
	if !strings.Contains(s.log(), "a mode was too open; fixed") {
		t.Errorf("the server's log does not say what it fixed:\n%s", s.log())
	}
	s.stillServes(id)
	// On the record: every path fixed.
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must(t, s.c.AuditExport(ctx, client.AuditQuery{Action: "server.permissions"}, &buf))
	var rec audit.Record
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if r, err := audit.ParseLine(line); err == nil && r.Action == "server.permissions" {
			rec = r
		}
	}
	for _, p := range present {
		if !bytes.Contains(rec.Args, []byte(filepath.Join(s.data, p))) && p != "." {
			t.Errorf("the server.permissions record does not name %s: %s", p, rec.Args)
		}
	}
	s.stop()

	// Owned by someone else: refused, with the fix in the message.
	must(t, os.Chown(s.data, 65534, 65534))
	msg, code := s.startFails()
	must(t, os.Chown(s.data, 0, 0))
	if code == 0 || !strings.Contains(msg, "owned by uid 65534") || !strings.Contains(msg, "chown 0:0 "+s.data) || !strings.Contains(msg, "chmod 700 "+s.data) {
		t.Errorf("a data directory of another user: exit %d: %s", code, lastLines(msg, 5))
	}
	s.start()
	s.stillServes(id)
}
