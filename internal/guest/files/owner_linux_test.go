//go:build linux

package files

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// TestWriteOwner: a write as root with an owner gives the file, and the
// parents it made, to that user; existing parents keep theirs. Only root
// gives files away.
func TestWriteOwner(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	f := filepath.Join(d, "made/deeper/x.txt")
	if _, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: f, Parents: true, Owner: guestapi.UserUser}, strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]uint32{f: 1000, filepath.Join(d, "made"): 1000, filepath.Join(d, "made/deeper"): 1000, d: 0} {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil || st.Uid != want || st.Gid != want {
			t.Errorf("%s: uid/gid %d/%d (%v), want %d", p, st.Uid, st.Gid, err, want)
		}
	}
	m := filepath.Join(d, "dir")
	if _, err := c.Mkdir(ctx, guestapi.MkdirRequest{Path: m, Owner: guestapi.UserUser}); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if syscall.Lstat(m, &st); st.Uid != 1000 {
		t.Errorf("mkdir with an owner: uid %d", st.Uid)
	}
	// Without an owner, a root write is root's (the control).
	g := filepath.Join(d, "root.txt")
	c.WriteFile(ctx, guestapi.WriteRequest{Path: g}, strings.NewReader("r"), 1)
	if syscall.Lstat(g, &st); st.Uid != 0 {
		t.Errorf("a root write without an owner: uid %d", st.Uid)
	}
	if _, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "made/y"), User: guestapi.UserUser, Owner: guestapi.UserRoot}, strings.NewReader("y"), 1); err == nil {
		t.Error("a user gave a file away")
	}
	if _, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: g, Owner: "bob"}, strings.NewReader("y"), 1); err == nil {
		t.Error("an unknown owner was accepted")
	}
}
