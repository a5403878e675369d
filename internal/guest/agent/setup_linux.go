//go:build linux

package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/harden"
)

// Devices bind-mounted from the host. A user namespace cannot mknod, and
// these are the only nodes a workload gets (no /dev/mem, no block devices).
var hostDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// Capabilities the agent keeps after setup, for its own file and process
// work on the sandbox's behalf. Workloads get none (bounding set emptied).
var keepCaps = []harden.Cap{
	harden.CapChown, harden.CapDacOverride, harden.CapDacReadSearch, harden.CapFowner,
	harden.CapFsetid, harden.CapKill, harden.CapSetgid, harden.CapSetuid,
	// To prepare a replacement spawner thread (it only ever lowers a
	// thread's own bounding set).
	harden.CapSetpcap,
}

// setupFS builds the sandbox's root: overlays over the id-mapped lowers with
// upper layers in the quota'd layer directory, /proc, a minimal /dev, then
// pivot_root. It returns directory fds on the delegated cgroups, opened
// while the host's tree is still visible.
func setupFS(cfg *guestapi.Config, dirs setupDirs) (execDir, memDir int, err error) {
	execDir, memDir = -1, -1
	// Nothing we mount may propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return -1, -1, fmt.Errorf("make mounts private: %w", err)
	}
	// Everything host-side is reached through the descriptors (magic links
	// skip the permission checks of the directories above them).
	mnt := "/proc/self/fd/" + strconv.Itoa(dirs.mnt)
	layer := "/proc/self/fd/" + strconv.Itoa(dirs.layer)
	under := func(p string) string { return mnt + "/" + filepath.Clean("/" + p)[1:] }
	root := under(cfg.NewRoot)
	if len(cfg.RootLowers) > 0 { // an image template's layer stack (image_linux.go)
		lowers := make([]string, len(cfg.RootLowers))
		for i, l := range cfg.RootLowers {
			lowers[i] = under(l)
		}
		if err := overlayStack(lowers, layer, "root", root); err != nil {
			return -1, -1, err
		}
	} else if err := overlay(under(cfg.RootLower), layer, "root", root); err != nil {
		return -1, -1, err
	}
	for i, o := range cfg.Overlays {
		target := filepath.Join(root, filepath.Clean("/"+o.Path))
		if err := os.MkdirAll(target, 0o755); err != nil {
			return -1, -1, fmt.Errorf("overlay mount point %s: %w", o.Path, err)
		}
		if err := overlay(under(o.Lower), layer, "o"+strconv.Itoa(i), target); err != nil {
			return -1, -1, err
		}
	}
	if err := mountVolumes(root, under, cfg.Volumes); err != nil { // volumes_linux.go
		return -1, -1, err
	}
	for _, d := range []struct {
		p    string
		mode os.FileMode
		uid  int
	}{
		{"proc", 0o555, 0}, {"dev", 0o755, 0}, {"tmp", 0o1777, 0}, {"workspace", 0o777, 0},
		{"root", 0o700, 0}, {"home", 0o755, 0}, {"home/user", 0o755, 1000}, {"etc", 0o755, 0},
		{"var/tmp", 0o1777, 0}, {"run", 0o755, 0}, {"sys", 0o555, 0},
	} {
		p := filepath.Join(root, d.p)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := os.MkdirAll(p, d.mode); err != nil {
			return -1, -1, fmt.Errorf("mkdir /%s: %w", d.p, err)
		}
		_ = os.Chmod(p, d.mode)
		_ = os.Chown(p, d.uid, d.uid)
	}
	if err := unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return -1, -1, fmt.Errorf("mount /proc: %w", err)
	}
	if err := maskProc(filepath.Join(root, "proc")); err != nil {
		return -1, -1, err
	}
	if err := emptySys(filepath.Join(root, "sys")); err != nil {
		return -1, -1, err
	}
	if err := setupDev(root, cfg.ShmBytes); err != nil {
		return -1, -1, err
	}
	etc := map[string]string{
		"etc/hostname":    cfg.Hostname + "\n",
		"etc/hosts":       cfg.Hosts,
		"etc/resolv.conf": cfg.ResolvConf,
	}
	for p, content := range cfg.ExtraFiles {
		etc[path.Clean("/" + p)[1:]] = content
	}
	for p, content := range etc {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return -1, -1, fmt.Errorf("write /%s: %w", p, err)
		}
		_ = os.Remove(full) // may be a symlink in the template (resolv.conf)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return -1, -1, fmt.Errorf("write /%s: %w", p, err)
		}
	}
	if cfg.CgroupExecDir != "" {
		if execDir, err = unix.Open(cfg.CgroupExecDir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return -1, -1, fmt.Errorf("open exec cgroup: %w", err)
		}
	}
	if cfg.CgroupMemoryDir != "" {
		if memDir, err = unix.Open(cfg.CgroupMemoryDir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return -1, -1, fmt.Errorf("open memory cgroup: %w", err)
		}
	}
	// pivot_root(".", ".") stacks the old root under the new one; detaching
	// it leaves no path back to the host's tree.
	if err := unix.Chdir(root); err != nil {
		return -1, -1, fmt.Errorf("chdir new root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return -1, -1, fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return -1, -1, fmt.Errorf("detach old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return -1, -1, err
	}
	return execDir, memDir, nil
}

// overlay mounts lower + layerDir/name/{upper,work} at target.
func overlay(lower, layerDir, name, target string) error {
	upper := filepath.Join(layerDir, name, "upper")
	work := filepath.Join(layerDir, name, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("layer dir: %w", err)
		}
	}
	// userxattr: inside a user namespace overlayfs must keep its metadata
	// (opaque dirs, redirects) in user.* xattrs.
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work + ",userxattr"
	if err := unix.Mount("overlay", target, "overlay", unix.MS_NOSUID, opts); err != nil {
		return fmt.Errorf("mount overlay %s: %w", name, err)
	}
	return nil
}

func setupDev(root string, shm int64) error {
	dev := filepath.Join(root, "dev")
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=256k,nr_inodes=512"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, d := range hostDevices {
		p := filepath.Join(dev, d)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return fmt.Errorf("/dev/%s: %w", d, err)
		}
		f.Close()
		if err := unix.Mount("/dev/"+d, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", d, err)
		}
	}
	pts := filepath.Join(dev, "pts")
	if err := os.Mkdir(pts, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("devpts", pts, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620,gid=5"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	shmDir := filepath.Join(dev, "shm")
	if err := os.Mkdir(shmDir, 0o1777); err != nil {
		return err
	}
	if shm <= 0 {
		shm = 64 << 20
	}
	if err := unix.Mount("shm", shmDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size="+strconv.FormatInt(shm, 10)); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	for name, target := range map[string]string{
		"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	// Landlock grants writes on "/" (fsRules), so /dev's own tmpfs is made
	// read-only: no new entries beside the nodes above (a planted "device"
	// name a program trusts). The bound nodes, /dev/pts and /dev/shm are
	// mounts of their own and stay writable.
	if err := unix.Mount("", dev, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("read-only /dev: %w", err)
	}
	return nil
}

// maskedProcFiles are /proc files covered with /dev/null and
// maskedProcDirs directories covered with an empty read-only tmpfs, as
// runc masks them: kernel memory and addresses (/proc/kcore, the
// KASLR-defeating timer_list and sched_debug), other processes' keys
// (/proc/keys) and hardware interfaces (acpi, scsi, asound). Reads, not
// writes: every write under /proc (sysrq-trigger, sys/, PID/mem) is
// refused by the read-only proc mount (readOnlyProc); a write to a masked
// file lands in /dev/null.
var (
	maskedProcFiles = []string{"kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug"}
	maskedProcDirs  = []string{"acpi", "asound", "scsi"}
)

// maskProc covers maskedProcFiles and maskedProcDirs in the proc mounted
// at procDir. Entries this kernel lacks are skipped.
func maskProc(procDir string) error {
	for _, f := range maskedProcFiles {
		p := filepath.Join(procDir, f)
		if fi, err := os.Lstat(p); err != nil || fi.IsDir() {
			continue
		}
		if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mask /proc/%s: %w", f, err)
		}
	}
	for _, d := range maskedProcDirs {
		p := filepath.Join(procDir, d)
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount("paddock", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
			return fmt.Errorf("mask /proc/%s: %w", d, err)
		}
	}
	return nil
}

// emptySys covers /sys with an empty read-only tmpfs. The sandbox has no
// sysfs of its own (its network namespace belongs to the host's user
// namespace, so it could not mount one), and with Landlock granting writes
// on "/" nothing may be planted where programs look for kernel interfaces
// (/sys/fs/cgroup, /sys/kernel/...: the sysfs-write escape class, e.g.
// uevent_helper, which a writable host sysfs would run as host root).
func emptySys(sysDir string) error {
	if err := unix.Mount("paddock", sysDir, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
		return fmt.Errorf("mount /sys: %w", err)
	}
	return nil
}

// readOnlyProc makes the sandbox's /proc mount read-only. It is what keeps
// /proc closed for writing now that Landlock grants writes on "/" (a
// Landlock rule cannot exclude a subtree): /proc/sys (core_pattern and
// poweroff_cmd: "|program" runs as host root — the privileged-container
// escape; the IPC and mqueue limits the sandbox's root owns), /proc/PID/mem
// of the workload itself and of its siblings (CVE-2012-0056, Mempodipper;
// with ptrace refused by seccomp, the ptrace-equivalent write),
// /proc/PID/{oom_score_adj,attr,...}. Opening a regular file for writing or
// truncating one on a read-only mount fails with EROFS on every
// filesystem, proc included; magic links (/proc/self/fd/N, /dev/stdout)
// reach their targets' mounts and keep working. The agent makes its own
// /proc writes (userBudgets) before this.
func readOnlyProc() error {
	if err := unix.Mount("", "/proc", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("read-only /proc: %w", err)
	}
	return nil
}

// lockDown finishes setup: hostname, cgroup namespace, nested user
// namespaces refused, then the hardening that every workload inherits.
func lockDown(cfg *guestapi.Config, mark func(string), beforeCaps func() error, cgDirs ...int) error {
	if err := harden.LoopbackUp(); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	// The host already moved us into the sandbox's group: make it our
	// cgroup root, so /proc/self/cgroup shows nothing of the host's tree.
	// Namespaces are per thread, and Go may fork from any of them (psx:
	// see harden's allThreadsPrctl, for a server binary built with cgo).
	if _, _, e := psx.Syscall3(unix.SYS_UNSHARE, unix.CLONE_NEWCGROUP, 0, 0); e != 0 {
		return fmt.Errorf("cgroup namespace: %w", e)
	}
	// Nested user namespaces are the door to most kernel exploits that need
	// capabilities (e.g. CVE-2022-0185, CVE-2023-32233). seccomp refuses
	// unshare/clone with CLONE_NEWUSER; this limit, counted per user
	// namespace by the kernel, also covers clone3 whose flags seccomp cannot read.
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0"), 0); err != nil {
		return fmt.Errorf("limit nested user namespaces: %w", err)
	}
	if err := userBudgets(); err != nil {
		return err
	}
	if err := readOnlyProc(); err != nil {
		return err
	}
	if err := unix.Chdir("/workspace"); err != nil {
		return err
	}
	// Non-dumpable: workloads running as the same uid cannot open
	// /proc/1/{mem,fd,environ,exe} of the agent (ptrace access checks).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("set non-dumpable: %w", err)
	}
	mark("misc")
	if err := harden.SetNoNewPrivs(); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	mark("nnp")
	rules := fsRules()
	for _, fd := range cgDirs {
		if fd >= 0 {
			rules.FullTrees = append(rules.FullTrees, "/proc/self/fd/"+strconv.Itoa(fd))
		}
	}
	if err := harden.RestrictFS(rules); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	mark("landlock")
	// The spawner thread empties its bounding set, which needs CAP_SETPCAP.
	if err := beforeCaps(); err != nil {
		return fmt.Errorf("spawner: %w", err)
	}
	mark("spawner")
	if err := harden.LimitCaps(keepCaps); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	mark("caps")
	if err := harden.LoadSeccomp(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	mark("seccomp")
	return nil
}

// fsRules lets files be written anywhere in the sandbox's tree, "/"
// itself included: a RUN step or an agent may make /app or write /new.txt.
// A Landlock rule cannot exclude a subtree, so /proc, /sys and /dev are
// closed by their mounts instead (readOnlyProc, maskProc, emptySys, the
// read-only /dev tmpfs in setupDev; the posture test reads them back).
func fsRules() harden.FSRules {
	return harden.FSRules{WritableTrees: []string{"/"}}
}

// podFSRules are a Pod's rules. There the agent cannot mount (the
// container holds no CAP_SYS_ADMIN), /proc is the container runtime's and
// its /proc/PID/mem writable, so Landlock itself keeps /proc, /sys and /dev
// closed for writing (CVE-2012-0056 class; the core_pattern and
// sysrq-trigger host escapes): files are written only beneath the
// top-level entries / had when the agent started, and on the harmless
// device nodes.
func podFSRules() harden.FSRules {
	var r harden.FSRules
	entries, _ := os.ReadDir("/")
	for _, e := range entries {
		switch e.Name() {
		case "proc", "sys", "dev":
			continue
		}
		r.WritableTrees = append(r.WritableTrees, "/"+e.Name())
	}
	r.WritableTrees = append(r.WritableTrees, "/dev/shm", "/dev/pts")
	for _, d := range hostDevices {
		r.WritableFiles = append(r.WritableFiles, "/dev/"+d)
	}
	r.WritableFiles = append(r.WritableFiles, "/dev/ptmx")
	return r
}

// userCounters are the sandbox's budgets for the kernel's per-user
// counters, counted in its own user namespace (docs/security.md). The
// host charges the same use to the namespace's owner, the sandbox's own
// uid, against the host's per-user values; these bound a sandbox where
// those are large. Nested namespaces of every kind are 0: workloads hold
// no capabilities to make them, and the agent makes none after setup.
var userCounters = []struct {
	name  string
	value string
}{
	{"max_inotify_instances", "128"},
	{"max_inotify_watches", "65536"},
	{"max_fanotify_groups", "16"},
	{"max_fanotify_marks", "8192"},
	{"max_cgroup_namespaces", "0"},
	{"max_ipc_namespaces", "0"},
	{"max_mnt_namespaces", "0"},
	{"max_net_namespaces", "0"},
	{"max_pid_namespaces", "0"},
	{"max_time_namespaces", "0"},
	{"max_uts_namespaces", "0"},
}

// userBudgets writes userCounters. Shared kernel counters (the ucounts
// class): without them one sandbox's inotify instances or fanotify marks
// are bounded only by the host's per-user values. A counter the kernel
// lacks (ENOENT: an older kernel) is skipped.
func userBudgets() error {
	for _, c := range userCounters {
		err := os.WriteFile("/proc/sys/user/"+c.name, []byte(c.value), 0)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("budget %s: %w", c.name, err)
		}
	}
	return nil
}
