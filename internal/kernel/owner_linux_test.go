//go:build linux

package kernel

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// uidStarter runs every process as another user, as the guest runs
// kernels as the sandbox's user.
type uidStarter struct{ uid, gid uint32 }

func (u uidStarter) Start(s ProcSpec) (Process, error) {
	cmd := &exec.Cmd{Path: s.Path, Args: s.Args, Env: s.Env, Dir: s.Dir, ExtraFiles: s.ExtraFiles,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid}}}
	if s.Stdout != nil {
		cmd.Stdout = s.Stdout
	}
	if s.Stderr != nil {
		cmd.Stderr = s.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &execProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exit = exitOf(cmd.ProcessState, err)
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Kernels running as another uid read their connection files and cells
// because the supervisor gives them to Config.Owner.
func TestKernelsAsAnotherUser(t *testing.T) {
	needPython(t)
	needBash(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run kernels as another user")
	}
	const nobody = 65534
	s := newSup(t, func(c *Config) {
		c.Starter = uidStarter{nobody, nobody}
		c.Owner = &Owner{UID: nobody, GID: nobody}
		c.StateDir = "" // its own, under /tmp (the test's temp dirs are root's, 0700)
		c.Cwd = "/tmp"
		c.Env = append(os.Environ(), "HOME=/tmp")
	})
	r := mustOK(t, s, codewire.ExecuteRequest{Code: "import os\nos.getuid()"})
	if r.mainText() != `"65534"` {
		t.Errorf("python uid %s", r.mainText())
	}
	r = mustOK(t, s, codewire.ExecuteRequest{Language: "bash", Code: "id -u", Env: map[string]string{"X": "1"}})
	if r.stdout() != "65534\n" {
		t.Errorf("bash uid %q", r.stdout())
	}
	// Without Owner the kernel cannot read its connection file: the
	// start fails with a reason instead of hanging.
	s2 := newSup(t, func(c *Config) {
		c.Starter = uidStarter{nobody, nobody}
		c.StateDir = ""
		c.Cwd = "/tmp"
		c.Env = append(os.Environ(), "HOME=/tmp")
	})
	if r := execute(t, s2, codewire.ExecuteRequest{Code: "1"}); r.err == nil {
		t.Error("a kernel that cannot read its connection file started")
	} else {
		t.Logf("as expected: %v", r.err)
	}
}
