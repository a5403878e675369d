//go:build linux

package gvisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/hostproc"
	"github.com/paddockhq/paddock/internal/runtime"
)

// record is what the manager persists for each gVisor sandbox.
type record struct {
	Pid       int    `json:"pid"` // the sandbox's sentry (runsc-sandbox)
	StartTime uint64 `json:"start_time"`
	Token     string `json:"token"`
	// NetPid is the id the network attachment was made under (the thread
	// that held the namespace while runsc took it); 0: no network.
	NetPid int   `json:"net_pid,omitempty"`
	Pids   int64 `json:"pids,omitempty"` // the process limit set inside
	// Layer is the directory of gVisor's overlay files; DiskBytes bounds
	// each upper layer.
	Layer     string `json:"layer"`
	DiskBytes int64  `json:"disk_bytes"`
	// What the spec was made of: a restore must present the same spec.
	Hostname string `json:"hostname"`
	ShmBytes int64  `json:"shm_bytes"`
	// Volumes is how many volumes the sandbox mounts (volumes_linux.go):
	// such a sandbox is never checkpointed.
	Volumes int `json:"volumes,omitempty"`
	// NoFile is the agent's (and so every workload's) descriptor limit;
	// 0 (records and images from before it was recorded): legacyNoFile.
	NoFile uint64 `json:"nofile,omitempty"`
}

// What an instance holds, released in reverse by teardown.
const (
	ownCgroup = 1 << iota
	ownLayer
	ownDirs
	ownRunsc // runsc has state for it
	ownNetwork
	ownAll = ownCgroup | ownLayer | ownDirs | ownRunsc | ownNetwork
)

// instance is one gVisor sandbox.
type instance struct {
	b     *Backend
	id    string
	rec   record
	owned int
	cg    *cgroup.Group
	link  *guestLink
	guest *guestapi.Client
	pidfd int

	netMu   sync.Mutex
	netGone bool // detached once: gVisor cannot take a new interface

	done        chan struct{}
	doneOnce    sync.Once
	destroyOnce sync.Once
	released    chan struct{}
}

func (b *Backend) newInstance(id string) *instance {
	return &instance{b: b, id: id, pidfd: -1, done: make(chan struct{}), released: make(chan struct{})}
}

func (i *instance) ID() string              { return i.id }
func (i *instance) Guest() *guestapi.Client { return i.guest }
func (i *instance) Done() <-chan struct{}   { return i.done }
func (i *instance) markDone()               { i.doneOnce.Do(func() { close(i.done) }) }

func (i *instance) Record() json.RawMessage {
	b, _ := json.Marshal(i.rec)
	return b
}

// SetLimits changes the CPU and memory ceilings (the host's cgroup). The
// process limit lives inside gVisor and is fixed at create.
func (i *instance) SetLimits(l runtime.Limits) error {
	if l.Pids != i.rec.Pids {
		return errs.New(errs.CodeUnsupported, "the process limit of a running gVisor sandbox cannot change")
	}
	if i.cg == nil {
		return errNotStarted
	}
	return i.cg.SetLimits(cgLimits(l))
}

// cgLimits maps a sandbox's limits onto the host cgroup that holds its
// sentry and gofer. Processes inside gVisor are goroutines of the sentry,
// so the host's pids controller would count threads, not processes: the
// process limit is enforced by gVisor's own pids controller instead
// (guestapi.GVisorBoot.Pids), and the host's is only a generous bound on
// the sentry's threads.
func cgLimits(l runtime.Limits) cgroup.Limits {
	out := cgroup.Limits{CPU: l.CPU, MemoryBytes: l.MemoryBytes}
	if l.Pids > 0 {
		out.Pids = 4*l.Pids + 256
	}
	return out
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
		if n := oomKills(i.b.o.Cgroups, i.id); n > s.OOMKills {
			s.OOMKills = n
		}
	}
	if i.b.o.Disk != nil {
		if u, err := i.b.o.Disk.Usage(i.id); err == nil {
			s.DiskBytes, s.DiskInodes = u.Bytes, u.Inodes
		}
	}
	select {
	case <-i.done:
		return s, nil
	default:
	}
	if i.guest != nil {
		// The number of processes is the sandbox's, not the sentry's
		// threads that the host's group counts; disk use is what gVisor's
		// overlay reports inside (its upper layers are unlinked files).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if h, err := i.guest.Health(ctx); err == nil {
			s.Pids = int64(h.Procs)
			if i.b.o.Disk == nil {
				s.DiskBytes, s.DiskInodes = h.DiskBytes, h.DiskInodes
			}
		}
	}
	return s, nil
}

// kill SIGKILLs the sentry: every process of the sandbox is a task in it,
// and the gofer exits once the sentry is gone.
func (i *instance) kill() {
	if i.pidfd >= 0 {
		_ = unix.PidfdSendSignal(i.pidfd, unix.SIGKILL, nil, 0)
	}
}

// watch waits for the sentry to exit, on a descriptor of its own (release
// closes the instance's): it ends when the sentry does or when the
// instance is released.
func (i *instance) watch() {
	fd, err := unix.FcntlInt(uintptr(i.pidfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return
	}
	go func() {
		defer unix.Close(fd)
		for !hostproc.WaitPidfd(fd, time.Second) {
			select {
			case <-i.released:
				return
			default:
			}
		}
		i.markDone()
	}()
}

// detach drops the host's end of the service channel without touching the
// sandbox (server shutdown: the agent redials the next server).
func (i *instance) detach() {
	if i.link != nil {
		i.link.Close()
	}
	if i.guest != nil {
		i.guest.Close()
	}
}

// openPidfd opens a pidfd on pid if it is still the process that started
// at startTime (pid reuse), else returns -1.
func openPidfd(pid int, startTime uint64) int {
	if pid <= 0 {
		return -1
	}
	if st, err := hostproc.StartTime(pid); err != nil || st != startTime {
		return -1
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	if st, err := hostproc.StartTime(pid); err != nil || st != startTime {
		unix.Close(fd)
		return -1
	}
	return fd
}

// teardown kills inst and releases whatever it holds. Safe on a half-built
// instance; once only.
func (b *Backend) teardown(inst *instance) {
	inst.kill()
	gone := false
	if inst.pidfd >= 0 {
		if gone = hostproc.WaitPidfd(inst.pidfd, 10*time.Second); !gone {
			b.log.Warn("gvisor: sentry did not exit after SIGKILL", "sandbox", inst.id)
		}
	}
	inst.markDone()
	b.release(inst, gone)
}

// release frees a stopped sandbox's runsc state, network, cgroups, layer
// and directories. sentryGone says the recorded sentry was seen to exit.
func (b *Backend) release(inst *instance, sentryGone bool) {
	var problems []string
	t0 := time.Now()
	inst.detach()
	var tDelete time.Duration
	if inst.owned&ownRunsc != 0 {
		// runsc delete kills the sentry and the gofer, waits for them,
		// removes the groups it made and its state — a runsc process of its
		// own, which costs as much as a sandbox's start under load (seen:
		// 1.3–2 s). With the sentry seen to exit and the sandbox's group at
		// hand, none of it is needed: destroying the group below kills the
		// gofer (runsc joins it to the group) and waits until the group is
		// empty, removeRunscCgroups removes runsc's own groups, and the
		// state is three files. Otherwise (a sentry not known, or no group)
		// runsc delete does it; a sandbox that never got as far as runsc
		// has nothing to delete.
		if !sentryGone || inst.cg == nil || inst.owned&ownCgroup == 0 {
			if err := b.runRunsc(context.Background(), 30*time.Second, "delete", "--force", inst.id); err != nil &&
				!strings.Contains(err.Error(), "does not exist") {
				problems = append(problems, "runsc delete: "+err.Error())
			}
		}
		// A runsc killed before it wrote its state leaves its lock file
		// (runsc delete then finds no sandbox to delete).
		for _, name := range runscStateFiles(inst.id) {
			if err := os.Remove(filepath.Join(b.stateDir(), name)); err != nil && !os.IsNotExist(err) {
				problems = append(problems, "runsc state: "+err.Error())
			}
		}
	}
	tDelete = time.Since(t0)
	if inst.owned&ownNetwork != 0 && b.o.Network != nil {
		if err := b.o.Network.Detach(context.Background(), inst.id); err != nil {
			problems = append(problems, "network: "+err.Error())
		}
	}
	if inst.owned&ownCgroup != 0 && inst.cg != nil {
		if err := inst.cg.Destroy(); err != nil {
			problems = append(problems, "cgroup: "+err.Error())
		}
	}
	if inst.owned&ownCgroup != 0 {
		if err := removeRunscCgroups(b.o.Cgroups, inst.id); err != nil {
			problems = append(problems, "runsc cgroups: "+err.Error())
		}
	}
	if inst.owned&ownLayer != 0 && b.o.Disk != nil {
		if err := b.o.Disk.Remove(inst.id); err != nil {
			problems = append(problems, "layer: "+err.Error())
		}
	}
	if inst.owned&ownDirs != 0 {
		for _, d := range []string{b.sbDir(inst.id), b.ctlDir(inst.id)} {
			if err := os.RemoveAll(d); err != nil {
				problems = append(problems, "dir: "+err.Error())
			}
		}
	}
	if inst.pidfd >= 0 {
		unix.Close(inst.pidfd)
		inst.pidfd = -1
	}
	b.mu.Lock()
	if b.live[inst.id] == inst {
		delete(b.live, inst.id)
	}
	b.mu.Unlock()
	b.log.Debug("gvisor: released", "sandbox", inst.id, "runsc_delete", tDelete, "done", time.Since(t0))
	if len(problems) > 0 {
		b.log.Error("gvisor: sandbox cleanup incomplete", "sandbox", inst.id, "problems", strings.Join(problems, "; "))
	}
	close(inst.released)
}

// runscStateFiles are what runsc keeps in its root directory for sandbox
// id: its state, the state's lock and the sandbox's control socket.
func runscStateFiles(id string) []string {
	return []string{id + "_sandbox:" + id + ".state", id + "_sandbox:" + id + ".lock", "runsc-" + id + ".sock"}
}

// Destroy implements runtime.Backend. The sentry is SIGKILLed at once (no
// sandbox code runs after that); the wait for it and the release happen
// after the caller is answered, as on native.
func (b *Backend) Destroy(ctx context.Context, ri runtime.Instance) error {
	inst, ok := ri.(*instance)
	if !ok {
		return errors.New("gvisor: foreign instance")
	}
	inst.destroyOnce.Do(func() {
		inst.kill()
		b.cleanups.Add(1)
		go func() {
			defer b.cleanups.Done()
			b.teardown(inst)
		}()
	})
	return nil
}

// Reattach implements runtime.Backend: the sentry must still be the
// recorded process, and its agent must dial the new server's socket and
// answer.
func (b *Backend) Reattach(ctx context.Context, id string, raw json.RawMessage) (runtime.Instance, error) {
	if !idRE.MatchString(id) {
		return nil, errs.Invalid("invalid sandbox id")
	}
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("gvisor: bad record: %w", err)
	}
	inst := b.newInstance(id)
	inst.rec = rec
	inst.owned = ownAll // everything it had is its own again
	if inst.pidfd = openPidfd(rec.Pid, rec.StartTime); inst.pidfd < 0 {
		return nil, fmt.Errorf("gvisor: sentry of %s is gone", id)
	}
	if cg, err := b.o.Cgroups.Open(id); err == nil {
		inst.cg = cg
	}
	var err error
	inst.link, err = newGuestLink(b.inSocket(id), b.proxySocket(id), rec.Token, b.log)
	if err != nil {
		unix.Close(inst.pidfd)
		return nil, fmt.Errorf("gvisor: %w", err)
	}
	inst.watch()
	if err := b.waitReady(ctx, inst, 10*time.Second); err != nil {
		inst.link.Close()
		return nil, err
	}
	inst.guest = guestapi.NewClient(b.proxySocket(id))
	b.mu.Lock()
	b.live[id] = inst
	b.mu.Unlock()
	return inst, nil
}

func (b *Backend) proxySocket(id string) string { return filepath.Join(b.sbDir(id), "guest.sock") }

// waitReady waits for the agent's first connection and a health answer.
func (b *Backend) waitReady(ctx context.Context, inst *instance, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-inst.link.ready:
	case <-inst.done:
		return fmt.Errorf("gvisor: sandbox exited during start: %s", b.guestLogTail(inst.id))
	case <-t.C:
		return errs.Wrap(errs.CodeUnavailable, fmt.Errorf("gvisor: agent did not connect within %s: %s", timeout, b.guestLogTail(inst.id)),
			"the gVisor sandbox did not start in time: the host is too busy, retry later")
	case <-ctx.Done():
		return ctx.Err()
	}
	c := guestapi.NewClient(b.proxySocket(inst.id))
	defer c.Close()
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h, err := c.Health(hctx)
	if err != nil {
		err = fmt.Errorf("gvisor: agent does not answer: %w", err)
		if ctx.Err() == nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
			return errs.Wrap(errs.CodeUnavailable, err, "the gVisor sandbox did not start in time: the host is too busy, retry later")
		}
		return err
	}
	if h.Version != guestapi.Version {
		return fmt.Errorf("gvisor: agent speaks protocol %d, want %d", h.Version, guestapi.Version)
	}
	return nil
}

// guestLogTail is the end of the agent's log, for error messages in the
// server's log.
func (b *Backend) guestLogTail(id string) string {
	f, err := os.Open(filepath.Join(b.sbDir(id), "guest.log"))
	if err != nil {
		return "no log"
	}
	defer f.Close()
	st, _ := f.Stat()
	off := max(st.Size()-4096, 0)
	buf := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(buf, off)
	return tail(string(buf[:n]))
}
