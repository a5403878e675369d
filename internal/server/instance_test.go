package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/store"
)

// The cgroup prefix when none is set: the instance's own for a new data
// directory, kept across starts; the legacy one for a data directory
// whose store already holds sandboxes (their groups are under it); the
// configured one always wins.
func TestChooseCgroupPrefix(t *testing.T) {
	open := func(t *testing.T, dir string, sandboxes bool) *Server {
		t.Helper()
		db, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if sandboxes {
			if _, err := db.SQL().Exec(`INSERT INTO sandboxes (id, tenant, state, template, spec, created_at, expires_at) VALUES ('sb-x', 'default', 'running', 'host', '{}', 0, 0)`); err != nil {
				t.Fatalf("plant a sandbox row: %v", err)
			}
		}
		return &Server{cfg: Config{DataDir: dir}, Store: db}
	}
	ctx := context.Background()

	dir := t.TempDir()
	s := open(t, dir, false)
	p, err := s.chooseCgroupPrefix(ctx)
	if want := "paddock-" + network.InstanceID(dir); err != nil || p != want {
		t.Fatalf("new data directory: %q %v, want %q", p, err, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, cgroupPrefixFile)); strings.TrimSpace(string(b)) != p {
		t.Errorf("not recorded: %q", b)
	}
	if again, _ := s.chooseCgroupPrefix(ctx); again != p {
		t.Errorf("second start: %q", again)
	}

	old := t.TempDir()
	if p, err := open(t, old, true).chooseCgroupPrefix(ctx); err != nil || p != LegacyCgroupPrefix {
		t.Errorf("data directory with sandboxes from before: %q %v", p, err)
	}

	set := &Server{cfg: Config{DataDir: t.TempDir(), CgroupPrefix: "mine"}}
	if p, err := set.chooseCgroupPrefix(ctx); err != nil || p != "mine" {
		t.Errorf("configured: %q %v", p, err)
	}
}
