//go:build linux

package native_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// nsOwner is the host uid owning the user namespace of process pid.
func nsOwner(t *testing.T, pid int) int {
	t.Helper()
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var uid uint32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.NS_GET_OWNER_UID, uintptr(unsafe.Pointer(&uid))); e != 0 {
		t.Fatalf("NS_GET_OWNER_UID: %v", e)
	}
	return int(uid)
}

// pidInUserns finds a host process whose user namespace is ns (a
// readlink of /proc/*/ns/user, e.g. "user:[4026532]").
func pidInUserns(t *testing.T, ns string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/" + d.Name() + "/ns/user"); err == nil && l == ns {
			return pid
		}
	}
	t.Fatalf("no host process in %s", ns)
	return 0
}

// TestUsernsOwner: each sandbox's user namespace is owned by the
// sandbox's own host uid, so the kernel charges its per-user counters
// (inotify, fanotify, namespaces) to it and never to host root. The
// positive control is a user namespace made the ordinary way by this
// root process: owned by root.
func TestUsernsOwner(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	owner := nsOwner(t, cmd.Process.Pid)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if owner != 0 {
		t.Fatalf("positive control: a user namespace cloned by root is owned by %d", owner)
	}

	e := testenv.New(t, testenv.Options{})
	seen := map[int]bool{}
	for range 2 {
		sb := e.Create(sandbox.Spec{})
		base := uidMap(t, e, sb.ID)[1]
		ns := strings.TrimSpace(e.Exec(sb.ID, "readlink", "/proc/self/ns/user").Stdout)
		got := nsOwner(t, pidInUserns(t, ns))
		if got != base {
			t.Fatalf("sandbox %s: user namespace owned by %d, want its uid base %d", sb.ID, got, base)
		}
		if seen[got] {
			t.Fatalf("two sandboxes share the owner %d", got)
		}
		seen[got] = true
		// The budgets the agent set inside (the sandbox's own counters).
		res := e.Sh(sb.ID, "cat /proc/sys/user/max_inotify_instances /proc/sys/user/max_inotify_watches /proc/sys/user/max_mnt_namespaces")
		if f := strings.Fields(res.Stdout); len(f) != 3 || f[0] != "128" || f[1] != "65536" || f[2] != "0" {
			t.Errorf("sandbox budgets = %q, want 128 65536 0", res.Stdout)
		}
	}
	// Reading this process's own credentials: the thread that spawned the
	// guests changed only itself.
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(statusField(string(st), "Uid")); len(f) == 0 || f[1] != "0" {
		t.Fatalf("the server's credentials changed: Uid %v", f)
	}
}
