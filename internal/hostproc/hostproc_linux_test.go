package hostproc

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestStartTimeAndWait(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := StartTime(cmd.Process.Pid)
	if err != nil || st == 0 {
		t.Fatalf("StartTime: %d %v", st, err)
	}
	if again, _ := StartTime(cmd.Process.Pid); again != st {
		t.Fatalf("the start time changed: %d then %d", st, again)
	}
	self, _ := StartTime(os.Getpid())
	if self == st {
		t.Fatalf("two processes with one start time %d", st)
	}
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Skipf("pidfd_open: %v", err)
	}
	defer unix.Close(fd)
	if WaitPidfd(fd, 10*time.Millisecond) {
		t.Fatal("a running process reported as exited")
	}
	if !WaitPidfd(fd, 5*time.Second) {
		t.Fatal("the process did not exit")
	}
	_ = cmd.Wait()
	if _, err := StartTime(-1); err == nil {
		t.Fatal("StartTime of no process")
	}
}
