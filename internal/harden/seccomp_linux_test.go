//go:build linux

package harden

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// openPTY opens a pty pair and returns the slave fd (the master is left
// open for the child's lifetime).
func openPTY() (int, error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return -1, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	if err != nil {
		return -1, fmt.Errorf("ptsname: %w", err)
	}
	s, err := unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open pts: %w", err)
	}
	return s, nil
}

func seccompScenarios() map[string]scenario {
	return map[string]scenario{
		// In a multithreaded process the kernel answers EINVAL natively:
		// that still proves the call reached it.
		"unshare-user": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			return "", unix.Unshare(unix.CLONE_NEWUSER)
		},
		// High bits: the kernel rejects them (EINVAL), the filter must
		// still see CLONE_NEWUSER in the low word.
		"unshare-user-highbits": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			_, _, e := unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER|1<<32, 0, 0)
			return "", errnoErr(e)
		},
		// The forked child unshares while single-threaded: works natively.
		"unshare-user-fork": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWUSER}
			return "", cmd.Run()
		},
		"clone-user": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
			return "", cmd.Run()
		},
		// Ordinary clone and unshare flags must stay allowed.
		"clone-plain": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			out, err := exec.Command("/bin/sh", "-c", "echo forked").Output()
			if err != nil {
				return "", err
			}
			return strings.TrimSpace(string(out)), unix.Unshare(0)
		},
		"setns": func(env scenarioEnv) (string, error) {
			fd, err := unix.Open("/proc/self/ns/uts", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return "", err
			}
			defer unix.Close(fd)
			if err := env.apply(); err != nil {
				return "", err
			}
			runtime.LockOSThread() // never unlocked: the thread may be changed
			return "", unix.Setns(fd, unix.CLONE_NEWUTS)
		},
		// A private mount namespace on this thread only, then a tmpfs.
		"mount-tmpfs": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			runtime.LockOSThread() // never unlocked: the thread leaves the host's mount namespace
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				return "", fmt.Errorf("unshare mount ns: %w", err)
			}
			if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
				return "", fmt.Errorf("make / private: %w", err)
			}
			if err := unix.Mount("tmpfs", env.arg, "tmpfs", 0, "size=1m"); err != nil {
				return "", fmt.Errorf("mount tmpfs: %w", err)
			}
			return "", nil
		},
		"ptrace-attach": func(env scenarioEnv) (string, error) {
			sib := exec.Command("/bin/sleep", "60")
			if err := sib.Start(); err != nil {
				return "", err
			}
			defer func() { _ = sib.Process.Kill(); _ = sib.Wait() }()
			if err := env.apply(); err != nil {
				return "", err
			}
			runtime.LockOSThread() // the tracer is this thread
			defer runtime.UnlockOSThread()
			pid := sib.Process.Pid
			if err := unix.PtraceAttach(pid); err != nil {
				return "", err
			}
			var ws unix.WaitStatus
			if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
				return "", fmt.Errorf("wait for attach stop: %w", err)
			}
			return "", unix.PtraceDetach(pid)
		},
		"bpf-map-create": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			attr := struct{ mapType, keySize, valueSize, maxEntries uint32 }{2 /* BPF_MAP_TYPE_ARRAY */, 4, 4, 1}
			fd, _, e := unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
			if e == 0 {
				unix.Close(int(fd))
			}
			return "", errnoErr(e)
		},
		"add-key": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			_, err := unix.AddKey("user", "paddock-harden-test", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
			return "", err
		},
		"keyctl": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_PROCESS_KEYRING, true)
			return "", err
		},
		"io-uring-setup": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			var params [120]byte // struct io_uring_params
			fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
			if e == 0 {
				unix.Close(int(fd))
			}
			return "", errnoErr(e)
		},
		"userfaultfd": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|unix.O_NONBLOCK, 0, 0)
			if e == 0 {
				unix.Close(int(fd))
			}
			return "", errnoErr(e)
		},
		"perf-event-open": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK, Bits: unix.PerfBitDisabled}
			attr.Size = uint32(unsafe.Sizeof(attr))
			fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return "", err
		},
		// The handle is taken before hardening, as an attacker holding
		// one (or guessing it: handles are predictable) would.
		"open-by-handle": func(env scenarioEnv) (string, error) {
			h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, env.arg, 0)
			if err != nil {
				return "", fmt.Errorf("name_to_handle_at before hardening: %w", err)
			}
			mfd, err := unix.Open(filepath.Dir(env.arg), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return "", err
			}
			defer unix.Close(mfd)
			if err := env.apply(); err != nil {
				return "", err
			}
			fd, err := unix.OpenByHandleAt(mfd, h, unix.O_RDONLY|unix.O_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return "", err
		},
		"name-to-handle": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			_, _, err := unix.NameToHandleAt(unix.AT_FDCWD, env.arg, 0)
			return "", err
		},
		// arg is the ioctl cmd, possibly with garbage in the high bits.
		"tty-ioctl": func(env scenarioEnv) (string, error) {
			cmd, err := strconv.ParseUint(env.arg, 0, 64)
			if err != nil {
				return "", err
			}
			s, err := openPTY()
			if err != nil {
				return "", err
			}
			if err := env.apply(); err != nil {
				return "", err
			}
			var buf [64]byte
			buf[0] = 'x'
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s), uintptr(cmd), uintptr(unsafe.Pointer(&buf[0])))
			return "", errnoErr(e)
		},
		// Every denied syscall with harmless arguments: the filter must
		// answer EPERM for each. Run restricted only: the arguments are
		// chosen so that a call the filter missed still does nothing.
		"sweep": func(env scenarioEnv) (string, error) {
			a, ok := nativeArch()
			if !ok {
				return "", errors.New("no syscall table")
			}
			acctPath, err := unix.BytePtrFromString("/nonexistent/paddock-acct")
			if err != nil {
				return "", err
			}
			args := map[string][6]uintptr{
				"ptrace":       {^uintptr(0)}, // invalid request
				"acct":         {uintptr(unsafe.Pointer(acctPath))},
				"setns":        {^uintptr(0)}, // bad fd
				"finit_module": {^uintptr(0)},
			}
			if err := env.apply(); err != nil {
				return "", err
			}
			got := map[string]string{}
			for _, name := range DeniedSyscalls() {
				v := args[name]
				_, _, e := unix.Syscall6(uintptr(a.nr[name]), v[0], v[1], v[2], v[3], v[4], v[5])
				got[name] = "ok"
				if e != 0 {
					got[name] = unix.ErrnoName(e)
				}
			}
			runtime.KeepAlive(acctPath)
			b, err := json.Marshal(got)
			return string(b), err
		},
		// clone3 is deliberately allowed: a NULL argument must reach the
		// kernel (EFAULT/EINVAL), not the filter (EPERM).
		"clone3-reaches-kernel": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
			return "", errnoErr(e)
		},
		"x32-getpid": func(env scenarioEnv) (string, error) {
			if runtime.GOARCH != "amd64" {
				return "", errors.New("x32 is amd64 only")
			}
			if err := env.apply(); err != nil {
				return "", err
			}
			r, _, e := unix.RawSyscall(unix.SYS_GETPID|x32SyscallBit, 0, 0, 0)
			return strconv.Itoa(int(r)), errnoErr(e)
		},
		"seccomp-without-nnp": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			err := LoadSeccomp()
			return fmt.Sprint(err), nil
		},
		"fork-true": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			return "", exec.Command("/bin/true").Run()
		},
		// socket(domain, type, protocol) from arg "domain:type:protocol";
		// a socket that opens is closed at once.
		"socket": func(env scenarioEnv) (string, error) {
			var dom, typ, proto int
			if _, err := fmt.Sscanf(env.arg, "%d:%d:%d", &dom, &typ, &proto); err != nil {
				return "", fmt.Errorf("socket scenario arg %q: %w", env.arg, err)
			}
			if err := env.apply(); err != nil {
				return "", err
			}
			fd, err := unix.Socket(dom, typ|unix.SOCK_CLOEXEC, proto)
			if err == nil {
				unix.Close(fd)
			}
			return "", err
		},
		"socketpair": func(env scenarioEnv) (string, error) {
			var dom, typ, proto int
			if _, err := fmt.Sscanf(env.arg, "%d:%d:%d", &dom, &typ, &proto); err != nil {
				return "", fmt.Errorf("socketpair scenario arg %q: %w", env.arg, err)
			}
			if err := env.apply(); err != nil {
				return "", err
			}
			fds, err := unix.Socketpair(dom, typ|unix.SOCK_CLOEXEC, proto)
			if err == nil {
				unix.Close(fds[0])
				unix.Close(fds[1])
			}
			return "", err
		},
		// nr -1 is let through for tracers; the kernel answers ENOSYS.
		"nr-minus-one": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			_, _, e := unix.RawSyscall(^uintptr(0), 0, 0, 0)
			return "", errnoErr(e)
		},
	}
}

func TestSeccompDenies(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	handleFile := filepath.Join(dir, "handle-target")
	if err := os.WriteFile(handleFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		scenario   string
		arg        string
		control    []string // acceptable native outcomes
		restricted []string
	}{
		{"unshare CLONE_NEWUSER", "unshare-user", "", []string{"EINVAL"}, []string{"EPERM"}},
		{"unshare CLONE_NEWUSER with high bits", "unshare-user-highbits", "", []string{"EINVAL"}, []string{"EPERM"}},
		{"fork+unshare CLONE_NEWUSER", "unshare-user-fork", "", []string{"ok"}, []string{"EPERM"}},
		{"clone CLONE_NEWUSER", "clone-user", "", []string{"ok"}, []string{"EPERM"}},
		{"setns", "setns", "", []string{"ok"}, []string{"EPERM"}},
		{"mount tmpfs in private mount ns", "mount-tmpfs", "", []string{"ok"}, []string{"EPERM"}},
		{"ptrace attach sibling", "ptrace-attach", "", []string{"ok"}, []string{"EPERM"}},
		{"bpf map create", "bpf-map-create", "", []string{"ok"}, []string{"EPERM"}},
		{"add_key", "add-key", "", []string{"ok"}, []string{"EPERM"}},
		{"keyctl", "keyctl", "", []string{"ok"}, []string{"EPERM"}},
		{"io_uring_setup", "io-uring-setup", "", []string{"ok"}, []string{"EPERM"}},
		{"userfaultfd", "userfaultfd", "", []string{"ok"}, []string{"EPERM"}},
		{"perf_event_open", "perf-event-open", "", []string{"ok"}, []string{"EPERM"}},
		{"open_by_handle_at", "open-by-handle", handleFile, []string{"ok"}, []string{"EPERM"}},
		{"name_to_handle_at", "name-to-handle", handleFile, []string{"ok"}, []string{"EPERM"}},
		{"TIOCSTI", "tty-ioctl", "0x5412", []string{"ok"}, []string{"EPERM"}},
		// Masked compare: the kernel truncates cmd to 32 bits and runs
		// TIOCSTI; the filter must do the same.
		{"TIOCSTI with high bits", "tty-ioctl", "0x100005412", []string{"ok"}, []string{"EPERM"}},
		{"TIOCSTI with other high bits", "tty-ioctl", "0xffffffff00005412", []string{"ok"}, []string{"EPERM"}},
		// Not a VT: natively ENOTTY/EINVAL, still evaluated by the kernel.
		{"TIOCLINUX", "tty-ioctl", "0x541c", []string{"ENOTTY", "EINVAL"}, []string{"EPERM"}},
		{"TIOCLINUX with high bits", "tty-ioctl", "0x10000541c", []string{"ENOTTY", "EINVAL"}, []string{"EPERM"}},
		// x32 is compiled out of most kernels (ENOSYS); either way the
		// filter must kill.
		{"x32 getpid", "x32-getpid", "", []string{"ok", "ENOSYS"}, []string{"SIGSYS"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.scenario == "x32-getpid" && runtime.GOARCH != "amd64" {
				t.Skip("x32 exists only on amd64")
			}
			arg := tc.arg
			if tc.scenario == "mount-tmpfs" {
				arg = t.TempDir()
			}
			c := childSpec{scenario: tc.scenario, layers: layersSeccomp, arg: arg}
			controlThenRestricted(t, c, tc.control, tc.restricted...)
		})
	}
}

// TestSeccompSocketFamilies: every refused address family and netlink
// protocol opens natively (the positive control; as root) and is refused
// under the filter; the allowed ones open both ways. A family the kernel
// lacks answers EAFNOSUPPORT natively and is skipped.
func TestSeccompSocketFamilies(t *testing.T) {
	requireRoot(t)
	sock := func(dom, typ, proto int) string { return fmt.Sprintf("%d:%d:%d", dom, typ, proto) }
	refused := []struct {
		name string
		arg  string
		want string
	}{
		{"AF_VSOCK stream", sock(unix.AF_VSOCK, unix.SOCK_STREAM, 0), "EAFNOSUPPORT"},
		{"AF_PACKET raw", sock(unix.AF_PACKET, unix.SOCK_RAW, 0), "EAFNOSUPPORT"},
		{"AF_PACKET dgram", sock(unix.AF_PACKET, unix.SOCK_DGRAM, 0), "EAFNOSUPPORT"},
		{"AF_ALG", sock(unix.AF_ALG, unix.SOCK_SEQPACKET, 0), "EAFNOSUPPORT"},
		{"AF_KEY", sock(unix.AF_KEY, unix.SOCK_RAW, 2 /* PF_KEY_V2 */), "EAFNOSUPPORT"},
		{"AF_XDP", sock(unix.AF_XDP, unix.SOCK_RAW, 0), "EAFNOSUPPORT"},
		{"AF_TIPC", sock(unix.AF_TIPC, unix.SOCK_RDM, 0), "EAFNOSUPPORT"},
		{"AF_RDS", sock(unix.AF_RDS, unix.SOCK_SEQPACKET, 0), "EAFNOSUPPORT"},
		{"AF_CAN", sock(unix.AF_CAN, unix.SOCK_RAW, 1 /* CAN_RAW */), "EAFNOSUPPORT"},
		{"AF_BLUETOOTH", sock(unix.AF_BLUETOOTH, unix.SOCK_RAW, 0), "EAFNOSUPPORT"},
		{"AF_PPPOX", sock(unix.AF_PPPOX, unix.SOCK_STREAM, 0), "EAFNOSUPPORT"},
		{"AF_LLC", sock(unix.AF_LLC, unix.SOCK_DGRAM, 0), "EAFNOSUPPORT"},
		{"AF_NFC", sock(unix.AF_NFC, unix.SOCK_SEQPACKET, 0), "EAFNOSUPPORT"},
		{"AF_SMC", sock(unix.AF_SMC, unix.SOCK_STREAM, 0), "EAFNOSUPPORT"},
		{"AF_QIPCRTR", sock(unix.AF_QIPCRTR, unix.SOCK_DGRAM, 0), "EAFNOSUPPORT"},
		{"AF_VSOCK socketpair", "pair:" + sock(unix.AF_VSOCK, unix.SOCK_STREAM, 0), "EAFNOSUPPORT"},
		{"netlink audit", sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT), "EPROTONOSUPPORT"},
		{"netlink netfilter", sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_NETFILTER), "EPROTONOSUPPORT"},
		{"netlink uevent", sock(unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_KOBJECT_UEVENT), "EPROTONOSUPPORT"},
		{"netlink generic", sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_GENERIC), "EPROTONOSUPPORT"},
		{"netlink xfrm", sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_XFRM), "EPROTONOSUPPORT"},
		{"netlink crypto", sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_CRYPTO), "EPROTONOSUPPORT"},
	}
	for _, tc := range refused {
		t.Run("refused "+tc.name, func(t *testing.T) {
			scenario, arg := "socket", tc.arg
			if rest, ok := strings.CutPrefix(arg, "pair:"); ok {
				scenario, arg = "socketpair", rest
			}
			c := childSpec{scenario: scenario, arg: arg}
			ctl := runChild(t, c)
			switch {
			case matches(ctl, "EAFNOSUPPORT", "EPROTONOSUPPORT", "ESOCKTNOSUPPORT", "EPROTOTYPE"):
				t.Skipf("%s: the kernel lacks it natively (%s)", tc.name, ctl)
			case scenario == "socketpair" && matches(ctl, "EOPNOTSUPP", "ENOTSUP"):
				// socketpair is AF_UNIX-only natively; the filter must
				// still refuse the family before the kernel looks.
			case !matches(ctl, "ok"):
				t.Fatalf("positive control %s: %s (%s)", tc.name, ctl, ctl.stderr)
			}
			c.layers = layersSeccomp
			if res := runChild(t, c); !matches(res, tc.want) {
				t.Fatalf("restricted %s: %s, want %s", tc.name, res, tc.want)
			}
		})
	}
	allowed := []struct{ name, scenario, arg string }{
		{"AF_UNIX stream", "socket", sock(unix.AF_UNIX, unix.SOCK_STREAM, 0)},
		{"AF_UNIX socketpair", "socketpair", sock(unix.AF_UNIX, unix.SOCK_STREAM, 0)},
		{"AF_INET tcp", "socket", sock(unix.AF_INET, unix.SOCK_STREAM, 0)},
		{"AF_INET udp", "socket", sock(unix.AF_INET, unix.SOCK_DGRAM, 0)},
		{"AF_INET6 tcp", "socket", sock(unix.AF_INET6, unix.SOCK_STREAM, 0)},
		{"AF_INET icmp (ping)", "socket", sock(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP)},
		{"netlink route", "socket", sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)},
		{"netlink sock_diag", "socket", sock(unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_SOCK_DIAG)},
	}
	for _, tc := range allowed {
		t.Run("allowed "+tc.name, func(t *testing.T) {
			c := childSpec{scenario: tc.scenario, arg: tc.arg}
			ctl := runChild(t, c)
			c.layers = layersSeccomp
			res := runChild(t, c)
			if ctl.String() != res.String() {
				t.Fatalf("%s: natively %s, under the filter %s: the filter must not change it", tc.name, ctl, res)
			}
		})
	}
}

// TestSeccompAllows checks that the filter leaves ordinary arguments of the
// filtered syscalls and the deliberately allowed ones alone.
func TestSeccompAllows(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name, scenario, arg string
		want                []string // same natively and restricted
	}{
		{"fork/exec and unshare(0)", "clone-plain", "", []string{"ok"}},
		{"TIOCGWINSZ", "tty-ioctl", strconv.Itoa(unix.TIOCGWINSZ), []string{"ok"}},
		// TIOCSTI's number in the high half only: the kernel sees cmd 0.
		{"TIOCSTI in high half only", "tty-ioctl", "0x541200000000", []string{"ENOTTY", "EINVAL"}},
		{"clone3 reaches the kernel", "clone3-reaches-kernel", "", []string{"EFAULT", "EINVAL"}},
		{"nr -1", "nr-minus-one", "", []string{"ENOSYS"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			controlThenRestricted(t, childSpec{scenario: tc.scenario, layers: layersSeccomp, arg: tc.arg}, tc.want, tc.want...)
		})
	}
}

// TestSeccompSweep calls every denied syscall under the filter. The
// per-syscall positive controls are in TestSeccompDenies; here the control
// is that the table really is what DeniedSyscalls reports.
func TestSeccompSweep(t *testing.T) {
	requireRoot(t)
	res := runChild(t, childSpec{scenario: "sweep", layers: layersSeccomp})
	if res.signal != 0 || res.Errno != "" {
		t.Fatalf("sweep: %s (%s) %s", res, res.Err, res.stderr)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(res.Out), &got); err != nil {
		t.Fatalf("sweep output %q: %v", res.Out, err)
	}
	denied := DeniedSyscalls()
	if len(got) != len(denied) {
		t.Errorf("sweep covered %d syscalls, DeniedSyscalls has %d", len(got), len(denied))
	}
	t.Logf("sweep: %s", res.Out)
	for _, name := range denied {
		if got[name] != "EPERM" {
			t.Errorf("%s under the filter: %s, want EPERM", name, got[name])
		}
	}
}

func TestProgramDeterministic(t *testing.T) {
	a, err := Program()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Program()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("Program() differs between calls")
	}
	if len(a) == 0 || len(a) > bpfMaxInsns {
		t.Fatalf("program has %d instructions, want 1..%d", len(a), bpfMaxInsns)
	}
	t.Logf("program: %d instructions", len(a))
}

// TestProgramSemantics runs the program in x/net/bpf's VM on hand-made
// seccomp_data, so the decisions are checked without a kernel.
func TestProgramSemantics(t *testing.T) {
	a, ok := nativeArch()
	if !ok {
		t.Skip("no syscall table for " + runtime.GOARCH)
	}
	raw, err := Program()
	if err != nil {
		t.Fatal(err)
	}
	insns, allDecoded := bpf.Disassemble(raw)
	if !allDecoded {
		t.Fatal("program does not disassemble")
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatalf("bpf VM rejects program: %v", err)
	}
	run := func(arch, nr uint32, args ...uint64) uint32 {
		// struct seccomp_data: nr, arch, ip, args[6]; little-endian.
		var b [64]byte
		le := func(off int, v uint64, n int) {
			for i := 0; i < n; i++ {
				b[off+i] = byte(v >> (8 * i))
			}
		}
		le(0, uint64(nr), 4)
		le(4, uint64(arch), 4)
		for i, v := range args {
			le(16+8*i, v, 8)
		}
		// x/net/bpf loads big-endian; the kernel loads native-endian.
		// Swap every 32-bit word so the VM sees what the kernel sees.
		for i := 0; i < len(b); i += 4 {
			b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
		}
		r, err := vm.Run(b[:])
		if err != nil {
			t.Fatalf("vm: %v", err)
		}
		return uint32(r)
	}
	nr := a.nr
	type semCase struct {
		name string
		arch uint32
		nr   uint32
		args []uint64
		want uint32
	}
	tests := []semCase{
		{"foreign arch", 0x40000003 /* AUDIT_ARCH_I386 */, 20, nil, retKill},
		{"getpid", a.audit, unix.SYS_GETPID, nil, retAllow},
		{"mount", a.audit, nr["mount"], nil, retEPERM},
		{"bpf", a.audit, nr["bpf"], nil, retEPERM},
		{"unshare newuser", a.audit, nr["unshare"], []uint64{unix.CLONE_NEWUSER}, retEPERM},
		{"unshare newuser|newns", a.audit, nr["unshare"], []uint64{unix.CLONE_NEWUSER | unix.CLONE_NEWNS}, retEPERM},
		{"unshare newuser high bits", a.audit, nr["unshare"], []uint64{1<<40 | unix.CLONE_NEWUSER}, retEPERM},
		{"unshare newns", a.audit, nr["unshare"], []uint64{unix.CLONE_NEWNS}, retAllow},
		{"clone thread", a.audit, nr["clone"], []uint64{unix.CLONE_VM | unix.CLONE_THREAD}, retAllow},
		{"clone newuser", a.audit, nr["clone"], []uint64{unix.CLONE_NEWUSER}, retEPERM},
		{"clone3", a.audit, unix.SYS_CLONE3, nil, retAllow},
		{"ioctl tiocsti", a.audit, nr["ioctl"], []uint64{0, unix.TIOCSTI}, retEPERM},
		{"ioctl tiocsti high", a.audit, nr["ioctl"], []uint64{0, 1<<32 | unix.TIOCSTI}, retEPERM},
		{"ioctl tioclinux", a.audit, nr["ioctl"], []uint64{0, unix.TIOCLINUX}, retEPERM},
		{"ioctl tiocgwinsz", a.audit, nr["ioctl"], []uint64{0, unix.TIOCGWINSZ}, retAllow},
		{"ioctl fd is tiocsti", a.audit, nr["ioctl"], []uint64{unix.TIOCSTI, 0}, retAllow},
		{"socket unix", a.audit, nr["socket"], []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, retAllow},
		{"socket inet6", a.audit, nr["socket"], []uint64{unix.AF_INET6, unix.SOCK_DGRAM}, retAllow},
		{"socket vsock", a.audit, nr["socket"], []uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, retEAFNOSUPPORT},
		{"socket vsock high bits", a.audit, nr["socket"], []uint64{1<<32 | unix.AF_VSOCK}, retEAFNOSUPPORT},
		{"socket inet with high bits", a.audit, nr["socket"], []uint64{1<<32 | unix.AF_INET}, retAllow},
		{"socket packet", a.audit, nr["socket"], []uint64{unix.AF_PACKET, unix.SOCK_RAW}, retEAFNOSUPPORT},
		{"socketpair vsock", a.audit, nr["socketpair"], []uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, retEAFNOSUPPORT},
		{"netlink route", a.audit, nr["socket"], []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}, retAllow},
		{"netlink audit", a.audit, nr["socket"], []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT}, retEPROTONOSUPPORT},
	}
	if a.x32 {
		tests = append(tests,
			semCase{"x32 getpid", a.audit, unix.SYS_GETPID | x32SyscallBit, nil, retKill},
			semCase{"x32 mount", a.audit, nr["mount"] | x32SyscallBit, nil, retKill},
			semCase{"nr -1", a.audit, 0xffffffff, nil, retAllow},
		)
	}
	for _, name := range DeniedSyscalls() {
		tests = append(tests, semCase{"denied " + name, a.audit, nr[name], nil, retEPERM})
	}
	for _, tc := range tests {
		if got := run(tc.arch, tc.nr, tc.args...); got != tc.want {
			t.Errorf("%s: got %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// TestDeniedSyscallsTable checks that every deny-list entry has a number on
// this architecture unless the architecture has no such syscall.
func TestDeniedSyscallsTable(t *testing.T) {
	a, ok := nativeArch()
	if !ok {
		t.Skip("no syscall table for " + runtime.GOARCH)
	}
	absent := map[string][]string{"arm64": {"iopl", "ioperm", "uselib"}}[runtime.GOARCH]
	names := DeniedSyscalls()
	seen := map[string]bool{}
	for _, d := range denyList() {
		if seen[d.name] {
			t.Errorf("%s listed twice", d.name)
		}
		seen[d.name] = true
		if d.why == "" {
			t.Errorf("%s has no reason", d.name)
		}
		if _, ok := a.nr[d.name]; !ok && !slices.Contains(absent, d.name) {
			t.Errorf("%s has no syscall number on %s", d.name, runtime.GOARCH)
		}
	}
	for _, n := range []string{"mount", "bpf", "io_uring_setup", "open_by_handle_at", "ptrace", "keyctl"} {
		if !slices.Contains(names, n) {
			t.Errorf("DeniedSyscalls lacks %s", n)
		}
	}
	for _, n := range []string{"clone3", "unshare", "clone", "ioctl"} {
		if slices.Contains(names, n) {
			t.Errorf("DeniedSyscalls must not list %s (argument-filtered or allowed)", n)
		}
	}
}

func TestLoadSeccompNeedsNoNewPrivs(t *testing.T) {
	requireRoot(t)
	res := runChild(t, childSpec{scenario: "seccomp-without-nnp"})
	if !strings.Contains(res.Out, "no_new_privs is not set") {
		t.Fatalf("LoadSeccomp without no_new_privs: %q", res.Out)
	}
}

func BenchmarkLoadSeccompFork(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envScenario+"=fork-true", envLayers+"="+layersSeccomp)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// TestDocsListDeniedSyscalls keeps docs/security-layers.md in step with the
// filter.
func TestDocsListDeniedSyscalls(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "security-layers.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, d := range denyList() {
		if !strings.Contains(doc, "| `"+d.name+"` |") {
			t.Errorf("docs/security-layers.md has no row for %s", d.name)
		}
	}
}
