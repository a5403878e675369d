package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/template"
)

// Image templates (docs/templates.md): a sandbox's root is the overlay of
// the template's layer stack, which it pins in the layer store while it
// lives; the image's start command runs at create and the sandbox is
// running only once its ready check passes.

const (
	// imageReadyTimeout bounds how long a start command may take to
	// become ready.
	imageReadyTimeout = 2 * time.Minute
	imageReadyPoll    = 100 * time.Millisecond
	imageReadyExec    = 10 * time.Second // one run of the ready command
	startOutputTail   = 4 << 10
	startProcessTag   = "paddock-start"
)

// templateLeaser pins an image template's layers while a sandbox uses
// them, so a replaced or removed template's layers outlive its sandboxes
// (template.Registry has it).
type templateLeaser interface {
	Lease(t *template.Template) (release func(), err error)
}

// tenantTemplates finds templates as a tenant sees them (its own, then
// shared ones: tplsvc's Manager view).
type tenantTemplates interface {
	GetFor(tenant, name string) (*template.Template, error)
}

// templateFor resolves a spec's template for tenant.
func (m *Manager) templateFor(tenant, name string) (*template.Template, error) {
	if tt, ok := m.tpl.(tenantTemplates); ok {
		return tt.GetFor(tenant, name)
	}
	return m.tpl.Get(name)
}

// poolClaim takes a warm sandbox for spec, unless its template is not the
// shared one the pool was made from (a tenant's own of the same name).
func (m *Manager) poolClaim(spec Spec, tpl *template.Template) *box {
	if tpl.Tenant != "" {
		return nil
	}
	return m.pool.claim(spec)
}

// leaseTemplate checks that spec's runtime can run template tpl, and
// pins its layers until the returned release is called.
func (m *Manager) leaseTemplate(spec Spec, tpl *template.Template) (func(), error) {
	if tpl.Kind != template.KindImage {
		return func() {}, nil
	}
	l, ok := m.tpl.(templateLeaser)
	if !ok {
		return func() {}, nil
	}
	return l.Lease(tpl)
}

// holdTemplate hands a created sandbox's template lease to the sandbox;
// a failed create releases it.
func (m *Manager) holdTemplate(id string, err error, tpl *template.Template, release func()) {
	var b *box
	if err == nil {
		b = m.lookup(id)
	}
	if b == nil || b.inst == nil {
		release()
		return
	}
	b.mu.Lock()
	b.layers = layersOf(tpl)
	b.mu.Unlock()
	m.holdWhileLive(b.inst, release)
}

// layersOf is an image template's layer ids, bottom first; nil for others.
func layersOf(tpl *template.Template) []string {
	if tpl == nil || tpl.Kind != template.KindImage {
		return nil
	}
	return append([]string(nil), tpl.DiffIDs...)
}

// leaseLayers pins layer ids of template name (a hibernated sandbox's):
// held from before its checkpoint until it wakes or is deleted, and
// taken again when a restarted server adopts it, so a template replaced
// (pull --replace) and a layer GC meanwhile leave them in place.
func (m *Manager) leaseLayers(name string, ids []string) (func(), error) {
	if len(ids) == 0 {
		return func() {}, nil
	}
	return m.leaseTemplate(Spec{}, &template.Template{Name: name, Kind: template.KindImage, DiffIDs: ids})
}

// templatePinner builds an image template on given layers (tplsvc's
// Manager and template.Registry have it).
type templatePinner interface {
	AtLayers(t *template.Template, name string, ids []string) (*template.Template, error)
}

// templateAt is what a hibernated sandbox wakes on: its template (tpl;
// nil if it was deleted since) on the layers ids it was made from.
func (m *Manager) templateAt(tpl *template.Template, name string, ids []string) (*template.Template, error) {
	p, ok := m.tpl.(templatePinner)
	if !ok || len(ids) == 0 {
		if tpl == nil {
			return nil, errs.New(errs.CodeInvalid, "its template %s no longer exists", name)
		}
		return tpl, nil
	}
	return p.AtLayers(tpl, name, ids)
}

// holdWhileLive keeps release until inst's guest has exited (the sandbox
// was deleted, expired or died), or the manager closes (the next server
// process leases again when it reattaches).
func (m *Manager) holdWhileLive(inst runtime.Instance, release func()) {
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		select {
		case <-inst.Done():
		case <-m.stop:
		}
		release()
	}()
}

// reattachTemplate leases the layers of a reattached sandbox's template.
// A template gone since the last run leaves the sandbox running on the
// layers it mounted (the store keeps what any template or lease holds,
// and a layer GC only runs in this process, after this).
func (m *Manager) reattachTemplate(b *box) {
	tpl, err := m.templateFor(b.sb.Tenant, b.sb.Spec.Template)
	if err != nil || tpl.Kind != template.KindImage {
		return
	}
	release, err := m.leaseTemplate(b.sb.Spec, tpl)
	if err != nil {
		m.log.Warn("reattached sandbox: cannot pin its template's layers", "sandbox", b.sb.ID, "err", err)
		return
	}
	b.mu.Lock()
	b.layers = layersOf(tpl)
	b.mu.Unlock()
	m.holdWhileLive(b.inst, release)
}

// startImage runs tpl's start command in a new sandbox and waits until it
// is ready: its ready command exits 0, or, without one, every TCP port
// the image exposes accepts a connection. A start command that exits
// non-zero, or one not ready in time, fails the create with its output's
// tail.
func (m *Manager) startImage(ctx context.Context, spec Spec, tpl *template.Template, inst runtime.Instance) error {
	d := tpl.Defaults
	if tpl.Kind != template.KindImage || d == nil || len(d.StartCmd) == 0 && len(d.ReadyCmd) == 0 {
		return nil
	}
	g := inst.Guest()
	ctx, cancel := context.WithTimeout(ctx, imageReadyTimeout)
	defer cancel()
	ref := ""
	if len(d.StartCmd) > 0 {
		pi, err := g.StartProcess(ctx, guestapi.ProcessStartRequest{Argv: d.StartCmd, Env: spec.Env, Tag: startProcessTag})
		if err != nil {
			return errs.Wrap(errs.CodeInvalid, err, "template %s: its start command %s cannot start: %s", tpl.Name, argvText(d.StartCmd), errs.Public(err))
		}
		ref = pi.ID
	}
	var ports []int
	for _, p := range d.ExposedPorts {
		if p.Proto == "tcp" {
			ports = append(ports, p.Port)
		}
	}
	dialer, _ := inst.(portDialer)
	if len(d.ReadyCmd) == 0 && (ref == "" || len(ports) == 0 || dialer == nil) {
		return nil // nothing to wait for
	}
	for {
		if ref != "" {
			pi, err := g.Process(ctx, ref)
			// Exiting 0 is fine (a start command may daemonise); the ready
			// check still decides.
			if err == nil && pi.State != "running" && (pi.ExitCode == nil || *pi.ExitCode != 0) {
				return startFailed(ctx, g, tpl, ref, pi)
			}
		}
		if m.imageReady(ctx, g, d, ports, dialer, spec) {
			return nil
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("template %s: the sandbox was not ready within %s", tpl.Name, imageReadyTimeout)
			if ref != "" {
				msg += "; start command output: " + outputTail(context.WithoutCancel(ctx), g, ref)
			}
			return errs.New(errs.CodeTimeout, "%s", msg)
		case <-time.After(imageReadyPoll):
		}
	}
}

func (m *Manager) imageReady(ctx context.Context, g *guestapi.Client, d *template.Defaults, ports []int, dialer portDialer, spec Spec) bool {
	if len(d.ReadyCmd) > 0 {
		cctx, cancel := context.WithTimeout(ctx, imageReadyExec+5*time.Second)
		defer cancel()
		res, err := g.Exec(cctx, guestapi.ExecRequest{Argv: d.ReadyCmd, Env: spec.Env, TimeoutMs: imageReadyExec.Milliseconds(), MaxOutput: 4 << 10}, nil, discard{})
		return err == nil && res.ExitCode == 0 && res.Signal == ""
	}
	for _, p := range ports {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := dialer.DialPort(cctx, p)
		cancel()
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

func startFailed(ctx context.Context, g *guestapi.Client, tpl *template.Template, ref string, pi guestapi.ProcessInfo) error {
	how := "ended"
	switch {
	case pi.ExitCode != nil:
		how = fmt.Sprintf("exited with code %d", *pi.ExitCode)
	case pi.Signal != "":
		how = "was killed by " + pi.Signal
	}
	return errs.New(errs.CodeInvalid, "template %s: its start command %s %s before the sandbox was ready; output: %s",
		tpl.Name, argvText(tpl.Defaults.StartCmd), how, outputTail(ctx, g, ref))
}

// outputTail is the last startOutputTail bytes the start command wrote
// (stdout and stderr interleaved as they arrived).
func outputTail(ctx context.Context, g *guestapi.Client, ref string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var buf []byte
	_, _ = g.ProcessOutput(ctx, ref, guestapi.OutputOptions{From: guestapi.From{Mode: guestapi.FromStart}}, func(e guestapi.OutputEvent) error {
		buf = append(buf, e.Data...)
		if len(buf) > 2*startOutputTail {
			buf = append([]byte(nil), buf[len(buf)-startOutputTail:]...)
		}
		return nil
	})
	if len(buf) > startOutputTail {
		buf = buf[len(buf)-startOutputTail:]
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(buf), "?"))
	if s == "" {
		return "(none)"
	}
	return s
}

func argvText(argv []string) string {
	s := strings.Join(argv, " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// TemplateInUse reports whether a sandbox (warm pool members included)
// uses the stored template name: template.Registry.Remove refuses then.
func (m *Manager) TemplateInUse(name string) bool {
	type use struct{ tenant, name string }
	var uses []use
	m.mu.Lock()
	for _, b := range m.boxes {
		b.mu.Lock()
		uses = append(uses, use{b.sb.Tenant, b.sb.Spec.Template})
		b.mu.Unlock()
	}
	m.mu.Unlock()
	if m.cfg.PoolSize > 0 {
		uses = append(uses, use{"", m.cfg.Limits.Default.Template})
	}
	for _, u := range uses {
		if u.name == name && u.tenant == "" {
			return true
		}
		if t, err := m.templateFor(u.tenant, u.name); err == nil && t.Name == name {
			return true
		}
	}
	return false
}
