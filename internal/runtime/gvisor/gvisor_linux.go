//go:build linux

package gvisor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestbin"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/wire"
)

// Options configure the gVisor backend.
type Options struct {
	DataDir string // state lives in DataDir/gvisor
	Log     *slog.Logger
	Cgroups *cgroup.Host
	// Disk holds writable layers with host-side quotas; nil: each
	// sandbox's layer is a directory of its own, bounded by gVisor.
	Disk disk.Store
	// Runsc is the runsc binary; empty: DefaultRunscPath.
	Runsc string
	// Network gives sandboxes a network; nil: loopback only.
	Network runtime.Network
	// ReadyTimeout bounds how long a sandbox may take to come up.
	ReadyTimeout time.Duration
	// Debug keeps runsc's debug logs in each sandbox's directory.
	Debug bool
}

// Backend is the gVisor runtime.
type Backend struct {
	o     Options
	log   *slog.Logger
	runsc string
	dir   string // DataDir/gvisor

	mu       sync.Mutex
	live     map[string]*instance
	cleanups sync.WaitGroup
	seals    seals // images known intact (seal_linux.go)
}

// New checks runsc and prepares the backend's directories. Without a
// usable runsc it fails with an unsupported error that names the command
// installing it (FindRunsc).
func New(o Options) (*Backend, error) {
	if o.Cgroups == nil {
		return nil, errors.New("gvisor: cgroups are required")
	}
	path, err := FindRunsc(o.Runsc)
	if err != nil {
		return nil, err
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	b := &Backend{o: o, log: o.Log, runsc: path, dir: filepath.Join(o.DataDir, "gvisor"), live: map[string]*instance{}}
	for _, d := range []string{b.dir, b.stateDir(), filepath.Join(b.dir, "sandboxes"), filepath.Join(b.dir, "c"), b.binDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("gvisor: %w", err)
		}
	}
	// The agent binary is mounted into sandboxes read-only; the
	// directory must be searchable by the gofer only (it runs as root).
	if err := os.Chmod(b.binDir(), 0o755); err != nil {
		return nil, err
	}
	if err := b.installGuest(); err != nil {
		return nil, fmt.Errorf("gvisor: agent binary: %w", err)
	}
	if n := len(b.inSocket(strings.Repeat("x", 64))); n >= 108 {
		return nil, fmt.Errorf("gvisor: data directory %s is too long for a socket path (%d bytes, at most 107)", o.DataDir, n)
	}
	return b, nil
}

// Name implements runtime.Backend.
func (b *Backend) Name() string { return "gvisor" }

// Info says the runtime is available, with runsc's version (GET /healthz).
func (b *Backend) Info() wire.RuntimeInfo {
	return wire.RuntimeInfo{Name: "gvisor", Available: true, Version: RunscVersion}
}

// Runsc is the runsc binary in use.
func (b *Backend) Runsc() string { return b.runsc }

func (b *Backend) stateDir() string        { return filepath.Join(b.dir, "state") }
func (b *Backend) binDir() string          { return filepath.Join(b.dir, "bin") }
func (b *Backend) sbDir(id string) string  { return filepath.Join(b.dir, "sandboxes", id) }
func (b *Backend) ctlDir(id string) string { return filepath.Join(b.dir, "c", ctlKey(id)) }
func (b *Backend) inSocket(id string) string {
	return filepath.Join(b.ctlDir(id), "guest.sock")
}

// ctlKey names a sandbox's control directory: short, so that the socket
// path in it stays within the 107 bytes a Unix socket address holds.
func ctlKey(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:8])
}

// installGuest writes the agent binary (the embedded one, else this very
// binary, which runs as the agent when argv[0] is paddock-guest) to binDir,
// replacing it atomically when it differs.
func (b *Backend) installGuest() error {
	var src io.Reader
	if g := guestbin.Guest(); g != nil {
		src = bytes.NewReader(g)
	} else {
		f, err := os.Open("/proc/self/exe")
		if err != nil {
			return err
		}
		defer f.Close()
		src = f
	}
	want, err := io.ReadAll(src)
	if err != nil {
		return err
	}
	dst := filepath.Join(b.binDir(), "paddock-guest")
	if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, want) {
		return nil
	}
	tmp, err := os.CreateTemp(b.binDir(), ".paddock-guest-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(want); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o555); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// globalFlags are runsc's flags for every command on this backend's
// sandboxes.
func (b *Backend) globalFlags() []string {
	f := []string{"--root", b.stateDir(), "--platform", "systrap",
		// The agent dials the host's socket in its control directory
		// (open: connect only, never create host sockets).
		"--host-uds", "open",
	}
	if b.o.Debug {
		f = append(f, "--debug", "--debug-log", filepath.Join(b.dir, "debug")+"/")
	}
	return f
}

// Close waits for pending cleanups. Sandboxes keep running; a later server
// reattaches them.
func (b *Backend) Close() error {
	b.cleanups.Wait()
	b.mu.Lock()
	live := make([]*instance, 0, len(b.live))
	for _, i := range b.live {
		live = append(live, i)
	}
	b.mu.Unlock()
	for _, i := range live {
		i.detach()
	}
	return nil
}

// runRunsc runs a runsc command to completion and returns its error with
// the tail of its output (for the log; public messages never carry it).
func (b *Backend) runRunsc(ctx context.Context, timeout time.Duration, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := b.command(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("runsc %s: %w", args[0], err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			return fmt.Errorf("runsc %s: %w: %s", args[0], err, tail(out.String()))
		}
		return nil
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-waited
		return fmt.Errorf("runsc %s: %w", args[0], ctx.Err())
	}
}

// tail is the last few lines of s, for error messages in the log.
func tail(s string) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	s = strings.Join(lines, " | ")
	if len(s) > 20000 {
		s = s[len(s)-20000:]
	}
	return s
}

// Sweep implements runtime.Backend: it releases sandboxes this backend has
// directories, runsc state or runsc-made cgroups of but that are neither
// kept nor live. Paddock's own cgroups and layers are shared with the
// native backend, whose Sweep lists them; keep must hold the sandboxes of
// every backend.
func (b *Backend) Sweep(ctx context.Context, keep map[string]bool) (int, error) {
	found := map[string]bool{}
	if ents, err := os.ReadDir(filepath.Join(b.dir, "sandboxes")); err == nil {
		for _, e := range ents {
			found[e.Name()] = true
		}
	}
	// runsc's state: "<container>_sandbox:<sandbox>.state" (and .lock),
	// and the sandbox's control socket (runscStateFiles).
	if ents, err := os.ReadDir(b.stateDir()); err == nil {
		for _, e := range ents {
			if id, _, ok := strings.Cut(e.Name(), "_sandbox:"); ok {
				found[id] = true
			} else if id, ok := strings.CutPrefix(e.Name(), "runsc-"); ok && strings.HasSuffix(id, ".sock") {
				found[strings.TrimSuffix(id, ".sock")] = true
			}
		}
	}
	for _, id := range runscCgroupIDs(b.o.Cgroups) {
		found[id] = true
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
		b.log.Info("gvisor: sweeping leftovers of unknown sandbox", "sandbox", id)
		_ = b.Cleanup(ctx, id, nil)
		n++
	}
	return n, nil
}

// Cleanup implements runtime.Backend: it kills whatever is left of sandbox
// id (its sentry only if provably the one recorded) and releases its
// resources.
func (b *Backend) Cleanup(ctx context.Context, id string, raw json.RawMessage) error {
	if !idRE.MatchString(id) {
		return errs.Invalid("invalid sandbox id")
	}
	var rec record
	_ = json.Unmarshal(raw, &rec)
	inst := b.newInstance(id)
	inst.rec = rec
	inst.owned = ownAll
	if cg, err := b.o.Cgroups.Open(id); err == nil {
		inst.cg = cg
	}
	inst.pidfd = openPidfd(rec.Pid, rec.StartTime)
	b.teardown(inst)
	return nil
}

// errNotStarted is returned by instance operations before the sandbox runs.
var errNotStarted = errs.New(errs.CodeSandboxNotActive, "the sandbox is not running")
