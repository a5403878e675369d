package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A data directory left open (0755, files 0644, as an older release or a
// hand-made directory had it) is closed: 0700 directories, 0600 keys,
// databases and audit segments; the public key stays readable; a new
// one is 0700. What another user owns, or a link where a key belongs, is
// refused with the command that fixes it, and the link's target is left
// alone.
func TestSecureDataDir(t *testing.T) {
	t.Run("fresh", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		fixes, err := secureDataDir(dir)
		if err != nil || len(fixes) != 0 {
			t.Fatalf("fresh: %v %v", fixes, err)
		}
		if m := mode(t, dir); m != 0o700 {
			t.Errorf("fresh data directory: %#o", m)
		}
	})
	t.Run("open modes are fixed", func(t *testing.T) {
		dir := t.TempDir()
		must(t, os.Chmod(dir, 0o755))
		for _, d := range []string{"audit", "run", "layers"} {
			must(t, os.Mkdir(filepath.Join(dir, d), 0o755))
		}
		files := map[string]os.FileMode{
			"paddock.db": 0o600, "paddock.db-wal": 0o600, "paddock.db-shm": 0o600, "admin.key": 0o600,
			"token.key": 0o600, "secrets.key": 0o600, "paddock.lock": 0o600,
			"audit/signing.key": 0o600, "audit/head.json": 0o600, "audit/000001.jsonl": 0o600,
			"audit/signing.pub": 0o644, // all an auditor needs: stays readable
			"notes.txt":         0o644, // not the server's to judge
		}
		for f := range files {
			must(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644))
			must(t, os.Chmod(filepath.Join(dir, f), 0o644)) // whatever the umask
		}
		fixes, err := secureDataDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for f, want := range files {
			if m := mode(t, filepath.Join(dir, f)); m != want {
				t.Errorf("%s: %#o, want %#o", f, m, want)
			}
		}
		for d, want := range map[string]os.FileMode{".": 0o700, "audit": 0o700, "run": 0o700, "layers": 0o755} {
			if m := mode(t, filepath.Join(dir, d)); m != want {
				t.Errorf("%s/: %#o, want %#o", d, m, want)
			}
		}
		if len(fixes) != 13 { // the directory, audit/, run/ and ten files
			t.Errorf("%d fixes reported: %+v", len(fixes), fixes)
		}
		for _, f := range fixes {
			if f.From != "0755" && f.From != "0644" || f.To != "0700" && f.To != "0600" {
				t.Errorf("fix %+v", f)
			}
		}
		if again, err := secureDataDir(dir); err != nil || len(again) != 0 {
			t.Errorf("second start: %v %v", again, err)
		}
	})
	if os.Geteuid() != 0 {
		t.Skip("the ownership cases need root (chown)")
	}
	for _, c := range []struct{ what, path string }{{"the directory", "."}, {"a key", "token.key"}, {"an audit segment", "audit/000001.jsonl"}} {
		t.Run("owned by another user: "+c.what, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.Mkdir(filepath.Join(dir, "audit"), 0o700))
			p := filepath.Join(dir, c.path)
			if c.path != "." {
				must(t, os.WriteFile(p, []byte("x"), 0o644))
			}
			must(t, os.Chown(p, 12345, 12345))
			_, err := secureDataDir(dir)
			if err == nil || !strings.Contains(err.Error(), "owned by uid 12345") || !strings.Contains(err.Error(), "chown 0:0 "+p) ||
				!strings.Contains(err.Error(), "chmod ") {
				t.Fatalf("want a refusal naming the owner and the fix, got %v", err)
			}
			t.Log(err)
		})
	}
	t.Run("a link where a key belongs", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(t.TempDir(), "elsewhere")
		must(t, os.WriteFile(target, []byte("x"), 0o644))
		must(t, os.Chmod(target, 0o644))
		must(t, os.Symlink(target, filepath.Join(dir, "admin.key")))
		if _, err := secureDataDir(dir); err == nil || !strings.Contains(err.Error(), "does not follow links") {
			t.Fatalf("want a refusal, got %v", err)
		}
		if m := mode(t, target); m != 0o644 {
			t.Errorf("the link's target was changed: %#o", m)
		}
	})
	t.Run("a linked data directory is followed", func(t *testing.T) {
		real := t.TempDir()
		must(t, os.Chmod(real, 0o755))
		link := filepath.Join(t.TempDir(), "data")
		must(t, os.Symlink(real, link))
		if _, err := secureDataDir(link); err != nil {
			t.Fatal(err)
		}
		if m := mode(t, real); m != 0o700 {
			t.Errorf("the linked directory: %#o", m)
		}
	})
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
