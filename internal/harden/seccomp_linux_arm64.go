//go:build linux && arm64

package harden

import "golang.org/x/sys/unix"

// nativeArch returns the arm64 table. Numbers come from x/sys/unix, never
// typed by hand. arm64 has no iopl, ioperm or uselib; AArch32 tasks are
// refused by the audit-arch check.
func nativeArch() (archInfo, bool) {
	return archInfo{
		audit: unix.AUDIT_ARCH_AARCH64,
		nr: map[string]uint32{
			"unshare":           unix.SYS_UNSHARE,
			"clone":             unix.SYS_CLONE,
			"ioctl":             unix.SYS_IOCTL,
			"socket":            unix.SYS_SOCKET,
			"socketpair":        unix.SYS_SOCKETPAIR,
			"mount":             unix.SYS_MOUNT,
			"umount2":           unix.SYS_UMOUNT2,
			"pivot_root":        unix.SYS_PIVOT_ROOT,
			"move_mount":        unix.SYS_MOVE_MOUNT,
			"open_tree":         unix.SYS_OPEN_TREE,
			"open_tree_attr":    unix.SYS_OPEN_TREE_ATTR,
			"fsopen":            unix.SYS_FSOPEN,
			"fsconfig":          unix.SYS_FSCONFIG,
			"fsmount":           unix.SYS_FSMOUNT,
			"fspick":            unix.SYS_FSPICK,
			"mount_setattr":     unix.SYS_MOUNT_SETATTR,
			"ptrace":            unix.SYS_PTRACE,
			"process_vm_readv":  unix.SYS_PROCESS_VM_READV,
			"process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
			"pidfd_getfd":       unix.SYS_PIDFD_GETFD,
			"process_madvise":   unix.SYS_PROCESS_MADVISE,
			"bpf":               unix.SYS_BPF,
			"keyctl":            unix.SYS_KEYCTL,
			"add_key":           unix.SYS_ADD_KEY,
			"request_key":       unix.SYS_REQUEST_KEY,
			"io_uring_setup":    unix.SYS_IO_URING_SETUP,
			"io_uring_enter":    unix.SYS_IO_URING_ENTER,
			"io_uring_register": unix.SYS_IO_URING_REGISTER,
			"userfaultfd":       unix.SYS_USERFAULTFD,
			"perf_event_open":   unix.SYS_PERF_EVENT_OPEN,
			"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT,
			"name_to_handle_at": unix.SYS_NAME_TO_HANDLE_AT,
			"setns":             unix.SYS_SETNS,
			"kexec_load":        unix.SYS_KEXEC_LOAD,
			"kexec_file_load":   unix.SYS_KEXEC_FILE_LOAD,
			"init_module":       unix.SYS_INIT_MODULE,
			"finit_module":      unix.SYS_FINIT_MODULE,
			"delete_module":     unix.SYS_DELETE_MODULE,
			"swapon":            unix.SYS_SWAPON,
			"swapoff":           unix.SYS_SWAPOFF,
			"reboot":            unix.SYS_REBOOT,
			"syslog":            unix.SYS_SYSLOG,
			"acct":              unix.SYS_ACCT,
			"settimeofday":      unix.SYS_SETTIMEOFDAY,
			"clock_settime":     unix.SYS_CLOCK_SETTIME,
			"clock_adjtime":     unix.SYS_CLOCK_ADJTIME,
			"adjtimex":          unix.SYS_ADJTIMEX,
			"quotactl":          unix.SYS_QUOTACTL,
			"quotactl_fd":       unix.SYS_QUOTACTL_FD,
			"nfsservctl":        unix.SYS_NFSSERVCTL,
			"lookup_dcookie":    unix.SYS_LOOKUP_DCOOKIE,
			"vhangup":           unix.SYS_VHANGUP,
			"chroot":            unix.SYS_CHROOT,
			"fanotify_init":     unix.SYS_FANOTIFY_INIT,
		},
	}, true
}
