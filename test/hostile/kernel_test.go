//go:build linux

package hostile

// Group: process and kernel. Each case is one syscall-level attack, run by
// the probe natively (control) and inside a sandbox as its root — root of
// the sandbox's user namespace, the strongest position a workload has.

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Nested user namespaces: root over fresh namespaces, the precondition of
// most unprivileged kernel exploits (CVE-2022-0185, CVE-2023-32233).
func TestKernelNewUserNamespace(t *testing.T) {
	runProbeCase(t, probeCase{op: "userns", wantErrno: "EPERM"})
}

// mount(2) to remount or overmount masked paths.
func TestKernelMount(t *testing.T) {
	runProbeCase(t, probeCase{op: "mount", wantErrno: "EPERM"})
}

// A new network namespace (a way around the sandbox's egress rules).
func TestKernelNewNetworkNamespace(t *testing.T) {
	runProbeCase(t, probeCase{op: "netns", wantErrno: "EPERM"})
}

// setns into a namespace through a descriptor.
func TestKernelSetns(t *testing.T) {
	runProbeCase(t, probeCase{op: "setns", wantErrno: "EPERM"})
}

// ptrace of the guest agent (pid 1 of the sandbox), which holds the
// sandbox's control socket (CVE-2019-13272 class).
func TestKernelPtraceGuest(t *testing.T) {
	// Control: root natively attaches to a process of its own.
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	if n := native(t, "ptrace", strconv.Itoa(victim.Process.Pid)); !n.OK {
		t.Fatalf("positive control: ptrace natively failed: %+v", n)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.installProbe(id)
	r, res := e.probeIn(id, "", "ptrace", "1")
	if r.OK || r.Errno != "EPERM" {
		t.Fatalf("sandboxed ptrace of the guest: %+v %+v", r, res.ExecResult)
	}
	e.stillServes(id)
	e.execAudited(id, "ptrace")
}

// io_uring: its operations bypass seccomp (CVE-2022-29582, CVE-2023-2598).
func TestKernelIOUring(t *testing.T) {
	runProbeCase(t, probeCase{op: "iouring", wantErrno: "EPERM"})
}

// bpf: verifier bugs (CVE-2021-3490, CVE-2021-31440).
func TestKernelBPF(t *testing.T) {
	runProbeCase(t, probeCase{op: "bpf", wantErrno: "EPERM"})
}

// Keyrings are not namespaced (CVE-2016-0728).
func TestKernelKeyctl(t *testing.T) {
	runProbeCase(t, probeCase{op: "keyctl", wantErrno: "EPERM"})
}

// TIOCSTI: typing into a terminal shared with the outside (CVE-2016-7545).
func TestKernelTIOCSTI(t *testing.T) {
	runProbeCase(t, probeCase{op: "tiocsti", wantErrno: "EPERM"})
}

// TIOCSTI with bits above 32 set, which the kernel ignores but a careless
// filter compares (CVE-2019-10063).
func TestKernelTIOCSTIHighBits(t *testing.T) {
	runProbeCase(t, probeCase{op: "tiocsti", args: []string{"high"}, wantErrno: "EPERM"})
}

// perf_event_open (CVE-2013-2094, CVE-2023-6931).
func TestKernelPerfEvent(t *testing.T) {
	runProbeCase(t, probeCase{op: "perf", wantErrno: "EPERM"})
}

// userfaultfd: how kernel use-after-free races are won.
func TestKernelUserfaultfd(t *testing.T) {
	runProbeCase(t, probeCase{op: "userfaultfd", wantErrno: "EPERM"})
}

// open_by_handle_at: the Shocker escape (2014) opened host files by handle.
func TestKernelOpenByHandle(t *testing.T) {
	runProbeCase(t, probeCase{op: "handle", wantErrno: "EPERM"})
}

// The x32 syscall table, a way around a filter keyed on numbers: the
// sandbox kills the process (natively the kernel answers ENOSYS: no x32).
func TestKernelX32Syscall(t *testing.T) {
	if onGVisor(t) {
		x32GVisor(t)
		return
	}
	runProbeCase(t, probeCase{op: "x32", nativeErrno: nativeX32(t), wantSignal: "SIGSYS"})
}

// x32GVisor: gVisor implements seccomp's SECCOMP_RET_KILL_PROCESS as
// KILL_THREAD (any action it does not know). The filter's kill then ends
// only the calling thread: the call never runs (the probe never reports),
// and the rest of the process lives on until the exec's deadline kills it
// — the deadline must end it, whatever it does.
func x32GVisor(t *testing.T) {
	if n := nativeX32(t); n == "" {
		t.Fatalf("positive control: natively the x32 call returned: %+v", n)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.installProbe(id)
	res := e.exec(id, client.ExecRequest{Cmd: []string{probePath, "x32"}, TimeoutMs: 3000})
	if strings.Contains(res.Stdout, "{") {
		t.Fatalf("the x32 call returned inside gVisor: %q", res.Stdout)
	}
	if !res.TimedOut || res.Signal != "SIGKILL" {
		t.Fatalf("the exec's deadline did not end the probe: %+v", res.ExecResult)
	}
	e.stillServes(id)
	e.execAudited(id, "x32")
}

// nativeX32 is what this kernel answers an x32 syscall with ("" if it has
// the ABI), so that the control states it rather than assumes it.
func nativeX32(t *testing.T) string {
	return native(t, "x32").Errno
}

// The host clock is not namespaced (adjtimex, read-only mode).
func TestKernelClock(t *testing.T) {
	runProbeCase(t, probeCase{op: "adjtimex", wantErrno: "EPERM"})
}

// reboot(2): natively the kernel evaluates it (EINVAL for a bad magic).
func TestKernelReboot(t *testing.T) {
	runProbeCase(t, probeCase{op: "reboot", nativeErrno: "EINVAL", wantErrno: "EPERM"})
}

// Loading kernel code: natively the kernel evaluates it (EBADF for no
// file, or ENOSYS on a kernel built without modules).
func TestKernelLoadModule(t *testing.T) {
	n := native(t, "module")
	if n.OK || (n.Errno != "EBADF" && n.Errno != "ENOSYS") {
		t.Fatalf("positive control: finit_module(-1) natively gave %+v", n)
	}
	runProbeCase(t, probeCase{op: "module", nativeErrno: n.Errno, wantErrno: "EPERM"})
}

// A device node: a door to host devices (here /dev/null's numbers).
func TestKernelMknod(t *testing.T) {
	runProbeCase(t, probeCase{op: "mknod", wantErrno: "EPERM"})
}

// A setuid-root binary run by an ordinary user: no_new_privs, nosuid and
// the uid mapping each keep it from raising privileges (CVE-2021-4034
// class).
func TestKernelSetuidBinary(t *testing.T) {
	// Control: natively a setuid-root copy of id gives uid 1000 euid 0.
	dir, err := os.MkdirTemp("", "pdksuid") // a path uid 1000 can traverse
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	suid := filepath.Join(dir, "id")
	copyFile(t, "/usr/bin/id", suid)
	if err := syscall.Chmod(suid, 0o4755); err != nil { // os.Chmod would drop the setuid bit
		t.Fatal(err)
	}
	cmd := exec.Command(suid, "-u")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000}}
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("positive control: setuid id natively as uid 1000 printed %q (%v), want euid 0", out, err)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	if r := e.sh(id, "", "cp /usr/bin/id /workspace/suid-id && chmod 4755 /workspace/suid-id && ls -l /workspace/suid-id"); r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "-rwsr-xr-x") {
		t.Fatalf("making the setuid copy in the sandbox: %+v", r)
	}
	r := e.exec(id, client.ExecRequest{Cmd: []string{"/workspace/suid-id", "-u"}, User: "user"})
	if strings.TrimSpace(r.Stdout) != "1000" {
		t.Fatalf("sandboxed setuid binary gave euid %q (want 1000): %+v", r.Stdout, r)
	}
	e.stillServes(id)
	e.execAudited(id, "suid-id")
}

// kill -9 -1 as the sandbox's root: it may end the sandbox's own
// processes but never the agent, another sandbox, or a host process — not
// even one running as the very host uid the sandbox's root maps to.
func TestKernelKillEverything(t *testing.T) {
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	var hostUID int
	if onGVisor(t) {
		// The agent is a task of gVisor's kernel: the host process whose
		// uid the sandbox could share is the sentry.
		hostUID = e.sentryUID(id)
	} else {
		hostUID = e.guestUID(id)
	}
	// Control: natively `kill -9 -1` as a uid kills that uid's processes.
	const ctrlUID = 59999
	victim := sleeper(t, ctrlUID)
	killer := exec.Command("/bin/sh", "-c", "kill -9 -1")
	killer.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ctrlUID, Gid: ctrlUID}}
	_ = killer.Run()
	if !exited(victim, 5*time.Second) {
		t.Fatal("positive control: kill -9 -1 natively did not kill a process of the same uid")
	}
	// The sandboxed attack, with a host process of the sandbox root's own
	// host uid standing by.
	bystander := sleeper(t, hostUID)
	e.sh(id, "", "(setsid sleep 1000 >/dev/null 2>&1 &); true")
	r := e.sh(id, "", "kill -9 -1; echo rc=$?")
	t.Logf("kill -9 -1 in the sandbox: %+v", r)
	if exited(bystander, 500*time.Millisecond) {
		t.Fatalf("kill -1 in the sandbox killed a host process (uid %d)", hostUID)
	}
	if out := e.sh(id, "", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '").Stdout; strings.Contains(out, "sleep 1000") {
		t.Errorf("the sandbox's own daemon survived kill -9 -1 (it should not): %s", out)
	}
	e.stillServes(id)
	e.execAudited(id, "kill -9 -1")
}

// Host processes are invisible from a sandbox: its /proc shows its own
// pid namespace only.
func TestKernelHostProcessesInvisible(t *testing.T) {
	const marker = "3141.5926"
	p := exec.Command("sleep", marker)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	// Control: natively the process is there (once it has exec'd).
	var b []byte
	if !waitFor(5*time.Second, func() bool {
		b, _ = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Process.Pid))
		return strings.Contains(string(b), marker)
	}) {
		t.Fatalf("positive control: host /proc does not show the marker process: %q", b)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	r := e.sh(id, "", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; ls /proc | grep -c '^[0-9]'; kill -0 "+strconv.Itoa(p.Process.Pid)+"; echo kill=$?")
	if strings.Contains(r.Stdout, marker) {
		t.Fatalf("the sandbox sees a host process: %s", r.Stdout)
	}
	t.Logf("sandbox view: %s", r.Stdout)
	e.stillServes(id)
	e.execAudited(id, "/proc/[0-9]*/cmdline")
}

// guestUID is the host uid the sandbox's root maps to (the owner of its
// guest agent on the host).
func (e *env) guestUID(id string) int {
	e.t.Helper()
	pid := e.guestPID(id)
	var st syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d", pid), &st); err != nil {
		e.t.Fatal(err)
	}
	if st.Uid == 0 {
		e.t.Fatalf("the guest of %s runs as host root", id)
	}
	return int(st.Uid)
}

// sentryUID is the host uid of a gVisor sandbox's sentry (runsc-sandbox,
// in the sandbox's cgroup).
func (e *env) sentryUID(id string) int {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/pids", e.Prefix, id, "cgroup.procs"))
	if err != nil {
		e.t.Fatalf("the sandbox's cgroup: %v", err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(c), "runsc-sandbox") {
			var st syscall.Stat_t
			if err := syscall.Stat(fmt.Sprintf("/proc/%d", pid), &st); err != nil {
				e.t.Fatal(err)
			}
			return int(st.Uid)
		}
	}
	e.t.Fatalf("no sentry in %s's cgroup (%q)", id, b)
	return -1
}

// guestPID is the host pid of sandbox id's guest agent.
func (e *env) guestPID(id string) int {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/pids", e.Prefix, id, "cgroup.procs"))
	if err != nil {
		e.t.Fatalf("the sandbox's cgroup: %v", err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(c), "paddock-guest") {
			return pid
		}
	}
	e.t.Fatalf("no guest process in %s's cgroup (%q)", id, b)
	return 0
}

// sleeper starts a host `sleep` running as uid.
func sleeper(t *testing.T, uid int) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "300")
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	t.Cleanup(func() { _ = c.Process.Kill(); <-done })
	sleepers.Store(c, done)
	return c
}

// sleepers maps each sleeper to the channel closed when it ends.
var sleepers sync.Map

// exited reports whether a sleeper ended within d.
func exited(c *exec.Cmd, d time.Duration) bool {
	v, _ := sleepers.Load(c)
	select {
	case <-v.(chan struct{}):
		return true
	case <-time.After(d):
		return false
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// AF_VSOCK is not network-namespaced: a sandbox with network "none" bound
// a vsock port the host then could not bind, and could talk to the
// hypervisor side outside any egress policy. Refused by the seccomp
// socket-family allowlist, for root and for user.
func TestKernelVsock(t *testing.T) {
	for _, user := range []string{"", "user"} {
		t.Run("as "+cmp.Or(user, "root"), func(t *testing.T) {
			runProbeCase(t, probeCase{op: "vsock-bind", args: []string{strconv.Itoa(41000 + len(user))}, user: user, wantErrno: "EAFNOSUPPORT"})
		})
	}
}

// Address families that only widen the kernel surface: AF_PACKET (raw
// frames; CVE-2016-8655, CVE-2017-7308), AF_XDP, and netlink protocols
// beyond routing and socket diagnostics (audit, netfilter, generic).
func TestKernelSocketFamilies(t *testing.T) {
	cases := []struct {
		name, dom, typ, proto, want string
	}{
		{"AF_PACKET", strconv.Itoa(syscall.AF_PACKET), strconv.Itoa(syscall.SOCK_RAW), "0", "EAFNOSUPPORT"},
		{"AF_XDP", "44", strconv.Itoa(syscall.SOCK_RAW), "0", "EAFNOSUPPORT"},
		{"netlink audit", strconv.Itoa(syscall.AF_NETLINK), strconv.Itoa(syscall.SOCK_RAW), "9", "EPROTONOSUPPORT"},
		{"netlink generic", strconv.Itoa(syscall.AF_NETLINK), strconv.Itoa(syscall.SOCK_RAW), "16", "EPROTONOSUPPORT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runProbeCase(t, probeCase{op: "socket", args: []string{c.dom, c.typ, c.proto}, wantErrno: c.want})
		})
	}
}
