//go:build linux

package gvisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Hibernation (docs/gvisor.md): a sandbox's processes, memory and files
// are checkpointed to an image under the data directory and the sandbox
// is destroyed (its RAM, cgroup, layer and network released); waking it
// restores the image under the same id. The image is the sandbox while it
// sleeps: it survives server restarts, and only Wake (once restored) or
// DropHibernated removes it.

func (b *Backend) hibernatedDir() string { return filepath.Join(b.dir, "hibernated") }

// HibernatedImage is where sandbox id's hibernation image lives.
func (b *Backend) HibernatedImage(id string) string { return filepath.Join(b.hibernatedDir(), id) }

// Hibernate checkpoints inst to its hibernation image and destroys it;
// it returns the image's size. On an error before the image is complete
// the sandbox runs on (runsc resumes a sandbox whose save failed) unless
// it exited, which its Done channel says.
func (b *Backend) Hibernate(ctx context.Context, ri runtime.Instance) (int64, error) {
	inst, ok := ri.(*instance)
	if !ok {
		return 0, errors.New("gvisor: foreign instance")
	}
	if err := os.MkdirAll(b.hibernatedDir(), 0o700); err != nil {
		return 0, fmt.Errorf("gvisor: %w", err)
	}
	dir := b.HibernatedImage(inst.id)
	// An image left by a hibernation whose record was never written (a
	// crash between the two) is stale: the sandbox ran on after it.
	if err := os.RemoveAll(dir); err != nil {
		return 0, fmt.Errorf("gvisor: stale image: %w", err)
	}
	m, err := b.checkpointSettled(ctx, inst, CheckpointOptions{Dir: dir})
	if err != nil {
		return 0, err
	}
	// The sentry exits once its memory is saved; the teardown (synchronous:
	// a wake may follow at once under the same id) frees everything else.
	t0 := time.Now()
	inst.destroyOnce.Do(func() { b.teardown(inst) })
	b.log.Debug("gvisor: hibernated", "sandbox", inst.id, "teardown", time.Since(t0))
	return m.Bytes(), nil
}

// Wake restores hibernated sandbox cfg.ID from its image (cfg as for
// Restore: the sandbox's template, limits and network). The image is
// removed once the sandbox runs; a failed wake leaves it, so that the
// caller decides: a full disk is worth retrying, a corrupt image
// (invalid_argument, unsupported) is not.
func (b *Backend) Wake(ctx context.Context, cfg runtime.Config) (runtime.Instance, error) {
	dir := b.HibernatedImage(cfg.ID)
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errs.New(errs.CodeInvalid, "the sandbox's hibernation image is missing")
		}
		return nil, fmt.Errorf("gvisor: hibernation image: %w", err)
	}
	inst, err := b.Restore(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	b.seals.unseal(dir)
	if err := os.RemoveAll(dir); err != nil {
		b.log.Error("gvisor: remove hibernation image", "sandbox", cfg.ID, "err", err)
	}
	return inst, nil
}

// DropHibernated removes sandbox id's hibernation image (the sandbox is
// deleted, failed or expired while asleep).
func (b *Backend) DropHibernated(id string) error {
	if !idRE.MatchString(id) {
		return errs.Invalid("invalid sandbox id")
	}
	b.seals.unseal(b.HibernatedImage(id))
	return os.RemoveAll(b.HibernatedImage(id))
}

// SweepHibernated removes hibernation images (and half-written ones) of
// sandboxes not in keep, and returns how many it removed.
func (b *Backend) SweepHibernated(keep map[string]bool) int {
	ents, err := os.ReadDir(b.hibernatedDir())
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if idRE.MatchString(e.Name()) && keep[e.Name()] {
			continue
		}
		b.log.Info("gvisor: sweeping hibernation image of unknown sandbox", "image", e.Name())
		if err := os.RemoveAll(filepath.Join(b.hibernatedDir(), e.Name())); err == nil {
			n++
		}
	}
	return n
}

// pushNetwork gives the agent at sock the network setup s (as the
// manager's network change does): resolver, hosts block, proxy variables
// (those s does not set are unset) and files.
func pushNetwork(ctx context.Context, sock string, s runtime.NetSetup) error {
	c := guestapi.NewClient(sock)
	defer c.Close()
	nc := guestapi.NetworkConfig{ResolvConf: s.ResolvConf, Hosts: s.Hosts, Env: s.Env, Files: s.Files}
	for _, k := range runtime.NetEnvKeys {
		if _, set := s.Env[k]; !set {
			nc.Unset = append(nc.Unset, k)
		}
	}
	return c.SetNetwork(ctx, nc)
}

// CheckpointTo saves running inst into a new image directory dir and
// leaves it running (a memory snapshot, a fork with memory); it returns
// the image's size. Restore starts sandboxes from the image.
func (b *Backend) CheckpointTo(ctx context.Context, inst runtime.Instance, dir string) (int64, error) {
	gi, ok := inst.(*instance)
	if !ok {
		return 0, errors.New("gvisor: foreign instance")
	}
	m, err := b.checkpointSettled(ctx, gi, CheckpointOptions{Dir: dir, LeaveRunning: true})
	if err != nil {
		return 0, err
	}
	return m.Bytes(), nil
}

// CheckpointTemp is CheckpointTo for an image that is restored at once
// and then removed (a fork with memory): not flushed to disk
// (CheckpointOptions.Temporary).
func (b *Backend) CheckpointTemp(ctx context.Context, inst runtime.Instance, dir string) (int64, error) {
	gi, ok := inst.(*instance)
	if !ok {
		return 0, errors.New("gvisor: foreign instance")
	}
	m, err := b.checkpointSettled(ctx, gi, CheckpointOptions{Dir: dir, LeaveRunning: true, Temporary: true})
	if err != nil {
		return 0, err
	}
	return m.Bytes(), nil
}

// checkpointAttempts bounds the tries of checkpointSettled.
const checkpointAttempts = 3

// checkpointSettled is Checkpoint once the agent answers, tried again
// while the sandbox runs on after a failure. Right after a checkpoint the
// agent is re-dialling: gVisor cannot save a host socket it has shut down
// but not yet closed (runsc checkpoint fails, the sandbox runs on), so a
// second checkpoint soon after the first waits for the new connection.
func (b *Backend) checkpointSettled(ctx context.Context, inst *instance, o CheckpointOptions) (*Manifest, error) {
	var err error
	for attempt := range checkpointAttempts {
		b.settleAgent(ctx, inst)
		var m *Manifest
		if m, err = b.Checkpoint(ctx, inst, o); err == nil || errs.CodeOf(err) != errs.CodeInternal {
			return m, err
		}
		select {
		case <-inst.done:
			return nil, err
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
		b.log.Warn("gvisor: checkpoint failed; trying again", "sandbox", inst.id, "attempt", attempt+1, "err", err)
	}
	return nil, err
}

// settleAgent waits (briefly) until the agent answers on a connection of
// its own.
func (b *Backend) settleAgent(ctx context.Context, inst *instance) {
	if inst.guest == nil {
		return
	}
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, _ = inst.guest.Health(hctx)
}
