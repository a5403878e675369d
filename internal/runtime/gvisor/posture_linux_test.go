//go:build linux

package gvisor_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/harden"
)

// landlockProbe calls landlock_create_ruleset(NULL, 0,
// LANDLOCK_CREATE_RULESET_VERSION) and prints "<return> <errno>": the
// Landlock ABI version from a kernel that has Landlock, -1 and ENOSYS (38)
// from one that does not implement the system call.
const landlockProbe = `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(r, ctypes.get_errno())`

// TestPostureGVisor is the posture test's gVisor variant: what the sandbox
// sees of its kernel is gVisor's, and a system call that the native
// sandbox's seccomp filter lets through to the host kernel is answered by
// gVisor's kernel instead.
func TestPostureGVisor(t *testing.T) {
	e := newEnv(t, nil)
	inst := e.create(e.config())

	var host unix.Utsname
	if err := unix.Uname(&host); err != nil {
		t.Fatal(err)
	}
	hostRelease := unix.ByteSliceToString(host.Release[:])
	res := run(t, inst, "uname", "-r")
	if !strings.Contains(res.Stdout, "gvisor") || strings.Contains(res.Stdout, hostRelease) {
		t.Fatalf("uname -r in the sandbox = %q (host: %s), want gVisor's kernel", res.Stdout, hostRelease)
	}
	if res := sh(t, inst, "cat /proc/version"); strings.Contains(res.Stdout, hostRelease) {
		t.Fatalf("/proc/version shows the host kernel: %q", res.Stdout)
	}

	// The probe's syscall is not in the native filter's deny list, so in a
	// native sandbox it reaches the host kernel.
	if slices.Contains(harden.DeniedSyscalls(), "landlock_create_ruleset") {
		t.Fatal("the native seccomp filter denies landlock_create_ruleset: pick another probe")
	}
	// Positive control: unsandboxed, the host kernel answers with its ABI.
	out, err := exec.Command("/usr/bin/python3", "-c", landlockProbe).CombinedOutput()
	if err != nil {
		t.Skipf("no python3 for the probe: %v %s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] == "-1" {
		t.Skipf("the host kernel has no Landlock, so the probe proves nothing here: %q", out)
	}
	res = run(t, inst, "/usr/bin/python3", "-c", landlockProbe)
	if got := strings.Fields(res.Stdout); len(got) != 2 || got[0] != "-1" || got[1] != "38" {
		t.Fatalf("landlock_create_ruleset in gVisor = %q (host: %q), want -1 ENOSYS from gVisor's kernel", res.Stdout+res.Stderr, out)
	}

	// The agent applies no Landlock under gVisor (fsRules is native's):
	// new top-level directories and files take writes here too.
	if res := sh(t, inst, "mkdir /app && echo x > /app/f && echo y > /new.txt && cat /app/f /new.txt"); res.Stdout != "x\ny\n" {
		t.Fatalf("top-level writes under gVisor: %+v", res)
	}
}
