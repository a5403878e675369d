package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/wire"
)

// StepRun is one command run over a layer stack in a throwaway sandbox: a
// Dockerfile RUN step (docs/templates.md). The sandbox is made by the
// same runtime path as any other — user namespace, seccomp, Landlock,
// no_new_privs, its own cgroups with Limits, the egress policy Network —
// over an image template whose layers are Lowers; it is never listed,
// persisted or reachable by id, and it is gone when RunStep returns.
type StepRun struct {
	Tenant  string   // whose build: the network attachment is labelled with it
	Lowers  []string // layer directories, top first; read-only
	Argv    []string
	Env     []string // KEY=VALUE
	WorkDir string   // absolute; made (owned by root) when missing
	UID     int      // sandbox ids the command runs as
	GID     int
	Network *Network // nil: none
	Limits  Spec     // CPU, MemoryMB, DiskMB, Pids
	Timeout time.Duration
	Output  io.Writer // the command's stdout and stderr, interleaved
}

// StepResult is how the command ended.
type StepResult struct {
	ExitCode  int
	Signal    string
	OOMKilled bool
	TimedOut  bool
}

// RunStep runs r and, when the command has exited (whatever its code),
// freezes the sandbox and hands capture its writable layer (the runtime's
// FSCapturer stream: "root/upper/..." entries, owners in sandbox ids,
// overlay whiteouts as 0/0 character devices, opaque marks as
// user.overlay.opaque). A cancelled ctx kills the sandbox at once.
func (m *Manager) RunStep(ctx context.Context, r StepRun, capture func(io.Reader) error) (StepResult, error) {
	if m.rt == nil {
		return StepResult{}, errs.New(errs.CodeUnsupported, "this server has no native runtime to run build steps in")
	}
	if len(r.Lowers) == 0 {
		return StepResult{}, errs.Invalid("RUN needs a base with files (FROM scratch has no shell)")
	}
	if len(r.Argv) == 0 {
		return StepResult{}, errs.Invalid("RUN needs a command")
	}
	net, err := NormalizeNetwork(r.Network)
	if err != nil {
		return StepResult{}, err
	}
	if m.count() >= m.cfg.MaxSandboxes {
		return StepResult{}, errs.New(errs.CodeLimit, "the server is at its limit of %d sandboxes", m.cfg.MaxSandboxes)
	}
	m.steps.Add(1)
	defer m.steps.Add(-1)
	release, err := m.reserveLayerRAM(r.Limits) // ramdisk.go
	if err != nil {
		return StepResult{}, err
	}
	defer release()
	tpl := &template.Template{Name: "build-step", Kind: template.KindImage, Layers: r.Lowers, Tenant: r.Tenant,
		Defaults: &template.Defaults{UID: r.UID, GID: r.GID, WorkingDir: r.WorkDir}}
	id := newID()
	cfg := runtime.Config{ID: id, Tenant: r.Tenant, Template: tpl, Limits: runtimeLimits(r.Limits),
		Hostname: "build", Network: runtimeNetwork(net)}
	inst, err := m.rt.Create(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return StepResult{}, ctx.Err()
		}
		m.log.Error("create build sandbox", "sandbox", id, "err", err)
		if errs.CodeOf(err) == errs.CodeInternal {
			return StepResult{}, errs.Wrap(errs.CodeInternal, err, "the build sandbox could not be started")
		}
		return StepResult{}, err
	}
	// Killed on every way out: SIGKILL to the sandbox's init ends every
	// process of the step, and the runtime releases cgroups, layer and
	// network behind it.
	defer func() { _ = m.rt.Destroy(context.WithoutCancel(ctx), inst) }()
	g := inst.Guest()
	user := wire.UserRoot
	if r.UID > 0 {
		user = wire.UserUser // the image's USER (the template's Defaults)
	}
	if r.WorkDir != "" && r.WorkDir != "/" {
		if _, err := g.Mkdir(ctx, guestapi.MkdirRequest{Path: r.WorkDir, User: wire.UserRoot, Parents: true}); err != nil && ctx.Err() == nil {
			return StepResult{}, errs.Invalid("WORKDIR %s cannot be made: %s", r.WorkDir, errs.Public(err))
		}
	}
	env := map[string]string{}
	for _, kv := range r.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	req := guestapi.ExecRequest{Argv: r.Argv, Env: env, Cwd: r.WorkDir, User: user}
	if r.Timeout > 0 {
		req.TimeoutMs = r.Timeout.Milliseconds()
	}
	out := r.Output
	if out == nil {
		out = io.Discard
	}
	res, err := g.Exec(ctx, req, nil, writerOutput{out})
	if err != nil {
		if ctx.Err() != nil {
			return StepResult{}, ctx.Err()
		}
		return StepResult{}, errs.Wrap(errs.CodeOf(err), err, "the build step could not be run: %s", errs.Public(err))
	}
	sr := StepResult{ExitCode: res.ExitCode, Signal: res.Signal, OOMKilled: res.OOMKilled, TimedOut: res.TimedOut}
	if sr.ExitCode != 0 || capture == nil {
		return sr, nil
	}
	// What the step left running must not change the tree while it is
	// read.
	p, err := runtime.PauserOf(m.rt.Name(), inst)
	if err != nil {
		return sr, err
	}
	if err := p.Pause(ctx); err != nil {
		return sr, errs.Wrap(errs.CodeOf(err), err, "the build sandbox could not be frozen to collect its files")
	}
	c, err := runtime.CapturerOf(m.rt.Name(), inst)
	if err != nil {
		return sr, err
	}
	pr, pw := io.Pipe()
	capErr := make(chan error, 1)
	go func() {
		err := c.CaptureFS(ctx, pw)
		pw.CloseWithError(err)
		capErr <- err
	}()
	err = capture(pr)
	pr.CloseWithError(io.ErrClosedPipe)
	if cerr := <-capErr; cerr != nil && err == nil && !errors.Is(cerr, io.ErrClosedPipe) {
		err = cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return sr, ctx.Err()
		}
		return sr, fmt.Errorf("collect the step's files: %w", err)
	}
	return sr, nil
}

// writerOutput is a guestapi.Output writing both streams to one writer.
type writerOutput struct{ w io.Writer }

func (o writerOutput) Stdout(p []byte) error { _, err := o.w.Write(p); return err }
func (o writerOutput) Stderr(p []byte) error { _, err := o.w.Write(p); return err }
