//go:build linux

package agent

import (
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/guest/openat2"
	"github.com/paddockhq/paddock/internal/guest/process"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/harden"
)

// The agent inside gVisor (see guestapi.GVisorBoot for the channels). runsc
// built the root filesystem, /proc, /dev, the hostname and the loopback
// interface from the OCI spec; gVisor's kernel is the isolation boundary,
// so what the native setup adds on top of namespaces (Landlock, a cgroup
// namespace, the nested-userns limit) is not needed, and gVisor does not
// implement most of it.

// gvisorCgroupDir is where the agent mounts gVisor's own pids controller
// (the host's counts only the sandbox's host threads, not its processes).
const gvisorCgroupDir = guestapi.GVisorDir + "/cg"

// gvisorPrepareExecThread is harden.PrepareExecThread without securebits,
// of which gVisor implements only keep-caps (it answers EPERM to the
// rest): the thread's bounding set is emptied and its ambient set cleared,
// so whatever it execs — as uid 0, setuid, or with file capabilities —
// gets no capability (the bounding set caps every set execve computes;
// gVisor applies it as Linux does).
func gvisorPrepareExecThread() error {
	// A cwd of its own (TableOptions.ChdirInSpawner): the thread changes
	// into each workload's directory before it forks.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unshare fs: %w", err)
	}
	for c := 0; c < 64; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL {
			break // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("read bounding set bit %d: %w", c, err)
		}
		if in == 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("drop capability %d from bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return nil
}

// isGVisorMode reports whether the agent was started by the gVisor runtime.
func isGVisorMode() bool { return len(os.Args) > 1 && os.Args[1] == guestapi.GVisorArg }

// mainGVisor is Main inside gVisor.
func mainGVisor() int {
	goruntime.LockOSThread()
	swallowSignals()
	openat2.Emulate() // gVisor has no openat2(2)
	ctl, err := unix.Open(guestapi.GVisorCtlDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return failGVisor(fmt.Errorf("control directory: %w", err))
	}
	boot, err := guestapi.ReadGVisorBoot(filepath.Join(guestapi.GVisorCtlDir, guestapi.GVisorBootFile))
	if err != nil {
		return failGVisor(fmt.Errorf("read boot file: %w", err))
	}
	a, err := startGVisor(boot)
	if err != nil {
		return failGVisor(err)
	}
	// The agent reaches the host's socket through its descriptor on the
	// control directory: the directory itself is hidden below (the
	// sandbox's code must not dial the host, nor read the boot file).
	ln := newDialListener("/proc/self/fd/"+strconv.Itoa(ctl)+"/"+guestapi.GVisorSocket, boot.Token)
	if err := hideGVisorDir(); err != nil {
		return failGVisor(fmt.Errorf("hide %s: %w", guestapi.GVisorDir, err))
	}
	if err := lockDownGVisor(a); err != nil {
		return failGVisor(err)
	}
	srv := &http.Server{Handler: a.routes(), IdleTimeout: 5 * time.Minute, ErrorLog: nil}
	err = srv.Serve(ln)
	fmt.Fprintf(os.Stderr, "paddock-guest: serve: %v\n", err)
	return 1
}

// failGVisor reports a setup error on stderr, which runsc hands to the
// sandbox's log on the host (the host reads its last line).
func failGVisor(err error) int {
	fmt.Fprintf(os.Stderr, "paddock-guest: setup failed: %v\n", err)
	return 1
}

func startGVisor(boot *guestapi.GVisorBoot) (*Agent, error) {
	cfg := &boot.Config
	a := &Agent{cfg: *cfg, shell: "/bin/sh"}
	t0 := time.Now()
	if err := gvisorRootFS(cfg); err != nil {
		return nil, err
	}
	a.phases = append(a.phases, "fs="+time.Since(t0).Round(time.Microsecond).String())
	applyImage(cfg.Image) // an image template's WORKDIR and USER, as natively (image_linux.go)
	execDir, err := gvisorPidsGroup(boot.Pids)
	if err != nil {
		return nil, fmt.Errorf("pids group: %w", err)
	}
	a.cg = cgroup.NewDelegated(cgroup.V1, execDir, -1)
	// Flat: gVisor's pids controller is not hierarchical. No securebits:
	// gVisor implements only keep-caps.
	opt := process.TableOptions{PrepareThread: gvisorPrepareExecThread, Flat: true, ChdirInSpawner: true,
		BeforeSpawn: gvisorNproc{boot.Pids}.beforeSpawn}
	if a.procs, err = process.NewTableWith(a.cg, opt); err != nil {
		return nil, fmt.Errorf("spawner: %w", err)
	}
	if err := unix.Chdir("/workspace"); err != nil {
		return nil, err
	}
	a.started = time.Now()
	if _, err := os.Stat("/bin/bash"); err == nil {
		a.shell = "/bin/bash"
	}
	return a, nil
}

// gvisorRootFS makes the directories and /etc files every sandbox has (the
// root filesystem is the template with the sandbox's writable layer over
// it, as on native).
func gvisorRootFS(cfg *guestapi.Config) error {
	for _, d := range []struct {
		p    string
		mode os.FileMode
		uid  int
	}{
		{"tmp", 0o1777, 0}, {"workspace", 0o777, 0}, {"root", 0o700, 0}, {"home", 0o755, 0},
		{"home/user", 0o755, 1000}, {"etc", 0o755, 0}, {"var/tmp", 0o1777, 0}, {"run", 0o755, 0},
	} {
		p := "/" + d.p
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := os.MkdirAll(p, d.mode); err != nil {
			return fmt.Errorf("mkdir %s: %w", p, err)
		}
		_ = os.Chmod(p, d.mode)
		_ = os.Chown(p, d.uid, d.uid)
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
		full := "/" + p
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", full, err)
		}
		_ = os.Remove(full) // may be a symlink in the template (resolv.conf)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", full, err)
		}
	}
	return nil
}

// gvisorPidsGroup mounts gVisor's pids controller, makes the workloads'
// group with the sandbox's process limit and returns its directory fd (the
// exec sub-groups are made in it, as in a native sandbox's delegated
// group). A fork bomb then meets EAGAIN inside the sandbox instead of
// exhausting the sentry's host threads.
func gvisorPidsGroup(limit int64) (int, error) {
	if err := os.MkdirAll(gvisorCgroupDir, 0o700); err != nil {
		return -1, err
	}
	if err := unix.Mount("paddock", gvisorCgroupDir, "cgroup", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "pids"); err != nil {
		return -1, fmt.Errorf("mount pids controller: %w", err)
	}
	w := filepath.Join(gvisorCgroupDir, "w")
	if err := os.Mkdir(w, 0o755); err != nil && !os.IsExist(err) {
		return -1, err
	}
	if limit > 0 {
		if err := os.WriteFile(filepath.Join(w, "pids.max"), []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
			return -1, fmt.Errorf("pids.max: %w", err)
		}
	}
	return unix.Open(w, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

// gvisorNproc sets RLIMIT_NPROC, just before each workload is forked
// (BeforeSpawn; the child inherits it, Go's fork restores only
// RLIMIT_NOFILE), to the sandbox's process limit. Fork bombs (resource
// exhaustion): gVisor's pids controller charges a fork to a random one of
// the task's cgroups (Task.chargeLocked returns after the first entry of a
// map), so its pids.max refuses only about one fork in seven past the
// limit, and the sentry's host threads then run into the host's ceiling,
// which kills the whole sandbox. gVisor enforces RLIMIT_NPROC on every
// clone — per uid, counting threads — for any task without
// CAP_SYS_RESOURCE or CAP_SYS_ADMIN: workloads have neither; the agent
// keeps CAP_SYS_RESOURCE (gvisorKeepCaps), so its own threads are never
// refused, and they are added to root's budget (they count as uid 0's).
type gvisorNproc struct{ limit int64 }

func (g gvisorNproc) beforeSpawn(s *process.Spec) error {
	if g.limit <= 0 {
		return nil
	}
	n := uint64(g.limit)
	if s.UID == 0 {
		n += uint64(agentThreads())
	}
	return unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n})
}

// agentThreads is the agent's thread count (/proc/self/status), or a
// generous guess when it cannot be read.
func agentThreads() int {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					return n
				}
			}
		}
	}
	return 32
}

// gvisorKeepCaps are the capabilities the agent keeps inside gVisor:
// native's, plus CAP_SYS_RESOURCE (exempts its threads from the workloads'
// RLIMIT_NPROC; gvisorNproc).
var gvisorKeepCaps = append(append([]harden.Cap(nil), keepCaps...), harden.CapSysResource)

// hideGVisorDir covers the agent's directory with an empty read-only
// tmpfs: the host's socket, the boot file and the pids controller stay
// reachable through the agent's descriptors only.
func hideGVisorDir() error {
	return unix.Mount("paddock", guestapi.GVisorDir, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
}

// lockDownGVisor is lockDown's part that applies under gVisor: the agent
// becomes non-dumpable (workloads of the same uid cannot read its memory or
// descriptors through /proc), sets no_new_privs, keeps only the
// capabilities it needs, and loads the same seccomp filter as natively
// (inside gVisor it is gVisor's kernel that enforces it: defence in depth
// for gVisor's own syscall implementations, e.g. its io_uring).
func lockDownGVisor(a *Agent) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("set non-dumpable: %w", err)
	}
	if err := harden.SetNoNewPrivs(); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := harden.LimitCaps(gvisorKeepCaps); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	if err := harden.LoadSeccomp(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
