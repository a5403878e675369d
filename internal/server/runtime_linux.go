package server

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestbin"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/runtime/native"
)

// Backend is the sandboxes' runtime: native Linux namespaces.
type Backend = native.Backend

// supported: sandboxes run here.
func supported() error { return nil }

// openRuntime detects the cgroups, opens the writable layers' store and
// starts the native runtime over them.
func (s *Server) openRuntime(ctx context.Context) error {
	c := &s.cfg
	prefix, err := s.chooseCgroupPrefix(ctx) // instance.go
	if err != nil {
		return err
	}
	if s.Cgroups, err = cgroup.Detect("/sys/fs/cgroup", prefix); err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	release, err := s.Cgroups.Claim() // one server per prefix: each would sweep the other's sandboxes
	if err != nil {
		return err
	}
	s.onClose("cgroup prefix", release)
	if c.FavorDynMods {
		if changed, err := cgroup.FavorDynMods(); err != nil {
			s.log.Warn("cannot set favordynmods; sandbox starts will be slower", "err", err)
		} else if changed {
			s.log.Info("remounted cgroup2 with favordynmods (faster cgroup migrations, host-wide)")
		}
	}
	size := c.LayersSize
	if size == 0 {
		if size, err = halfFreeDisk(c.DataDir); err != nil {
			return err
		}
	}
	layers, why, err := disk.Open(disk.Options{Dir: filepath.Join(c.DataDir, "layers"), ImageSize: size})
	if err != nil {
		return fmt.Errorf("writable layers: %w", err)
	}
	s.LayerKind = "tmpfs"
	if layers != nil {
		s.Disk = layers
		s.onClose("writable layers", layers.Close)
		s.LayerKind = layers.Kind()
	} else {
		s.log.Warn("writable layers are tmpfs inside each sandbox (RAM, counted against its memory)", "reason", why)
	}
	if err := s.openNetwork(ctx); err != nil { // network.go: veths, nftables, egress proxy and resolver
		return err
	}
	rt, err := native.New(native.Options{DataDir: c.DataDir, Log: s.log, Cgroups: s.Cgroups, Disk: s.Disk,
		UIDBase: c.UIDBase, Slots: c.Slots, Network: s.runtimeNetwork()})
	if err != nil {
		return err
	}
	s.Backend = rt
	s.onClose("runtime", rt.Close)
	s.logGuest()
	s.openGVisor()
	return nil
}

// openGVisor starts the gVisor runtime (docs/gvisor.md) beside the native
// one, and says at start whether this server can run gVisor sandboxes and
// with which runsc, so that an operator sees a missing or wrong one at
// once. Without it the runtime is still known, as one that refuses with
// why (an unsupported error naming the install command).
func (s *Server) openGVisor() {
	c := &s.cfg
	g, err := gvisor.New(gvisor.Options{DataDir: c.DataDir, Log: s.log, Cgroups: s.Cgroups, Disk: s.Disk,
		Runsc: c.Runsc, Network: s.runtimeNetwork()})
	if err != nil {
		s.log.Info("gVisor sandboxes unavailable", "reason", errs.Public(err), "err", err)
		if errs.CodeOf(err) != errs.CodeUnsupported {
			err = errs.Wrap(errs.CodeUnsupported, err, "gVisor is not available on this server (see its log)")
		}
		s.GVisor = gvisor.Unavailable{Err: err}
		return
	}
	s.GVisor = g
	s.onClose("gVisor runtime", g.Close)
	s.log.Info("gVisor available", "runsc", g.Runsc(), "version", gvisor.RunscVersion)
}

// runtimes are the manager's runtimes beside the native one.
func (s *Server) runtimes() map[string]runtime.Backend {
	if s.GVisor == nil {
		return nil
	}
	return map[string]runtime.Backend{"gvisor": s.GVisor}
}

// logGuest says, in one line, which guest agent sandboxes run: the one
// embedded in this binary, or (a plain `go build`/`go install`) this
// whole binary re-executed, which starts every sandbox a few ms slower.
func (s *Server) logGuest() {
	if guestbin.Embedded() {
		s.log.Info("guest agent embedded", "guest", "embedded")
		return
	}
	s.log.Warn("guest agent not embedded: sandboxes re-execute this binary as their guest, a few ms slower per start; `make build` embeds it",
		"guest", "re-exec")
}

// halfFreeDisk is the default size of the layers' image: half the free
// space of the data directory's filesystem, between 1 GiB and 1 TiB.
func halfFreeDisk(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	free := int64(st.Bavail) * st.Bsize / 2
	return min(max(free, 1<<30), 1<<40), nil
}

// lockDataDir keeps two servers off one data directory.
func lockDataDir(dir string) (func() error, error) {
	f, err := openLockFile(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another paddock server is using %s", dir)
	}
	return f.Close, nil
}

// raiseNoFile lifts the soft open-file limit to the hard one: every
// sandbox holds a few descriptors here.
func raiseNoFile() {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) == nil && r.Cur < r.Max {
		r.Cur = r.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
	}
}
