//go:build linux

package hostile

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Which kernel serves the sandbox's system calls (issue 18's Show: a
// kernel-surface probe). membarrier(MEMBARRIER_CMD_QUERY) is an unusual
// call the native seccomp filter allows; its answer is the serving
// kernel's list of barrier commands, and uname(2) its release. On native
// both are the host kernel's (the workload talks to it); on gVisor both
// are gVisor's, never the host's.
func TestKernelSurface(t *testing.T) {
	hostBarriers, _, en := unix.Syscall(unix.SYS_MEMBARRIER, 0, 0, 0)
	if en != 0 {
		t.Skipf("this kernel has no membarrier(2): %v", en)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	host := fmt.Sprintf("%#x %s", hostBarriers, unix.ByteSliceToString(u.Release[:]))
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	r := e.exec(id, client.ExecRequest{Cmd: []string{"python3", "-c",
		"import ctypes, os; print(hex(ctypes.CDLL(None).syscall(324, 0, 0)), os.uname().release)"}})
	inside := strings.TrimSpace(r.Stdout)
	if r.ExitCode != 0 || inside == "" {
		t.Fatalf("the probe did not run: %+v", r)
	}
	t.Logf("host kernel: %s; the sandbox's: %s", host, inside)
	hostRel, inRel := strings.Fields(host)[1], strings.Fields(inside)[1]
	if !onGVisor(t) {
		// Positive control: natively the call reaches the host's kernel.
		if inside != host {
			t.Fatalf("native sandbox: the kernel that answered is not the host's: %q, host %q", inside, host)
		}
		return
	}
	if inRel == hostRel {
		t.Fatalf("gVisor sandbox: uname answers the host's release %q", hostRel)
	}
	if strings.Fields(inside)[0] == strings.Fields(host)[0] {
		t.Fatalf("gVisor sandbox: membarrier answers the host kernel's command set %s", strings.Fields(host)[0])
	}
	e.stillServes(id)
}
