//go:build linux

package hostile

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestInotifyPerSandbox (issue 14 item 7, the shared-ucounts class):
// sandbox A of one tenant makes inotify instances until the kernel
// refuses and holds them; meanwhile host root (this test process), a
// sandbox B of another tenant and the files watch API on B still get
// theirs. The kernel charges a user namespace's use to the namespace's
// owner too: each sandbox's namespace must be owned by its own uid.
func TestInotifyPerSandbox(t *testing.T) {
	nativeOnly(t, "the shared counters are the host kernel's per-user ucounts, charged through each sandbox's host user namespace; under gVisor inotify instances and watches are gVisor's own objects, counted inside each sandbox's sentry, and no host user namespace is made")
	e := newEnv(t, testenv.Options{})
	ca := e.as(e.tenantKey("inotify-a", client.Quotas{}).Key)
	cb := e.as(e.tenantKey("inotify-b", client.Quotas{}).Key)
	sa, err := ca.Create(ctxT(t, time.Minute), client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	sbB, err := cb.Create(ctxT(t, time.Minute), client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := sa.ID, sbB.ID
	_, bin := probeBinary(t)
	for _, x := range []struct {
		c  *client.Client
		id string
	}{{ca, a}, {cb, b}} {
		if _, err := x.c.WriteFile(ctxT(t, time.Minute), x.id, client.WriteRequest{Path: probePath, Mode: "0755"},
			bytes.NewReader(bin), int64(len(bin))); err != nil {
			t.Fatalf("upload the probe: %v", err)
		}
	}
	sh := func(c *client.Client, id, script string) string {
		t.Helper()
		res, err := c.Exec(ctxT(t, time.Minute), id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", script}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("exec %q in %s: %+v %v", script, id, res, err)
		}
		return res.Stdout
	}

	// Posture: each namespace is owned by its sandbox's host uid base.
	for id, c := range map[string]*client.Client{a: ca, b: cb} {
		base := strings.Fields(sh(c, id, "cat /proc/self/uid_map"))
		ns := strings.TrimSpace(sh(c, id, "readlink /proc/self/ns/user"))
		if len(base) != 3 {
			t.Fatalf("uid_map of %s: %q", id, base)
		}
		if got := usernsOwner(t, ns); strconv.Itoa(got) != base[1] {
			t.Fatalf("sandbox %s: user namespace owned by host uid %d, want its own uid %s", id, got, base[1])
		}
	}

	reports := during(t, ca, []string{a}, []string{"inotify-hold", "100000", "8"}, func() {
		time.Sleep(3 * time.Second) // A holds all it could make
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			t.Errorf("host root cannot make an inotify instance while sandbox A holds its own: %v", err)
		} else {
			unix.Close(fd)
		}
		res, err := cb.Exec(ctxT(t, time.Minute), b, client.ExecRequest{Cmd: []string{probePath, "inotify-hold", "16", "0"}})
		if r := lastReport(res.Stdout); err != nil || !r.OK || r.Count != 16 {
			t.Errorf("sandbox B (another tenant) cannot make 16 inotify instances: %+v %v %q", r, err, res.Stderr)
		}
		w, err := cb.WatchFiles(ctxT(t, time.Minute), b, client.WatchRequest{Path: "/workspace"})
		if err != nil {
			t.Errorf("the watch API on sandbox B fails: %v", err)
			return
		}
		defer w.Close()
		ev, err := w.Next()
		if err != nil || ev.Type != "ready" {
			t.Errorf("the watch on sandbox B did not start: %+v %v", ev, err)
		}
		sh(cb, b, "touch /workspace/inotify-witness")
		if ev, err = w.Next(); err != nil || !strings.Contains(ev.Path, "inotify-witness") {
			t.Errorf("the watch on sandbox B reports no change: %+v %v", ev, err)
		}
	})
	// Positive control: A really exhausted its budget (the kernel said
	// EMFILE after the 128 instances of the agent's budget, less any the
	// agent itself holds).
	r := reports[0]
	t.Logf("sandbox A: %+v", r)
	if r.OK || r.Errno != "EMFILE" || r.Count < 64 || r.Count > 128 {
		t.Fatalf("positive control: sandbox A did not exhaust its inotify budget: %+v", r)
	}
	e.stillServes()
	for id, c := range map[string]*client.Client{a: ca, b: cb} {
		if out := sh(c, id, "echo still-alive"); out != "still-alive\n" {
			t.Fatalf("after the attack %s answers %q", id, out)
		}
	}
	e.execAudited(a, "inotify-hold")
}

// usernsOwner is the host uid owning the user namespace ns (as readlink
// of /proc/<pid>/ns/user shows it), read with NS_GET_OWNER_UID from a
// host process in it.
func usernsOwner(t *testing.T, ns string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ents {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		p := "/proc/" + d.Name() + "/ns/user"
		if l, err := os.Readlink(p); err != nil || l != ns {
			continue
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // it exited
		}
		var uid uint32
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.NS_GET_OWNER_UID, uintptr(unsafe.Pointer(&uid)))
		unix.Close(fd)
		if e != 0 {
			t.Fatalf("NS_GET_OWNER_UID: %v", e)
		}
		return int(uid)
	}
	t.Fatalf("no host process in %s", ns)
	return 0
}
