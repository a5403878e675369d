//go:build linux

package native

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/harden"
	"github.com/paddockhq/paddock/internal/hostproc"
	"github.com/paddockhq/paddock/internal/runtime"
)

// instance is one native sandbox.
type instance struct {
	b          *Backend
	id         string
	slot       int
	uid        int
	pid        int
	startTime  uint64
	pidfd      int
	cg         *cgroup.Group
	guest      *guestapi.Client
	layer      bool // a writable layer exists
	runDir     bool // a run directory exists
	reattached bool // started by an earlier server process

	ph          *phases       // create timings, for the debug log
	net         netState      // network attachment (network_linux.go)
	cmdDone     chan struct{} // non-nil once a guest process was started
	done        chan struct{}
	doneOnce    sync.Once
	destroyOnce sync.Once

	paused     atomic.Bool           // frozen (pause_linux.go)
	unverified atomic.Bool           // reattached frozen: agent version not yet checked
	ls         layerState            // the writable layer's descriptor (capture_linux.go)
	guestLayer int                   // the agent's descriptor on the layer (guestapi.Ready.LayerFD), 0: none
	vols       []runtime.VolumeMount // mounted at create (volumes_linux.go)
}

func (i *instance) ID() string                       { return i.id }
func (i *instance) Guest() *guestapi.Client          { return i.guest }
func (i *instance) Done() <-chan struct{}            { return i.done }
func (i *instance) markDone()                        { i.doneOnce.Do(func() { close(i.done) }) }
func (i *instance) SetLimits(l runtime.Limits) error { return i.cg.SetLimits(i.b.cgLimits(l)) }

func (i *instance) Record() json.RawMessage {
	b, _ := json.Marshal(record{Pid: i.pid, StartTime: i.startTime, Slot: i.slot, UIDBase: i.uid, LayerFD: i.guestLayer})
	return b
}

func (i *instance) Stats() (runtime.Stats, error) {
	var s runtime.Stats
	if i.cg != nil {
		cs, err := i.cg.Stats()
		if err != nil {
			return s, err
		}
		s = runtime.Stats{MemoryBytes: cs.MemoryBytes, MemoryPeakBytes: cs.MemoryPeakBytes, OOMKills: cs.OOMKills,
			Pids: cs.Pids, CPUUsage: cs.CPUUsage, CPUThrottled: cs.CPUThrottled}
	}
	if i.b.o.Disk != nil {
		if u, err := i.b.o.Disk.Usage(i.id); err == nil {
			s.DiskBytes, s.DiskInodes = u.Bytes, u.Inodes
		}
	} else if i.guest != nil && !i.paused.Load() { // a frozen agent cannot answer
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if h, err := i.guest.Health(ctx); err == nil {
			s.DiskBytes, s.DiskInodes = h.DiskBytes, h.DiskInodes
		}
	}
	return s, nil
}

func (i *instance) kill() {
	if i.pidfd > 0 {
		_ = unix.PidfdSendSignal(i.pidfd, unix.SIGKILL, nil, 0)
	}
	i.thawForKill()
}

// watchPidfd waits for a reattached guest (not our child) to exit.
func (i *instance) watchPidfd() {
	for !hostproc.WaitPidfd(i.pidfd, time.Hour) {
	}
	i.markDone()
}

// spawn starts the guest and completes the setup handshake.
func (b *Backend) spawn(ctx context.Context, inst *instance, gc *guestapi.Config, lowers []string, lay layerSpec, joinCgroup func() error) error {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socketpair: %w", err)
	}
	hostEnd := os.NewFile(uintptr(sp[0]), "setup")
	guestEnd := os.NewFile(uintptr(sp[1]), "setup-guest")
	defer hostEnd.Close()
	defer guestEnd.Close()

	sock := filepath.Join(b.sbDir(inst.id), "guest.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return fmt.Errorf("guest socket: %w", err)
	}
	ln.SetUnlinkOnClose(false)
	lnFile, err := ln.File()
	ln.Close()
	if err != nil {
		return fmt.Errorf("guest socket: %w", err)
	}
	defer lnFile.Close()
	logf, err := os.OpenFile(filepath.Join(b.sbDir(inst.id), "guest.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("guest log: %w", err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()

	inst.ph.mark("sockets")
	cmd := &exec.Cmd{
		Path: "/proc/self/fd/" + strconv.Itoa(int(b.self.Fd())),
		Args: []string{"paddock-guest"},
		// GOGC from the environment: debug.SetGCPercent would stop the world.
		Env:        []string{"GOMAXPROCS=2", "GOTRACEBACK=none", "GOGC=50"},
		Dir:        "/",
		Stdin:      devnull,
		Stdout:     logf,
		Stderr:     logf,
		ExtraFiles: []*os.File{guestEnd, lnFile}, // fds 3 and 4
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWNET |
				unix.CLONE_NEWIPC | unix.CLONE_NEWUTS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: inst.uid, Size: uidsPerSandbox}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: inst.uid, Size: uidsPerSandbox}},
			// The mapping is written by this privileged process, so allowing
			// setgroups inside cannot be used to shed a group (the reason
			// unprivileged mappings must deny it).
			GidMappingsEnableSetgroups: true,
			Credential:                 &syscall.Credential{Uid: 0, Gid: 0},
			Setsid:                     true,
		},
	}
	// Leaked descriptors (CVE-2024-21626 class): the guest, and through
	// it every workload, gets exactly 0-2 and ExtraFiles (main swept what
	// the server inherited; this catches anything opened since without
	// close-on-exec).
	if err := harden.CloseOnExecAll(); err != nil {
		return fmt.Errorf("close-on-exec sweep: %w", err)
	}
	// A namespace made ahead (nspool_linux.go), if one is ready: the
	// guest starts in it instead of making its own.
	nsfd := -1
	ns := b.takeNS(inst.net.want)
	if ns != nil {
		nsfd = ns.NetNS()
		cmd.SysProcAttr.Cloneflags &^= unix.CLONE_NEWNET
		// After Attach a networked one is the attachment's; a loopback
		// one (or any, if the create fails) is given back here: the guest
		// holds its namespace now.
		defer ns.Release()
		inst.ph.mark("take-netns")
	}
	startedAt := time.Now()
	if err := startAsOwner(cmd, inst.uid, inst.uid, nsfd); err != nil {
		return fmt.Errorf("start guest: %w", err)
	}
	inst.ph.mark("start")
	inst.pid = cmd.Process.Pid
	inst.cmdDone = make(chan struct{})
	pidfd, err := unix.PidfdOpen(inst.pid, 0)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("pidfd: %w", err)
	}
	inst.pidfd = pidfd
	go func() {
		_ = cmd.Wait()
		close(inst.cmdDone)
		inst.markDone()
	}()
	guestEnd.Close()
	b.startNetwork(ctx, inst) // network_linux.go: alongside the cgroup and template setup

	// The guest is blocked reading its Config: nothing runs inside yet, so
	// moving it into its cgroups now leaves no window to escape them.
	if err := joinCgroup(); err != nil {
		return err
	}
	if err := inst.cg.AddProc(inst.pid); err != nil {
		return fmt.Errorf("join cgroup: %w", err)
	}
	inst.ph.mark("join-cgroup")
	mnt := filepath.Join(b.sbDir(inst.id), "mnt")
	stage := func(i int) string { return filepath.Join(mnt, "stage", strconv.Itoa(i)) }
	layerDir, tmpfsAt := lay.dir, ""
	if lay.tmpfs != "" {
		layerDir, tmpfsAt = filepath.Join(mnt, "layer"), filepath.Join(mnt, "layer")
	}
	dirFDs, err := attachLowers(inst.pid, lowers, stage, []string{mnt, layerDir}, tmpfsAt, lay.tmpfs)
	if err != nil {
		return fmt.Errorf("attach template: %w", err)
	}
	defer func() {
		for _, fd := range dirFDs {
			unix.Close(fd)
		}
	}()
	inst.ph.mark("attach")
	if err := b.prepareLayer(ctx, inst, dirFDs[1]); err != nil { // capture_linux.go: snapshot restore
		return err
	}
	if inst.startTime, err = hostproc.StartTime(inst.pid); err != nil {
		return fmt.Errorf("guest vanished: %w", err)
	}
	if err := b.stageVolumes(inst, gc); err != nil { // volumes_linux.go
		return fmt.Errorf("volumes: %w", err)
	}
	if err := b.attachNetwork(ctx, inst, gc); err != nil {
		return fmt.Errorf("network: %w", err)
	}
	msg, _ := json.Marshal(gc)
	if len(msg) > 128<<10 {
		// A SEQPACKET message goes whole or not at all (EMSGSIZE past the
		// send buffer): a config carrying a CA bundle (~220 KiB) needs a
		// bigger one. The guest reads up to maxConfig.
		_ = unix.SetsockoptInt(int(hostEnd.Fd()), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, len(msg)+64<<10)
	}
	if err := unix.Sendmsg(int(hostEnd.Fd()), msg, unix.UnixRights(dirFDs...), nil, 0); err != nil {
		return fmt.Errorf("send config: %w", err)
	}
	ready := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		n, err := hostEnd.Read(buf)
		if err != nil {
			ready <- fmt.Errorf("guest exited during setup (see its log): %w", err)
			return
		}
		var r guestapi.Ready
		if err := json.Unmarshal(buf[:n], &r); err != nil {
			ready <- fmt.Errorf("guest sent a malformed ready message: %w", err)
			return
		}
		if !r.OK {
			ready <- errors.New("guest setup failed: " + r.Error)
			return
		}
		inst.guestLayer = r.LayerFD
		inst.ph.note(fmt.Sprintf("main@+%s config@+%s %s", time.Duration(r.MainAt-startedAt.UnixNano()).Round(time.Microsecond),
			time.Duration(r.ConfigAt-startedAt.UnixNano()).Round(time.Microsecond), r.Phases))
		ready <- nil
	}()
	t := time.NewTimer(b.o.ReadyTimeout)
	defer t.Stop()
	select {
	case err := <-ready:
		if err != nil {
			return err
		}
	case <-t.C:
		return errors.New("guest did not become ready in time")
	case <-ctx.Done():
		return ctx.Err()
	}
	inst.ph.mark("guest-setup")
	inst.guest = guestapi.NewClient(sock)
	return nil
}

// attachLowers clones each lower tree, id-maps it to the guest's user
// namespace (so host-root files show as root inside) and attaches the
// clones at the staging points inside the guest's mount namespace. They
// must belong to that namespace: overlayfs refuses lower layers that live
// in a mount namespace the sandbox's root does not own.
//
// From inside that namespace it also opens the directories in dirs and
// returns O_PATH descriptors on them, for the guest: its uid cannot search
// the root-only data directory (and must not), and a descriptor opened in
// the host's namespace would name the host's mounts, which overlayfs
// refuses for the same reason.
//
// With tmpfsOpts set it also mounts the sandbox's writable layer there, at
// tmpfsAt: a tmpfs made by this (host-root) thread, so the sandbox cannot
// change its size, and living only in the sandbox's namespace, so the
// host's mount table does not grow with every sandbox (each new mount
// namespace copies all of it).
func attachLowers(pid int, lowers []string, stage func(int) string, dirs []string, tmpfsAt, tmpfsOpts string) ([]int, error) {
	userns, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(userns)
	var trees []int
	defer func() {
		for _, fd := range trees {
			unix.Close(fd)
		}
	}()
	for _, p := range lowers {
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return nil, fmt.Errorf("open_tree: %w", err)
		}
		trees = append(trees, fd)
		attr := unix.MountAttr{
			Attr_set:  unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV,
			Userns_fd: uint64(userns),
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return nil, fmt.Errorf("id-map: %w", err)
		}
	}
	var out []int
	err = inMountNS(pid, func() error {
		if err := moveTrees(trees, stage, func(i int, err error) error { return fmt.Errorf("attach layer %d: %w", i, err) }); err != nil {
			return err
		}
		if tmpfsOpts != "" {
			if err := mountTmpfs(tmpfsAt, tmpfsOpts); err != nil {
				return fmt.Errorf("writable layer: %w", err)
			}
		}
		for _, d := range dirs {
			fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("open %s in the sandbox's namespace: %w", filepath.Base(d), err)
			}
			out = append(out, fd)
		}
		return nil
	})
	if err != nil {
		for _, fd := range out {
			unix.Close(fd)
		}
		return nil, err
	}
	return out, nil
}

// inMountNS runs fn in the mount namespace of process pid. Joining another
// mount namespace taints the thread, so fn runs on a locked thread that
// the Go runtime discards when its goroutine ends.
func inMountNS(pid int, fn func() error) error {
	mntns, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(mntns)
	done := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			done <- fmt.Errorf("unshare fs: %w", err)
			return
		}
		if err := unix.Setns(mntns, unix.CLONE_NEWNS); err != nil {
			done <- fmt.Errorf("join mount namespace: %w", err)
			return
		}
		done <- fn()
	}()
	return <-done
}

// moveTrees attaches detached mount trees (open_tree clones) at
// stage(i); fail words the error of tree i.
func moveTrees(trees []int, stage func(int) string, fail func(i int, err error) error) error {
	for i, fd := range trees {
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, stage(i), unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fail(i, err)
		}
	}
	return nil
}

// mountTmpfs mounts a tmpfs with opts ("k=v,...") at target, with the new
// mount API so each option is checked on its own.
func mountTmpfs(target, opts string) error {
	fd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen: %w", err)
	}
	defer unix.Close(fd)
	for _, kv := range strings.Split(opts, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if err := unix.FsconfigSetString(fd, k, v); err != nil {
			return fmt.Errorf("tmpfs option %s: %w", k, err)
		}
	}
	if err := unix.FsconfigCreate(fd); err != nil {
		return fmt.Errorf("create tmpfs: %w", err)
	}
	mfd, err := unix.Fsmount(fd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return fmt.Errorf("fsmount: %w", err)
	}
	defer unix.Close(mfd)
	if err := unix.MoveMount(mfd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attach tmpfs: %w", err)
	}
	return nil
}
