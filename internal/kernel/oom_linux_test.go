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

// memStarter is a Starter the way the guest supplies one: every process
// it starts runs in a memory-limited cgroup (v1 here), and an exit is
// reported as an OOM kill when the group's OOM-kill counter grew.
type memStarter struct{ dir string }

func (m memStarter) Start(s ProcSpec) (Process, error) {
	before := m.oomKills()
	p, err := groupStarter{dir: m.dir}.Start(s)
	if err != nil {
		return nil, err
	}
	return &memProc{Process: p, m: m, before: before}, nil
}

func (m memStarter) oomKills() int {
	b, _ := os.ReadFile(filepath.Join(m.dir, "memory.oom_control"))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

type memProc struct {
	Process
	m      memStarter
	before int
}

func (p *memProc) Exit() ExitStatus {
	st := p.Process.Exit()
	st.OOM = st.Signal == "SIGKILL" && p.m.oomKills() > p.before
	return st
}

func TestOOMReportedAndRestarted(t *testing.T) {
	needPython(t)
	root := "/sys/fs/cgroup/memory"
	if _, err := os.Stat(filepath.Join(root, "memory.limit_in_bytes")); err != nil {
		t.Skip("needs a cgroup v1 memory hierarchy at /sys/fs/cgroup/memory")
	}
	dir := filepath.Join(root, "paddock-kernel-oom-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup (needs root): %v", err)
	}
	t.Cleanup(func() {
		for range 50 {
			if err := syscall.Rmdir(dir); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("could not remove %s", dir)
	})
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte("268435456"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSup(t, func(c *Config) { c.Starter = memStarter{dir: dir} })
	id := newCtx(t, s, "python")
	mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "keep = 1"})
	r := execute(t, s, codewire.ExecuteRequest{Context: id, Code: "hog = ' ' * (1 << 30)"})
	if r.err != nil || r.end.Status != codewire.StatusDied || !r.end.StateLost || !strings.Contains(r.end.Message, "out of memory") {
		t.Fatalf("OOM cell: %v %+v", r.err, r.end)
	}
	r = execute(t, s, codewire.ExecuteRequest{Context: id, Code: "'keep' in dir()"})
	if r.err != nil || !r.start.StateLost || !strings.Contains(r.start.Reason, "out of memory") || r.mainText() != `"False"` {
		t.Fatalf("the cell after: %v %+v %s", r.err, r.start, r.mainText())
	}
}
