//go:build linux

package kernel

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// groupStarter starts every process inside a cgroup v1 group (joined
// before exec), as the guest's spawner puts workloads in the sandbox's.
type groupStarter struct{ dir string }

func (g groupStarter) Start(s ProcSpec) (Process, error) {
	args := append([]string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, g.dir, s.Path}, s.Args[1:]...)
	return ExecStarter{}.Start(ProcSpec{Path: "/bin/sh", Args: args, Env: s.Env, Dir: s.Dir,
		Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr, ExtraFiles: s.ExtraFiles})
}

// A cell that forks a thousand processes meets the pids limit: the fork
// fails inside the cell, the kernel survives (or, if the limit starves
// the kernel itself, its death is reported) and the next cell runs.
func TestForkBombMeetsPidsLimit(t *testing.T) {
	needPython(t)
	root := "/sys/fs/cgroup/pids"
	if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
		t.Skip("needs a cgroup v1 pids hierarchy at /sys/fs/cgroup/pids")
	}
	dir := filepath.Join(root, "paddock-kernel-pids-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a pids cgroup (needs root): %v", err)
	}
	t.Cleanup(func() {
		for range 100 {
			if err := syscall.Rmdir(dir); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("could not remove %s", dir)
	})
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte("64"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSup(t, func(c *Config) { c.Starter = groupStarter{dir: dir} })
	id := newCtx(t, s, "python")
	r := execute(t, s, codewire.ExecuteRequest{Context: id, Code: `
import subprocess
ps = []
try:
    for i in range(1000):
        ps.append(subprocess.Popen(["sleep", "30"]))
except OSError as e:
    print("stopped at", len(ps), type(e).__name__)
for p in ps:
    p.kill()
    p.wait()
`})
	if r.err != nil {
		t.Fatal(r.err)
	}
	switch r.end.Status {
	case codewire.StatusOK:
		if !strings.HasPrefix(r.stdout(), "stopped at ") {
			t.Fatalf("the limit did not stop the forks: %q", r.stdout())
		}
	case codewire.StatusDied:
		t.Logf("the kernel died under the limit, reported: %s", r.end.Message)
	default:
		t.Fatalf("end %+v, stdout %q, error %+v", r.end, r.stdout(), r.errEvent())
	}
	if r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "6*7"}); r.mainText() != `"42"` {
		t.Errorf("next cell: %s", r.mainText())
	}
}
