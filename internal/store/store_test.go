package store

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The database and the files SQLite makes beside it (-wal, -shm) are
// 0600 whatever the umask: they hold every sandbox's spec, env values
// included (issue 14: they were 0644).
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, which let SQLite make 0644 files
	defer syscall.Umask(old)
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL().ExecContext(context.Background(), `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"paddock.db", "paddock.db-wal", "paddock.db-shm"} {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %#o, want 0600", n, m)
		}
	}
}
