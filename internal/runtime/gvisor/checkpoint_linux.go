//go:build linux

package gvisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
)

// CheckpointOptions say how to checkpoint a sandbox.
type CheckpointOptions struct {
	// Dir is the image directory to create; it must not exist. Its parent
	// must (images belong under the data directory, next to what they
	// are a snapshot of).
	Dir string
	// LeaveRunning keeps the sandbox running after the checkpoint (a
	// snapshot to fork from); otherwise its sentry exits once its memory is
	// saved (hibernation: the caller then destroys the instance, which
	// frees its RAM).
	LeaveRunning bool
	// Temporary says the image is restored at once and then removed (a
	// fork with memory): it is summed but not flushed to disk — a crash
	// loses nothing worth keeping, and the caller's tmp directory is
	// emptied at start. Hibernation images and memory snapshots are
	// flushed.
	Temporary bool
}

// checkpointTimeout bounds one runsc checkpoint (it writes the sandbox's
// whole memory).
const checkpointTimeout = 5 * time.Minute

// Checkpoint saves a running sandbox — its processes, their memory and
// descriptors, and its files (gVisor's overlay layers are part of the
// image) — into a new image directory. The image is written under a
// temporary name and renamed into place with its manifest last, so a
// crash or an error leaves either no image or a complete one.
//
// The host's connections to the agent are closed by gVisor as it saves
// (requests in flight fail); the agent dials again when the sandbox runs
// on (LeaveRunning) or is restored.
func (b *Backend) Checkpoint(ctx context.Context, ri runtime.Instance, o CheckpointOptions) (*Manifest, error) {
	inst, ok := ri.(*instance)
	if !ok {
		return nil, errors.New("gvisor: foreign instance")
	}
	select {
	case <-inst.done:
		return nil, errs.New(errs.CodeSandboxNotActive, "the sandbox is not running")
	default:
	}
	if inst.rec.Volumes > 0 {
		return nil, errVolumeCheckpoint()
	}
	if o.Dir == "" || !filepath.IsAbs(o.Dir) {
		return nil, errs.Invalid("checkpoint directory must be an absolute path")
	}
	if _, err := os.Lstat(o.Dir); err == nil {
		return nil, errs.New(errs.CodeConflict, "the checkpoint image already exists")
	}
	tmp, err := os.MkdirTemp(filepath.Dir(o.Dir), "."+filepath.Base(o.Dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("gvisor: checkpoint directory: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(tmp)
		}
	}()
	t0 := time.Now()
	args := []string{"checkpoint", "--image-path", tmp, "--compression", "none"}
	if o.LeaveRunning {
		args = append(args, "--leave-running")
	}
	args = append(args, inst.id)
	err = b.runRunsc(ctx, checkpointTimeout, args...)
	tRunsc := time.Since(t0)
	// gVisor closed the agent's connections as it saved: the idle ones
	// the host holds are dead (the agent dials new ones).
	inst.link.drain()
	inst.guest.Close()
	if err != nil {
		if isNoSpace(tmp) {
			return nil, errs.Wrap(errs.CodeLimit, err, "not enough disk space for the checkpoint image")
		}
		return nil, fmt.Errorf("gvisor: %w", err)
	}
	// Summed and flushed in one pass; the manifest, written last, is
	// flushed with the directory.
	files, err := fileSums(tmp, !o.Temporary)
	if err != nil {
		return nil, fmt.Errorf("gvisor: checkpoint image: %w", err)
	}
	tSums := time.Since(t0)
	m := &Manifest{Format: manifestFormat, Runsc: RunscVersion, Sandbox: inst.id, Token: inst.rec.Token,
		Created: time.Now().UTC(), Networked: inst.rec.NetPid != 0, // started with --network sandbox DiskBytes: inst.rec.DiskBytes,
		Pids: inst.rec.Pids, Hostname: inst.rec.Hostname, ShmBytes: inst.rec.ShmBytes, NoFile: inst.rec.NoFile, Files: files}
	if err := writeJSON(filepath.Join(tmp, ManifestName), m, 0o600); err != nil {
		return nil, fmt.Errorf("gvisor: manifest: %w", err)
	}
	if !o.Temporary {
		if err := syncManifest(tmp); err != nil {
			return nil, fmt.Errorf("gvisor: checkpoint image: %w", err)
		}
	}
	if err := os.Rename(tmp, o.Dir); err != nil {
		return nil, fmt.Errorf("gvisor: checkpoint image: %w", err)
	}
	done = true
	if !o.Temporary {
		_ = syncDir(filepath.Dir(o.Dir))
	}
	b.seals.seal(o.Dir, m)
	b.log.Debug("gvisor: checkpointed", "sandbox", inst.id, "bytes", m.Bytes(), "runsc", tRunsc, "summed", tSums, "done", time.Since(t0))
	return m, nil
}

// Restore starts sandbox cfg.ID from the image in dir: its processes carry
// on from where the checkpoint left them, with the files they had. Each
// restore of one image is an independent sandbox (a fork); cfg gives the
// new sandbox's id, template (it must be the one the image was made on),
// limits and network. The image is verified first (readManifest); a bad
// image, a full disk or a failed restore leaves nothing behind.
func (b *Backend) Restore(ctx context.Context, cfg runtime.Config, dir string) (_ runtime.Instance, err error) {
	if !idRE.MatchString(cfg.ID) {
		return nil, errs.Invalid("invalid sandbox id")
	}
	if cfg.Template == nil {
		return nil, errs.Invalid("no template")
	}
	if err := checkTemplate(cfg.Template); err != nil {
		return nil, err
	}
	t0 := time.Now()
	m, summed, err := b.verifyImage(dir)
	if err != nil {
		return nil, err
	}
	tManifest := time.Since(t0)
	if cfg.Network.Networked() && !m.Networked {
		// As SetNetwork: gVisor's netstack takes its interfaces at start,
		// and a sandbox checkpointed without one was started without.
		return nil, errs.New(errs.CodeUnsupported, "the checkpointed gVisor sandbox had no network; a restore of it cannot be given one")
	}
	if cfg.Network.Networked() && b.o.Network == nil {
		return nil, errs.New(errs.CodeUnsupported, "network mode %q is not available on this server (no sandbox networking)", cfg.Network.Mode)
	}
	if m.DiskBytes != cfg.Limits.DiskBytes {
		// gVisor's overlay layers are restored at the size they were made.
		cfg.Limits.DiskBytes = m.DiskBytes
	}
	inst := b.newInstance(cfg.ID)
	// The spec is the checkpointed sandbox's (runsc refuses any other):
	// its hostname and shared-memory size, whatever cfg says.
	inst.rec = record{Token: m.Token, Pids: m.Pids, Hostname: m.Hostname, ShmBytes: m.ShmBytes, NoFile: m.NoFile}
	defer func() {
		if err != nil {
			b.teardown(inst)
		}
	}()
	if err := b.prepare(inst, cfg.Limits); err != nil {
		return nil, err
	}
	if err := checkSpace(inst.rec.Layer, m.Bytes()); err != nil {
		return nil, err
	}
	if len(cfg.Volumes) > 0 {
		return nil, errVolumeCheckpoint()
	}
	rfs := b.rootfsOf(cfg.ID, cfg.Template)
	for _, t := range rfs.Trees {
		if err := os.Mkdir(t.At, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox directory: %w", err)
		}
	}
	if inst.link, err = newGuestLink(b.inSocket(cfg.ID), b.proxySocket(cfg.ID), m.Token, b.log); err != nil {
		return nil, fmt.Errorf("guest socket: %w", err)
	}
	// The network: a new namespace with the sandbox's veth, attached
	// (egress rules, proxy, resolver) under cfg.ID. gVisor puts the
	// namespace's interfaces, addresses and routes in place of those the
	// image recorded (runsc's restorer keeps the new stack), so a fork gets
	// its own address and a hibernated sandbox its attachment back.
	netns := ""
	var setup *runtime.NetSetup // what the agent must install once restored
	if m.Networked {
		ns, err := newNetNS()
		if err != nil {
			return nil, fmt.Errorf("network: %w", err)
		}
		defer ns.Release()
		netns = ns.Path
		inst.owned |= ownNetwork
		inst.rec.NetPid = ns.Tid
		if cfg.Network.Networked() {
			s, err := b.o.Network.Attach(ctx, cfg.ID, ns.Tid, *cfg.Network)
			if err != nil {
				return nil, err
			}
			setup = &s
		} else {
			// Restored without its network: loopback only, as after a
			// SetNetwork to none.
			inst.netGone = true
			s := runtime.LoopbackOnly()
			setup = &s
		}
	}
	if err := b.writeSpec(inst, rfs, netns); err != nil {
		return nil, err
	}
	tPrep := time.Since(t0)
	// --background: runsc returns once the kernel state is loaded and the
	// sandbox runs; the memory pages (most of the image) go on loading
	// behind it, on demand first (the image is uncompressed, which this
	// needs). The sentry holds the page file open, so the image may be
	// removed once this returns (Wake, forks); a page read failing later
	// kills the sandbox, which its Done channel reports.
	if err := b.start(ctx, inst, rfs, m.Networked, "restore", "--detach", "--background", "--image-path", dir); err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "gVisor could not restore the checkpoint image")
	}
	tRunsc := time.Since(t0)
	if err := b.waitReady(ctx, inst, b.o.ReadyTimeout); err != nil {
		return nil, err
	}
	if setup != nil {
		// The agent's memory holds the checkpointed sandbox's resolver,
		// proxy variables and CA: this sandbox's replace them before
		// anyone else talks to it.
		if err := pushNetwork(ctx, b.proxySocket(cfg.ID), *setup); err != nil {
			return nil, fmt.Errorf("gvisor: restored agent refused its network: %w", err)
		}
	}
	b.log.Debug("gvisor: restored", "sandbox", cfg.ID, "manifest", tManifest, "summed", summed, "prepared", tPrep, "runsc", tRunsc, "ready", time.Since(t0))
	inst.guest = guestapi.NewClient(b.proxySocket(cfg.ID))
	b.mu.Lock()
	b.live[inst.id] = inst
	b.mu.Unlock()
	return inst, nil
}

// checkSpace refuses a restore that would not fit: the overlay layers
// restored from the image land in dir.
func checkSpace(dir string, need int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("statfs: %w", err)
	}
	if free := int64(st.Bavail) * st.Bsize; free < need+64<<20 {
		return errs.New(errs.CodeLimit, "not enough disk space to restore the sandbox (%d MiB free, %d MiB needed)", free>>20, (need+64<<20)>>20)
	}
	return nil
}

func isNoSpace(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && int64(st.Bavail)*st.Bsize < 16<<20
}

// syncManifest flushes an image's manifest and the image directory's
// entries (fileSums flushed the other files).
func syncManifest(dir string) error {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir flushes dir's entries to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
