package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A full disk refuses records (the caller then refuses the action) and
// leaves the file on a record boundary; once space is back the log goes on
// and records the gap.
func TestFullDiskFailsThenRecovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tiny tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k,mode=0700"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	l := openTest(t, dir, Options{Sync: SyncAlways})
	mustAppend(t, l, Entry{Action: "exec", Phase: PhaseIntent})
	// Positive control above; now fill the filesystem.
	out, err := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(dir, "filler"), "bs=4k").CombinedOutput()
	if err == nil {
		t.Fatalf("dd should stop at ENOSPC: %s", out)
	}
	var failed int
	for i := 0; i < 5; i++ {
		if _, err := l.Append(context.Background(), Entry{Action: "exec", Phase: PhaseIntent, Args: map[string]string{"pad": strings.Repeat("x", 3000)}}); err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("appends to a full disk must fail")
	}
	os.Remove(filepath.Join(dir, "filler"))
	mustAppend(t, l, Entry{Action: "exec", Phase: PhaseIntent})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, dir)
	var gap bool
	for _, ln := range readLines(t, segPath(dir, 1)) {
		r, _ := ParseLine(ln)
		if r.Action == ActionGap && bytes.Contains(r.Args, []byte(fmt.Sprintf(`"lost":%d`, failed))) {
			gap = true
		}
	}
	if !gap {
		t.Fatalf("gap not recorded (%d failed); %+v", failed, rep)
	}
}
