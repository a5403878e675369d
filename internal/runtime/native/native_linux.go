//go:build linux

package native

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/hostproc"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Options configure the native backend.
type Options struct {
	DataDir string // run state lives in DataDir/run
	Log     *slog.Logger
	Cgroups *cgroup.Host
	// Disk holds writable layers with host-side quotas. Nil: each sandbox
	// gets a size-limited tmpfs mounted inside its own mount namespace.
	Disk disk.Store
	// UIDBase is the first host uid given to sandboxes; Slots ranges of
	// 65536 uids follow it. They must not overlap real host users.
	UIDBase int
	Slots   int
	// ReadyTimeout bounds how long a guest may take to come up.
	ReadyTimeout time.Duration
	// Network gives sandboxes a network; nil: loopback only.
	Network runtime.Network
}

const (
	uidsPerSandbox = 65536
	maxOverlays    = 8
)

// Backend is the native Linux runtime.
type Backend struct {
	o     Options
	log   *slog.Logger
	self  *os.File // sealed copy of the guest binary
	slots *slots
	run   string

	loNS, netNS *nsPool     // network namespaces made ahead (nspool_linux.go)
	nsPoolOff   atomic.Bool // set by benchmarks comparing with and without them

	mu       sync.Mutex
	live     map[string]*instance
	cleanups sync.WaitGroup
}

// record is what the manager persists for each sandbox.
type record struct {
	Pid       int    `json:"pid"`
	StartTime uint64 `json:"start_time"`
	Slot      int    `json:"slot"`
	UIDBase   int    `json:"uid_base"`
	// LayerFD is the agent's descriptor on the writable layer, which a
	// restarted server copies to capture the layer (capture_linux.go).
	LayerFD int `json:"layer_fd,omitempty"`
}

// New prepares the backend: the sealed binary, the run directory, and the
// staging mount points.
func New(o Options) (*Backend, error) {
	if o.Cgroups == nil {
		return nil, errors.New("native: cgroups are required")
	}
	if o.UIDBase == 0 {
		o.UIDBase = 1_000_000
	}
	if o.Slots == 0 {
		o.Slots = 4096
	}
	if int64(o.UIDBase)+int64(o.Slots)*uidsPerSandbox > 1<<32-2 {
		return nil, fmt.Errorf("native: uid range %d + %d slots overflows", o.UIDBase, o.Slots)
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 15 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	b := &Backend{o: o, log: o.Log, slots: newSlots(o.Slots), live: make(map[string]*instance),
		run: filepath.Join(o.DataDir, "run")}
	if err := os.MkdirAll(b.run, 0o700); err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	if err := mountRunTmpfs(b.run); err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	for _, d := range []string{b.run, filepath.Join(b.run, "sandboxes")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("native: %w", err)
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, err
		}
	}
	self, embedded, err := sealedGuest()
	if err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	if !embedded {
		b.log.Info("no embedded guest (a plain go build or go install): sandboxes run this binary as their guest, " +
			"which starts each a few milliseconds slower; make build embeds the lean one")
	}
	b.self = self
	b.startNSPools()
	return b, nil
}

// Name implements runtime.Backend.
func (b *Backend) Name() string { return "native" }

func (b *Backend) sbDir(id string) string {
	return filepath.Join(b.run, "sandboxes", id)
}

// guestStage names staging point i relative to the mount directory, which
// the guest reaches through a descriptor (see attachLowers).
func guestStage(i int) string { return "stage/" + strconv.Itoa(i) }

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Close waits for pending cleanups and releases the sealed binary.
// Sandboxes keep running.
func (b *Backend) Close() error {
	b.loNS.close()
	b.netNS.close()
	b.cleanups.Wait()
	// The run directory's tmpfs holds the guests' sockets: it stays while
	// sandboxes run (the next server reattaches through it) and goes when
	// none is left.
	if b.slots.inUse() == 0 {
		if err := unix.Unmount(b.run, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			b.log.Warn("native: cannot unmount the run directory", "dir", b.run, "err", err)
		}
	}
	return b.self.Close()
}

// Create implements runtime.Backend.
func (b *Backend) Create(ctx context.Context, cfg runtime.Config) (_ runtime.Instance, err error) {
	if !idRE.MatchString(cfg.ID) {
		return nil, errs.Invalid("invalid sandbox id")
	}
	stages, err := stagesOf(cfg.Template) // layers_linux.go
	if err != nil {
		return nil, err
	}
	slot, err := b.slots.alloc()
	if err != nil {
		return nil, errs.Wrap(errs.CodeLimit, err, "the host has no room for another sandbox")
	}
	uid := b.o.UIDBase + slot*uidsPerSandbox
	inst := &instance{b: b, id: cfg.ID, slot: slot, uid: uid, done: make(chan struct{}), ph: newPhases()}
	inst.net.want = cfg.Network
	inst.ls.restore = cfg.Layer
	inst.vols = cfg.Volumes
	// The cgroups are made while the guest process starts (it stays blocked
	// on its setup socket, and is moved into them before it can run
	// anything): the two overlap on a multi-core host.
	cgDone := make(chan error, 1)
	go func() {
		cg, err := b.o.Cgroups.Create(cfg.ID, b.cgLimits(cfg.Limits), uid, uid)
		if err == nil {
			inst.cg = cg
		}
		cgDone <- err
	}()
	var cgErr error
	cgWait := sync.OnceFunc(func() { cgErr = <-cgDone })
	defer func() {
		if err != nil {
			cgWait()
			b.teardown(inst)
		}
	}()

	var lay layerSpec
	if b.o.Disk != nil {
		layer, err := b.o.Disk.Create(cfg.ID, cfg.Limits.DiskBytes, cfg.Limits.DiskInodes, uid, uid)
		if err != nil {
			return nil, fmt.Errorf("writable layer: %w", err)
		}
		inst.layer = true
		lay.dir = layer.Dir
	} else {
		lay.tmpfs = fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700,uid=%d,gid=%d", cfg.Limits.DiskBytes, cfg.Limits.DiskInodes, uid, uid)
	}
	inst.ph.mark("layer")
	if err := os.Mkdir(b.sbDir(cfg.ID), 0o700); err != nil {
		return nil, fmt.Errorf("run dir: %w", err)
	}
	inst.runDir = true
	if err := b.mkMountDirs(cfg.ID, uid, stages); err != nil {
		return nil, fmt.Errorf("run dir: %w", err)
	}

	gc := guestapi.Config{
		Version:    guestapi.Version,
		ID:         cfg.ID,
		Hostname:   cfg.Hostname,
		RootLower:  guestStage(0),
		NewRoot:    "newroot",
		ShmBytes:   shmSize(cfg.Limits.MemoryBytes),
		Hosts:      "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t" + cfg.Hostname + "\n",
		ResolvConf: runtime.LoopbackResolvConf,
		Env:        cfg.Env,
	}
	gc.CgroupVersion = int(b.o.Cgroups.Version())
	joinCgroup := func() error {
		if cgWait(); cgErr != nil {
			return fmt.Errorf("cgroup: %w", cgErr)
		}
		paths := inst.cg.DelegatedPaths()
		if b.o.Cgroups.Version() == 2 {
			gc.CgroupExecDir, gc.CgroupMemoryDir = paths["unified"], paths["unified"]
		} else {
			gc.CgroupExecDir, gc.CgroupMemoryDir = paths["pids"], paths["memory"]
		}
		return nil
	}
	lowers, err := templateLowers(cfg, &gc) // layers_linux.go
	if err != nil {
		return nil, err
	}
	inst.ph.mark("dirs")
	if err := b.spawn(ctx, inst, &gc, lowers, lay, joinCgroup); err != nil {
		return nil, volumeSetupError(err) // volumes_linux.go
	}
	b.log.Debug("sandbox started", "sandbox", cfg.ID, "phases", inst.ph.String())
	b.mu.Lock()
	b.live[inst.id] = inst
	b.mu.Unlock()
	return inst, nil
}

// layerSpec says where a sandbox's writable layer is: a host directory
// from the disk store, or tmpfs options for a mount made inside the
// sandbox's namespace.
type layerSpec struct {
	dir   string
	tmpfs string
}

// mkMountDirs makes the empty mount points of one sandbox, searchable by
// its uid only.
func (b *Backend) mkMountDirs(id string, uid, stages int) error {
	mnt := filepath.Join(b.sbDir(id), "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return err
	}
	if err := os.Chown(mnt, uid, uid); err != nil {
		return err
	}
	dirs := []string{filepath.Join(mnt, "newroot"), filepath.Join(mnt, "stage"), filepath.Join(mnt, "layer")}
	for i := 0; i < stages; i++ {
		dirs = append(dirs, filepath.Join(mnt, "stage", strconv.Itoa(i)))
	}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// mountRunTmpfs puts the run directory (sockets, guest logs, empty mount
// points) on a tmpfs, unless it already is one: a server restart reuses the
// mount, and the sockets in it, to reattach sandboxes. Creating a
// sandbox's directories there costs microseconds, where a busy ext4 takes
// milliseconds.
func mountRunTmpfs(dir string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return err
	}
	if st.Type == unix.TMPFS_MAGIC {
		return nil
	}
	if err := unix.Mount("paddock-run", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC,
		"mode=0700,size=256m,nr_inodes=1048576"); err != nil {
		return fmt.Errorf("mount tmpfs on the run directory: %w", err)
	}
	return nil
}

func shmSize(mem int64) int64 {
	if mem <= 0 {
		return 64 << 20
	}
	return mem / 2
}

// cgLimits maps a sandbox's limits onto its cgroup. When writable layers
// are RAM-backed (the tmpfs store), the files a sandbox writes are charged
// to its memory cgroup, so the ceiling is memory + disk: a full disk then
// ends in ENOSPC, never in an OOM kill of whoever wrote the last byte.
func (b *Backend) cgLimits(l runtime.Limits) cgroup.Limits {
	mem := l.MemoryBytes
	if b.o.Disk == nil && mem > 0 {
		mem += l.DiskBytes
	}
	return cgroup.Limits{CPU: l.CPU, MemoryBytes: mem, Pids: l.Pids}
}

// teardown kills inst and releases whatever it holds, in reverse order.
// Safe to call on a half-built instance and more than once.
func (b *Backend) teardown(inst *instance) {
	b.stop(inst)
	b.release(inst)
}

// stop kills the guest — and with it, as PID 1 of its namespace, every
// process of the sandbox — and waits until it is gone.
func (b *Backend) stop(inst *instance) {
	inst.kill()
	if inst.cmdDone != nil || inst.reattached {
		select {
		case <-inst.done:
		case <-time.After(10 * time.Second):
			b.log.Warn("guest did not exit after SIGKILL", "sandbox", inst.id)
		}
	}
}

// release frees a stopped sandbox's cgroups, layer, run directory and slot.
func (b *Backend) release(inst *instance) {
	b.detachNetwork(inst)
	var errsSeen []string
	if inst.cg != nil {
		if err := inst.cg.Destroy(); err != nil {
			errsSeen = append(errsSeen, "cgroup: "+err.Error())
		}
	}
	if inst.layer && b.o.Disk != nil {
		if err := b.o.Disk.Remove(inst.id); err != nil {
			errsSeen = append(errsSeen, "layer: "+err.Error())
		}
	}
	if inst.runDir {
		if err := os.RemoveAll(b.sbDir(inst.id)); err != nil {
			errsSeen = append(errsSeen, "run dir: "+err.Error())
		}
	}
	inst.closeLayer()
	if inst.pidfd > 0 {
		unix.Close(inst.pidfd)
		inst.pidfd = -1
	}
	if inst.guest != nil {
		inst.guest.Close()
	}
	b.mu.Lock()
	delete(b.live, inst.id)
	b.mu.Unlock()
	if inst.slot >= 0 {
		b.slots.free(inst.slot)
		inst.slot = -1
	}
	if len(errsSeen) > 0 {
		b.log.Error("sandbox cleanup incomplete", "sandbox", inst.id, "problems", strings.Join(errsSeen, "; "))
	}
}

// Destroy implements runtime.Backend.
func (b *Backend) Destroy(ctx context.Context, ri runtime.Instance) error {
	inst, ok := ri.(*instance)
	if !ok {
		return errors.New("native: foreign instance")
	}
	inst.destroyOnce.Do(func() {
		// SIGKILL to the namespace's init cannot be caught or blocked: from
		// here nothing in the sandbox runs again, so the caller is answered
		// now and the kernel's teardown, the wait for it and the release of
		// cgroups, layer and slot happen after. A crash meanwhile is swept
		// on the next start.
		inst.kill()
		b.cleanups.Add(1)
		go func() {
			defer b.cleanups.Done()
			b.stop(inst)
			b.release(inst)
		}()
	})
	return nil
}

// Reattach implements runtime.Backend.
func (b *Backend) Reattach(ctx context.Context, id string, raw json.RawMessage) (runtime.Instance, error) {
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("native: bad record: %w", err)
	}
	st, err := hostproc.StartTime(rec.Pid)
	if err != nil || st != rec.StartTime {
		return nil, fmt.Errorf("native: guest of %s is gone", id)
	}
	pidfd, err := unix.PidfdOpen(rec.Pid, 0)
	if err != nil {
		return nil, fmt.Errorf("native: pidfd: %w", err)
	}
	// The pid could have been reused between the check and pidfd_open.
	if st2, err := hostproc.StartTime(rec.Pid); err != nil || st2 != rec.StartTime {
		unix.Close(pidfd)
		return nil, fmt.Errorf("native: guest of %s is gone", id)
	}
	if !b.slots.claim(rec.Slot) {
		unix.Close(pidfd)
		return nil, fmt.Errorf("native: slot %d of %s already taken", rec.Slot, id)
	}
	inst := &instance{b: b, id: id, slot: rec.Slot, uid: rec.UIDBase, pid: rec.Pid, startTime: rec.StartTime,
		pidfd: pidfd, done: make(chan struct{}), layer: true, runDir: true, reattached: true, guestLayer: rec.LayerFD}
	if cg, err := b.o.Cgroups.Open(id); err == nil {
		inst.cg = cg
	}
	inst.guest = guestapi.NewClient(filepath.Join(b.sbDir(id), "guest.sock"))
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if inst.cg != nil {
		if f, err := inst.cg.Frozen(); err == nil && f {
			// Paused before the restart: a frozen agent cannot answer, and
			// thawing it to ask would let the sandbox run. Pid and start
			// time prove it is the same process; Resume checks the agent.
			inst.paused.Store(true)
			inst.unverified.Store(true)
		}
	}
	if inst.paused.Load() {
		// verified on Resume
	} else if h, err := inst.guest.Health(hctx); err != nil || h.Version != guestapi.Version {
		b.slots.free(rec.Slot)
		inst.slot = -1
		unix.Close(pidfd)
		inst.guest.Close()
		return nil, fmt.Errorf("native: guest of %s does not answer: %v", id, err)
	}
	if err := b.reopenLayer(inst); err != nil { // capture_linux.go
		// Runs on; only a snapshot or fork of it will say why not.
		b.log.Warn("reattached sandbox's layer cannot be captured", "sandbox", id, "err", err)
	}
	go inst.watchPidfd()
	b.mu.Lock()
	b.live[id] = inst
	b.mu.Unlock()
	return inst, nil
}

// Cleanup implements runtime.Backend.
func (b *Backend) Cleanup(ctx context.Context, id string, raw json.RawMessage) error {
	if !idRE.MatchString(id) {
		return errs.Invalid("invalid sandbox id")
	}
	var rec record
	_ = json.Unmarshal(raw, &rec)
	inst := &instance{b: b, id: id, slot: -1, done: make(chan struct{}), layer: true, runDir: true, pidfd: -1}
	if cg, err := b.o.Cgroups.Open(id); err == nil {
		inst.cg = cg
	}
	// Kill the guest only if it is provably ours.
	if rec.Pid > 0 {
		if st, err := hostproc.StartTime(rec.Pid); err == nil && st == rec.StartTime {
			if fd, err := unix.PidfdOpen(rec.Pid, 0); err == nil {
				if st2, err := hostproc.StartTime(rec.Pid); err == nil && st2 == rec.StartTime {
					_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
					if inst.cg != nil { // a paused sandbox: v1 acts on SIGKILL only once thawed
						_ = inst.cg.Thaw(ctx)
					}
					hostproc.WaitPidfd(fd, 10*time.Second)
				}
				unix.Close(fd)
			}
		}
	}
	b.teardown(inst)
	return nil
}

// Sweep implements runtime.Backend.
func (b *Backend) Sweep(ctx context.Context, keep map[string]bool) (int, error) {
	found := map[string]bool{}
	if ids, err := b.o.Cgroups.List(); err == nil {
		for _, id := range ids {
			found[id] = true
		}
	}
	if b.o.Disk != nil {
		if ids, err := b.o.Disk.List(); err == nil {
			for _, id := range ids {
				found[id] = true
			}
		}
	}
	if ents, err := os.ReadDir(filepath.Join(b.run, "sandboxes")); err == nil {
		for _, e := range ents {
			found[e.Name()] = true
		}
	}
	n := 0
	for id := range found {
		if keep[id] || !idRE.MatchString(id) {
			continue
		}
		b.mu.Lock()
		_, live := b.live[id]
		b.mu.Unlock()
		if live {
			continue
		}
		b.log.Info("sweeping leftovers of unknown sandbox", "sandbox", id)
		_ = b.Cleanup(ctx, id, nil)
		n++
	}
	n += b.sweepNetwork(ctx, keep)
	return n, nil
}
