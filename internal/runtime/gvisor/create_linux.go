//go:build linux

package gvisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/hostproc"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/template"
)

const maxTrees = 8

// maxImageLayers bounds an image template's stack: internal/oci refuses
// images of more than 127 layers; a build may add one.
const maxImageLayers = 128

// checkTemplate refuses a template this backend cannot mount.
func checkTemplate(t *template.Template) error {
	if t.Kind == template.KindImage {
		if len(t.Layers) == 0 || len(t.Layers) > maxImageLayers {
			return errs.Invalid("template %s has %d layers: want 1 to %d", t.Name, len(t.Layers), maxImageLayers)
		}
		return nil
	}
	if len(t.Overlays)+1 > maxTrees {
		return fmt.Errorf("template %s has too many layers", t.Name)
	}
	return nil
}

// Create implements runtime.Backend.
func (b *Backend) Create(ctx context.Context, cfg runtime.Config) (_ runtime.Instance, err error) {
	if !idRE.MatchString(cfg.ID) {
		return nil, errs.Invalid("invalid sandbox id")
	}
	if cfg.Template == nil {
		return nil, errs.Invalid("no template")
	}
	if err := checkTemplate(cfg.Template); err != nil {
		return nil, err
	}
	if cfg.Network.Networked() && b.o.Network == nil {
		return nil, errs.New(errs.CodeUnsupported, "network mode %q is not available on this server (no sandbox networking)", cfg.Network.Mode)
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	inst := b.newInstance(cfg.ID)
	inst.rec = record{Token: token, Pids: cfg.Limits.Pids, Hostname: cfg.Hostname, ShmBytes: shmSize(cfg.Limits.MemoryBytes),
		NoFile: workloadNoFile()}
	defer func() {
		if err != nil {
			b.teardown(inst)
		}
	}()
	if err := b.prepare(inst, cfg.Limits); err != nil {
		return nil, err
	}
	tPrep := time.Since(t0)
	rfs := b.rootfsOf(cfg.ID, cfg.Template)
	for _, t := range rfs.Trees {
		if err := os.Mkdir(t.At, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox directory: %w", err)
		}
	}
	if err := b.withVolumes(inst, &rfs, cfg.Volumes); err != nil { // volumes_linux.go
		return nil, err
	}
	gc := guestapi.Config{
		Version:    guestapi.Version,
		ID:         cfg.ID,
		Hostname:   cfg.Hostname,
		ShmBytes:   inst.rec.ShmBytes,
		Hosts:      "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t" + cfg.Hostname + "\n",
		ResolvConf: runtime.LoopbackResolvConf,
		Env:        cfg.Env,
	}
	// An image template's ENV, WORKDIR and USER, as natively.
	if err := runtime.ApplyImageDefaults(cfg, &gc); err != nil {
		return nil, err
	}
	var ns *netNS
	if cfg.Network.Networked() {
		// The interface must be in the namespace before runsc starts:
		// gVisor's netstack takes the namespace's interfaces, addresses
		// and routes once, at start.
		if ns, err = newNetNS(); err != nil {
			return nil, fmt.Errorf("network: %w", err)
		}
		defer ns.Release()
		inst.owned |= ownNetwork
		inst.rec.NetPid = ns.Tid
		setup, err := b.o.Network.Attach(ctx, cfg.ID, ns.Tid, *cfg.Network)
		if err != nil {
			return nil, err
		}
		setup.Apply(&gc)
	}
	tNet := time.Since(t0)
	boot := guestapi.GVisorBoot{Config: gc, Token: token, Pids: cfg.Limits.Pids}
	if err := writeJSON(filepath.Join(b.ctlDir(cfg.ID), guestapi.GVisorBootFile), boot, 0o600); err != nil {
		return nil, fmt.Errorf("boot file: %w", err)
	}
	if inst.link, err = newGuestLink(b.inSocket(cfg.ID), b.proxySocket(cfg.ID), token, b.log); err != nil {
		return nil, fmt.Errorf("guest socket: %w", err)
	}
	netns := ""
	if ns != nil {
		netns = ns.Path
	}
	if err := b.writeSpec(inst, rfs, netns); err != nil {
		return nil, err
	}
	tSpec := time.Since(t0)
	if err := b.start(ctx, inst, rfs, ns != nil, "run", "--detach"); err != nil {
		return nil, err
	}
	tRunsc := time.Since(t0)
	if err := b.waitReady(ctx, inst, b.o.ReadyTimeout); err != nil {
		return nil, err
	}
	b.log.Debug("gvisor: created", "sandbox", cfg.ID, "prepared", tPrep, "network", tNet, "spec", tSpec,
		"runsc", tRunsc, "ready", time.Since(t0))
	// The boot file holds the sandbox's environment: once read, it goes.
	_ = os.Remove(filepath.Join(b.ctlDir(cfg.ID), guestapi.GVisorBootFile))
	inst.guest = guestapi.NewClient(b.proxySocket(cfg.ID))
	b.mu.Lock()
	b.live[inst.id] = inst
	b.mu.Unlock()
	return inst, nil
}

// prepare makes a new sandbox's cgroup, directories and writable layer.
func (b *Backend) prepare(inst *instance, l runtime.Limits) error {
	cg, err := b.o.Cgroups.Create(inst.id, cgLimits(l), 0, 0)
	if err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	inst.cg = cg
	inst.owned |= ownCgroup | ownDirs
	for _, d := range []string{b.sbDir(inst.id), b.ctlDir(inst.id)} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("sandbox directory: %w", err)
		}
	}
	for _, d := range []string{"bundle", "rootfs", "trees"} {
		if err := os.Mkdir(filepath.Join(b.sbDir(inst.id), d), 0o700); err != nil {
			return fmt.Errorf("sandbox directory: %w", err)
		}
	}
	// The writable layer: gVisor's overlay keeps its upper layers in
	// unlinked files in this directory, each at most DiskBytes (ENOSPC
	// inside past it). With a quota'd store the directory is the
	// sandbox's layer there, so its usage counts against that quota too.
	if b.o.Disk != nil {
		layer, err := b.o.Disk.Create(inst.id, l.DiskBytes, l.DiskInodes, 0, 0)
		if err != nil {
			return fmt.Errorf("writable layer: %w", err)
		}
		inst.owned |= ownLayer
		inst.rec.Layer = layer.Dir
	} else {
		inst.rec.Layer = filepath.Join(b.sbDir(inst.id), "layer")
		if err := os.Mkdir(inst.rec.Layer, 0o700); err != nil {
			return fmt.Errorf("writable layer: %w", err)
		}
	}
	inst.rec.DiskBytes = l.DiskBytes
	return nil
}

func (b *Backend) rootfsOf(id string, t *template.Template) rootfs {
	r := rootfs{Target: filepath.Join(b.sbDir(id), "rootfs"), Upper: filepath.Join(b.sbDir(id), "mountpoints"), Root: t.Root}
	if t.Kind == template.KindImage {
		r.Root, r.Layers = "", t.Layers
	}
	for i, o := range t.Overlays {
		r.Trees = append(r.Trees, subtree{Path: o.Path, Source: o.Source,
			At: filepath.Join(b.sbDir(id), "trees", strconv.Itoa(i))})
	}
	return r
}

// workloadNoFile is the descriptor limit of a gVisor sandbox's agent and
// workloads: the server's own hard limit, which a native sandbox's
// workloads inherit, so that both runtimes give a sandbox the same
// ceiling (the fixed 1<<20 before let a workload open 52 times as many
// descriptors as natively here, each a system call of gVisor's kernel:
// TestResourceFileDescriptors passed its exec bound).
func workloadNoFile() uint64 {
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) != nil || r.Max == 0 || r.Max > legacyNoFile {
		return legacyNoFile
	}
	return r.Max
}

// writeSpec writes the sandbox's OCI bundle.
func (b *Backend) writeSpec(inst *instance, rfs rootfs, netns string) error {
	spec := buildSpec(specParams{
		Rootfs:      filepath.Join(b.sbDir(inst.id), "rootfs"),
		Hostname:    inst.rec.Hostname,
		BinDir:      b.binDir(),
		CtlDir:      b.ctlDir(inst.id),
		NetNS:       netns,
		CgroupsPath: runscCgroupsPath(b.o.Cgroups, inst.id),
		ShmBytes:    inst.rec.ShmBytes,
		NoFile:      inst.rec.NoFile,
		Trees:       rfs.Trees,
		Nested:      rfs.Nested,
		Volumes:     rfs.Volumes,
	})
	return writeJSON(filepath.Join(b.sbDir(inst.id), "bundle", "config.json"), spec, 0o600)
}

// start mounts the root filesystem in a private mount namespace and runs
// runsc command (run or restore) from there; runsc returns once the
// sandbox runs. It then records the sentry's pid and watches it.
func (b *Backend) start(ctx context.Context, inst *instance, rfs rootfs, networked bool, command ...string) error {
	sb := b.sbDir(inst.id)
	logf, err := os.OpenFile(filepath.Join(sb, "guest.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("guest log: %w", err)
	}
	defer logf.Close()
	pidFile := filepath.Join(sb, "sandbox.pid")
	network := "none"
	if networked {
		network = "sandbox"
	}
	// gVisor's overlay over every writable tree, uppers in unlinked files
	// in the layer directory, each bounded (docs/gvisor.md: disk).
	// With volumes, only the root is overlaid (the template's trees are
	// bound inside it on the host): a volume's writes must reach its
	// directory, and --overlay2 cannot leave one writable bind out.
	which := "all"
	if rfs.Nested {
		which = "root"
	}
	overlay := which + ":dir=" + inst.rec.Layer + ",size=" + strconv.FormatInt(max(inst.rec.DiskBytes, 1<<20), 10)
	args := append([]string{"--network", network, "--overlay2", overlay, "--log", filepath.Join(sb, "runsc.log")}, command...)
	args = append(args, "--bundle", filepath.Join(sb, "bundle"), "--pid-file", pidFile, inst.id)
	ctx, cancel := context.WithTimeout(ctx, b.o.ReadyTimeout)
	defer cancel()
	inst.owned |= ownRunsc
	err = inMountNS(rfs.mount, func() error {
		cmd := b.command(args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start runsc: %w", err)
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case err := <-waited:
			if err != nil {
				return fmt.Errorf("runsc %s: %w: %s", command[0], err, b.runscLogTail(inst.id))
			}
			return nil
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-waited
			err := fmt.Errorf("runsc %s: %w", command[0], ctx.Err())
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// Seen on a host far past its CPUs (load 170+): the
				// caller may retry, nothing is wrong with the sandbox.
				return errs.Wrap(errs.CodeUnavailable, err, "the gVisor sandbox did not start in time: the host is too busy, retry later")
			}
			return err
		}
	})
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		return fmt.Errorf("runsc pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 0 {
		return fmt.Errorf("runsc pid file: %q", raw)
	}
	st, err := hostproc.StartTime(pid)
	if err != nil {
		return fmt.Errorf("sentry vanished: %w", err)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd: %w", err)
	}
	inst.rec.Pid, inst.rec.StartTime, inst.pidfd = pid, st, fd
	inst.watch()
	return nil
}

func (b *Backend) runscLogTail(id string) string {
	raw, err := os.ReadFile(filepath.Join(b.sbDir(id), "runsc.log"))
	if err != nil {
		return "no runsc log"
	}
	return tail(string(raw))
}

func writeJSON(path string, v any, mode os.FileMode) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, mode)
}

func shmSize(mem int64) int64 {
	if mem <= 0 {
		return 64 << 20
	}
	return mem / 2
}
