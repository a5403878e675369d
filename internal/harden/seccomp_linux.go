//go:build linux

package harden

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

// The filter is a default-allow deny-list. Its shape:
//
//  1. arch != native → KILL_PROCESS. Without this an amd64 process reaches
//     the i386 table through int 0x80, where the numbers differ (i386 nr 21
//     is mount), and every check below is bypassed.
//  2. amd64: nr has the x32 bit (0x40000000) → KILL_PROCESS, for the same
//     reason: x32 numbers are the native ones plus that bit. nr -1 is let
//     through (the kernel answers ENOSYS; tracers use it to skip a call).
//  3. unshare/clone with CLONE_NEWUSER → EPERM.
//  4. ioctl TIOCSTI / TIOCLINUX → EPERM (low 32 bits of cmd only).
//  5. socket/socketpair: families outside an allowlist → EAFNOSUPPORT, and
//     netlink protocols outside a read-mostly allowlist → EPROTONOSUPPORT.
//  6. the syscalls of denyList → EPERM.
//  7. everything else → ALLOW.
//
// clone3 is allowed: its flags live in memory the filter cannot read, and
// Go needs it for CLONE_INTO_CGROUP. The guest sets
// user.max_user_namespaces=0 instead, which covers clone3 too.

// Offsets in struct seccomp_data. args[i] is a u64; on the little-endian
// architectures supported here its low half comes first.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func offArgLow(i uint32) uint32 { return offArg0 + 8*i }

const (
	x32SyscallBit = 0x40000000
	bpfMaxInsns   = 4096 // BPF_MAXINSNS
	retAllow      = unix.SECCOMP_RET_ALLOW
	retEPERM      = unix.SECCOMP_RET_ERRNO | (uint32(unix.EPERM) & unix.SECCOMP_RET_DATA)
	retKill       = unix.SECCOMP_RET_KILL_PROCESS

	retEAFNOSUPPORT    = unix.SECCOMP_RET_ERRNO | (uint32(unix.EAFNOSUPPORT) & unix.SECCOMP_RET_DATA)
	retEPROTONOSUPPORT = unix.SECCOMP_RET_ERRNO | (uint32(unix.EPROTONOSUPPORT) & unix.SECCOMP_RET_DATA)
)

// allowedFamilies are the socket address families workloads may create:
// local sockets, IPv4 and IPv6 (the netns and the egress policy decide
// where they go). AF_NETLINK is allowed for allowedNetlink only.
var allowedFamilies = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6}

// allowedNetlink are the netlink protocols workloads may open.
var allowedNetlink = []uint32{unix.NETLINK_ROUTE, unix.NETLINK_SOCK_DIAG}

// AllowedSocketFamilies reports the allowlist, for docs and tests.
func AllowedSocketFamilies() (families, netlink []uint32) {
	return slices.Clone(allowedFamilies), slices.Clone(allowedNetlink)
}

// deniedCall is one entry of the deny-list, with the reason it is there
// (docs/security-layers.md repeats these).
type deniedCall struct {
	name string
	why  string
}

// denyList returns the syscalls refused with EPERM, in program order.
// Entries the native architecture lacks are skipped.
func denyList() []deniedCall {
	return []deniedCall{
		// Mount API: remounting or overmounting defeats the read-only and
		// masked paths; new-API calls bypass filters on mount(2) alone.
		{"mount", "remount or overmount masked paths"},
		{"umount2", "unmount masks over /proc and /sys"},
		{"pivot_root", "switch root to reach hidden mounts"},
		{"move_mount", "new mount API (bypasses mount(2) filters)"},
		{"open_tree", "new mount API: clone mount trees"},
		{"open_tree_attr", "new mount API: clone mount trees with attributes"},
		{"fsopen", "new mount API: CVE-2022-0185 (fsconfig heap overflow)"},
		{"fsconfig", "new mount API: CVE-2022-0185 (legacy_parse_param overflow)"},
		{"fsmount", "new mount API"},
		{"fspick", "new mount API: reconfigure existing mounts"},
		{"mount_setattr", "new mount API: change mount flags/idmaps"},
		// Cross-process memory access.
		{"ptrace", "read/write other processes; CVE-2019-13272 (PTRACE_TRACEME)"},
		{"process_vm_readv", "read another process's memory"},
		{"process_vm_writev", "write another process's memory"},
		{"pidfd_getfd", "steal file descriptors from another process (ptrace-equivalent)"},
		{"process_madvise", "act on another process's memory"},
		// Large, frequently exploited kernel surfaces.
		{"bpf", "eBPF verifier bugs, e.g. CVE-2021-3490, CVE-2021-31440"},
		{"keyctl", "keyrings are not namespaced; CVE-2016-0728"},
		{"add_key", "keyrings are not namespaced; CVE-2016-0728"},
		{"request_key", "keyrings are not namespaced"},
		{"io_uring_setup", "io_uring bypasses seccomp per operation; CVE-2022-29582, CVE-2023-2598"},
		{"io_uring_enter", "io_uring (see io_uring_setup)"},
		{"io_uring_register", "io_uring (see io_uring_setup)"},
		{"userfaultfd", "pauses kernel copies mid-syscall: the usual way exploits win race-condition use-after-frees"},
		{"perf_event_open", "perf bugs, e.g. CVE-2013-2094, CVE-2023-6931"},
		// Filesystem handles: open any inode on the mount, past the chroot.
		{"open_by_handle_at", "Shocker escape (2014): open host files by handle"},
		{"name_to_handle_at", "pairs with open_by_handle_at"},
		// Namespaces.
		{"setns", "join a namespace through a leaked or inherited namespace fd"},
		// Kernel, module and host-wide state.
		{"kexec_load", "replace the running kernel"},
		{"kexec_file_load", "replace the running kernel"},
		{"init_module", "load kernel code"},
		{"finit_module", "load kernel code"},
		{"delete_module", "unload kernel modules"},
		{"iopl", "raw I/O port access"},
		{"ioperm", "raw I/O port access"},
		{"swapon", "host-wide swap configuration"},
		{"swapoff", "host-wide swap configuration"},
		{"reboot", "reboot the host, or kill the sandbox's pid namespace"},
		{"syslog", "kernel log leaks kernel addresses (KASLR bypass) and is host-wide"},
		{"acct", "host-wide process accounting"},
		{"settimeofday", "host clock is not namespaced"},
		{"clock_settime", "host clock is not namespaced"},
		{"clock_adjtime", "host clock is not namespaced"},
		{"adjtimex", "host clock is not namespaced"},
		{"quotactl", "host quota management"},
		{"quotactl_fd", "host quota management"},
		{"nfsservctl", "obsolete NFS server control"},
		{"uselib", "obsolete a.out loader; CVE-2004-1235"},
		{"lookup_dcookie", "obsolete profiling interface"},
		{"vhangup", "hang up terminals"},
		{"chroot", "nested-chroot escapes; harmless without CAP_SYS_CHROOT, but nothing needs it"},
		{"fanotify_init", "watch and block file access mount- or system-wide"},
	}
}

// archInfo is the native architecture's audit number and syscall table.
type archInfo struct {
	audit uint32
	x32   bool // the x32 ABI shares the native entry point
	nr    map[string]uint32
}

// DeniedSyscalls returns the names of the syscalls the filter refuses with
// EPERM outright on this architecture, in program order. unshare and clone
// (with CLONE_NEWUSER) and ioctl (TIOCSTI, TIOCLINUX) are refused only for
// those arguments and are not listed.
func DeniedSyscalls() []string {
	a, ok := nativeArch()
	if !ok {
		return nil
	}
	var names []string
	for _, d := range denyList() {
		if _, ok := a.nr[d.name]; ok {
			names = append(names, d.name)
		}
	}
	return names
}

// Program returns the seccomp filter for the native architecture. It is
// deterministic: the same kernel-independent program on every call.
func Program() ([]bpf.RawInstruction, error) {
	a, ok := nativeArch()
	if !ok {
		return nil, fmt.Errorf("seccomp filter for %s: %w", runtime.GOARCH, errs.ErrUnsupported)
	}
	return buildProgram(a)
}

func buildProgram(a archInfo) ([]bpf.RawInstruction, error) {
	need := func(name string) (uint32, error) {
		nr, ok := a.nr[name]
		if !ok {
			return 0, fmt.Errorf("seccomp: no syscall number for %s on %s", name, runtime.GOARCH)
		}
		return nr, nil
	}
	unshare, err := need("unshare")
	if err != nil {
		return nil, err
	}
	clone, err := need("clone")
	if err != nil {
		return nil, err
	}
	ioctl, err := need("ioctl")
	if err != nil {
		return nil, err
	}
	socket, err := need("socket")
	if err != nil {
		return nil, err
	}
	socketpair, err := need("socketpair")
	if err != nil {
		return nil, err
	}

	var p prog
	p.ins(bpf.LoadAbsolute{Off: offArch, Size: 4})
	p.jump(bpf.JumpEqual, a.audit, "", "kill")
	p.ins(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if a.x32 {
		p.jump(bpf.JumpGreaterOrEqual, x32SyscallBit, "x32", "")
	}
	p.jump(bpf.JumpEqual, unshare, "newuser", "")
	p.jump(bpf.JumpEqual, clone, "newuser", "")
	p.jump(bpf.JumpEqual, ioctl, "ioctl", "")
	p.jump(bpf.JumpEqual, socket, "socket", "")
	p.jump(bpf.JumpEqual, socketpair, "socket", "")
	for _, d := range denyList() {
		if nr, ok := a.nr[d.name]; ok {
			p.jump(bpf.JumpEqual, nr, "eperm", "")
		}
	}
	p.ins(bpf.RetConstant{Val: retAllow})

	// unshare(flags) and clone(flags, ...): flags is arg 0 on amd64 and
	// arm64. The kernel uses only the low 32 bits of clone's flags and
	// rejects high bits in unshare's, so the low word decides.
	p.label("newuser")
	p.ins(bpf.LoadAbsolute{Off: offArgLow(0), Size: 4})
	p.jump(bpf.JumpBitsSet, unix.CLONE_NEWUSER, "eperm", "allow")

	// ioctl(fd, cmd, ...): the kernel truncates cmd to unsigned int, so
	// only its low 32 bits are compared. A compare on all 64 bits is the
	// classic TIOCSTI filter bypass (CVE-2019-10063, Flatpak): cmd
	// 0x100005412 fails it yet the kernel runs TIOCSTI. TIOCSTI pushes
	// keystrokes into a terminal shared with the host side (CVE-2016-7545,
	// CVE-2017-5226); TIOCLINUX can do the same through the console
	// selection buffer (CVE-2023-1523).
	p.label("ioctl")
	p.ins(bpf.LoadAbsolute{Off: offArgLow(1), Size: 4})
	p.jump(bpf.JumpEqual, unix.TIOCSTI, "eperm", "")
	p.jump(bpf.JumpEqual, unix.TIOCLINUX, "eperm", "allow")

	// socket(domain, type, protocol) and socketpair(domain, ...): an
	// allowlist of address families. Families are the classic route to
	// kernel bugs reachable from an unprivileged user (AF_PACKET
	// CVE-2016-8655 / CVE-2017-7308, AF_ALG CVE-2015-8970, AF_TIPC
	// CVE-2021-43267, AF_RDS CVE-2010-3904, AF_CAN CVE-2021-3609,
	// AF_XDP, AF_BLUETOOTH, AF_KEY ...), and AF_VSOCK is not
	// network-namespaced at all: a sandbox with network "none" could bind
	// vsock ports the host then cannot use, and talk to the hypervisor side
	// outside any egress policy. domain is an int: the low word decides.
	p.label("socket")
	p.ins(bpf.LoadAbsolute{Off: offArgLow(0), Size: 4})
	for _, fam := range allowedFamilies {
		p.jump(bpf.JumpEqual, fam, "allow", "")
	}
	p.jump(bpf.JumpEqual, unix.AF_NETLINK, "netlink", "eafnosupport")
	// Netlink: routing (read by ip, ss, getifaddrs, Chromium; changes need
	// CAP_NET_ADMIN over a netns the sandbox does not own) and socket
	// diagnostics (ss). Audit, netfilter, uevents, generic netlink (nl80211,
	// taskstats ...) and the rest are refused: large kernel surfaces that
	// no workload here needs.
	p.label("netlink")
	p.ins(bpf.LoadAbsolute{Off: offArgLow(2), Size: 4})
	for _, proto := range allowedNetlink {
		p.jump(bpf.JumpEqual, proto, "allow", "")
	}
	p.ins(bpf.RetConstant{Val: retEPROTONOSUPPORT})

	if a.x32 {
		// A still holds nr here.
		p.label("x32")
		p.jump(bpf.JumpEqual, 0xffffffff, "allow", "kill")
	}

	p.label("allow")
	p.ins(bpf.RetConstant{Val: retAllow})
	p.label("eperm")
	p.ins(bpf.RetConstant{Val: retEPERM})
	p.label("eafnosupport")
	p.ins(bpf.RetConstant{Val: retEAFNOSUPPORT})
	p.label("kill")
	p.ins(bpf.RetConstant{Val: retKill})

	insns, err := p.resolve()
	if err != nil {
		return nil, err
	}
	if len(insns) > bpfMaxInsns {
		return nil, fmt.Errorf("seccomp: program has %d instructions, limit %d", len(insns), bpfMaxInsns)
	}
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return nil, fmt.Errorf("seccomp: assemble: %w", err)
	}
	return raw, nil
}

// LoadSeccomp installs the deny-list filter on every thread (TSYNC).
// no_new_privs must already be set. See the top of seccomp_linux.go for the
// program and denyList for the syscalls. Each call stacks another filter.
//
// clone3 is allowed (its flags live in memory a filter cannot read; Go needs
// it for CLONE_INTO_CGROUP); nested user namespaces are refused instead by
// the guest setting user.max_user_namespaces=0 inside the sandbox's own user
// namespace, which covers clone3 too.
func LoadSeccomp() error {
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("prctl(PR_GET_NO_NEW_PRIVS): %w", err)
	}
	if nnp != 1 {
		return fmt.Errorf("seccomp: no_new_privs is not set (call SetNoNewPrivs first)")
	}
	raw, err := Program()
	if err != nil {
		return err
	}
	filters := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filters[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	// TSYNC: every thread gets the filter atomically, or none does and
	// the call names the thread that could not be synchronised.
	r1, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filters)
	if e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %w", e)
	}
	if r1 != 0 {
		return fmt.Errorf("seccomp: thread %d could not be synchronised to the filter", r1)
	}
	return nil
}

// prog is a tiny assembler for classic BPF with forward labels, so jump
// offsets are computed rather than counted by hand.
type prog struct {
	items  []progItem
	labels map[string]int // label → index of the next instruction
}

type progItem struct {
	ins    bpf.Instruction // nil for a conditional jump
	cond   bpf.JumpTest
	val    uint32
	jt, jf string // target labels; "" is the next instruction
}

func (p *prog) ins(i bpf.Instruction) { p.items = append(p.items, progItem{ins: i}) }

func (p *prog) jump(c bpf.JumpTest, val uint32, jt, jf string) {
	p.items = append(p.items, progItem{cond: c, val: val, jt: jt, jf: jf})
}

func (p *prog) label(name string) {
	if p.labels == nil {
		p.labels = make(map[string]int)
	}
	p.labels[name] = len(p.items)
}

func (p *prog) resolve() ([]bpf.Instruction, error) {
	out := make([]bpf.Instruction, 0, len(p.items))
	skip := func(at int, target string) (uint8, error) {
		if target == "" {
			return 0, nil
		}
		pos, ok := p.labels[target]
		if !ok {
			return 0, fmt.Errorf("seccomp: undefined label %q", target)
		}
		d := pos - at - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("seccomp: jump from %d to %q (%d) out of range", at, target, pos)
		}
		return uint8(d), nil
	}
	for i, it := range p.items {
		if it.ins != nil {
			out = append(out, it.ins)
			continue
		}
		st, err := skip(i, it.jt)
		if err != nil {
			return nil, err
		}
		sf, err := skip(i, it.jf)
		if err != nil {
			return nil, err
		}
		out = append(out, bpf.JumpIf{Cond: it.cond, Val: it.val, SkipTrue: st, SkipFalse: sf})
	}
	return out, nil
}
