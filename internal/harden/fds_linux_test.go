package harden

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A descriptor opened without close-on-exec reaches a child; after
// CloseOnExecAll it does not, while a file handed over explicitly
// (ExtraFiles) still does, and 0-2 are untouched.
func TestCloseOnExecAll(t *testing.T) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0) // no O_CLOEXEC: leaks
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	child := func(extra ...*os.File) string {
		cmd := exec.Command("/bin/sh", "-c", "ls /proc/$$/fd")
		cmd.ExtraFiles = extra
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return " " + strings.Join(strings.Fields(string(out)), " ") + " "
	}
	n := " " + strconv.Itoa(fd) + " "
	if !strings.Contains(child(), n) {
		t.Fatalf("positive control: the child does not have fd %d", fd)
	}
	if err := CloseOnExecAll(); err != nil {
		t.Fatal(err)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("fd %d flags %#x %v", fd, flags, err)
	}
	for _, std := range []int{0, 1, 2} {
		if flags, err := unix.FcntlInt(uintptr(std), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC != 0 {
			t.Errorf("fd %d was marked too", std)
		}
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := child(f)
	if strings.Contains(got, n) && fd != 3 {
		t.Errorf("the child still has fd %d: %s", fd, got)
	}
	if !strings.Contains(got, " 3 ") {
		t.Errorf("the file handed over is not on fd 3: %s", got)
	}
}
