//go:build linux

package native_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// The run directory's tmpfs stays while a sandbox runs (a restarted server
// reattaches through its sockets) and goes with the last one.
func TestRunDirUnmountedWhenIdle(t *testing.T) {
	mounted := func(dir string) bool {
		b, err := os.ReadFile("/proc/self/mounts")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[1] == dir {
				return true
			}
		}
		return false
	}
	// A sandbox alive at shutdown keeps the mount.
	e := testenv.New(t, testenv.Options{})
	run := filepath.Join(e.Data, "run")
	sb := e.Create(sandbox.Spec{})
	if !mounted(run) {
		t.Fatal("positive control: the run directory is not a mount while the server runs")
	}
	// A server exit: sandboxes stay.
	e.Server.Close()
	_ = e.Manager.Close(t.Context())
	e.Manager = nil
	e.Shutdown()
	if !mounted(run) {
		t.Fatal("the run directory went while a sandbox still ran")
	}
	// The next stack on the same data reattaches; once it is deleted and
	// the stack closes, the mount goes.
	e2 := testenv.New(t, testenv.Options{DataDir: e.Data, CgroupPrefix: e.Prefix, UIDBase: e.UIDBase})
	if r := e2.Exec(sb.ID, "/bin/true"); r.ExitCode != 0 {
		t.Fatalf("the sandbox was not reattached: %+v", r)
	}
	e2.Close()
	if mounted(run) {
		t.Error("the run directory is still mounted after the last sandbox and the server are gone")
	}
}
