//go:build linux

package kubetest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// janitorEnv marks the test binary re-executed as the janitor.
const janitorEnv = "PADDOCK_KUBETEST_JANITOR"

// startJanitor starts a copy of the test binary that waits on a pipe and,
// if the pipe breaks without the word that the cluster was torn down
// (the test process panicked, timed out or was killed), removes the
// cluster's leftovers. It holds the host lock meanwhile (the lock's open
// file is shared with it), so the next cluster waits for it.
func (c *Cluster) startJanitor() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	self, err := os.Executable()
	if err != nil {
		w.Close()
		return err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), janitorEnv+"=1")
	cmd.ExtraFiles = []*os.File{r, c.lock} // fds 3 and 4
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// Its own session: neither a Ctrl-C nor the test's process group
	// reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("kubetest: janitor: %w", err)
	}
	c.janitor, c.jpipe = cmd, w
	return nil
}

// stopJanitor tells the janitor that teardown is done and waits for it.
func (c *Cluster) stopJanitor() {
	if c.janitor == nil {
		return
	}
	_, _ = c.jpipe.Write([]byte("done"))
	c.jpipe.Close()
	done := make(chan struct{})
	go func() { _ = c.janitor.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.janitor.Process.Kill()
		<-done
	}
	c.janitor = nil
}

func runJanitor() int {
	pipe := os.NewFile(3, "janitor-pipe")
	b, _ := io.ReadAll(pipe)
	if string(b) == "done" {
		return 0
	}
	r, err := loadRecord()
	if err != nil {
		return 0 // nothing recorded: nothing to do
	}
	fmt.Fprintf(os.Stderr, "kubetest janitor: the test process %d died; removing its cluster in %s\n", r.Owner, r.Dir)
	if probs := r.cleanup(); len(probs) > 0 {
		fmt.Fprintf(os.Stderr, "kubetest janitor: could not remove: %v\n", probs)
		return 1
	}
	_ = os.Remove(stateFile)
	return 0
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
