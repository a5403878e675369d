package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/internal/volume"
	"github.com/paddockhq/paddock/wire"
)

// State of a sandbox.
type State = wire.State

// States.
const (
	StateRunning = wire.StateRunning
	StateFailed  = wire.StateFailed // the guest exited on its own; resources released
)

// Sandbox is the public view of one sandbox.
type Sandbox = wire.Sandbox

// Stats is a sandbox's consumption.
type Stats = wire.Stats

// Scope is who is asking and what they may do (package rights): a
// sandbox outside the tenant does not exist for them, and every method
// that acts for a caller checks the right it needs first, before it
// looks the sandbox up.
type Scope = rights.Scope

// Admission decides whether a caller may do op ("create", "timeout",
// "network") with spec: tenant quotas, ceilings and rate limits live behind
// it. It may fill tenant defaults into spec before the server's defaults
// apply. live lists the tenant's sandboxes at the moment it is called, so
// an implementation that serialises admissions calls it under its own lock.
// For a create, Admit may hold a reservation until done is called, which
// the manager does once the create has finished: after the new sandbox is
// listed, or after it failed. (Released earlier, a create could be in
// neither the list nor the reservations, and concurrent creates would
// overshoot a quota.) done may be nil. Nil Admission admits everything.
type Admission interface {
	Admit(ctx context.Context, sc Scope, op string, spec *Spec, live func() []Sandbox) (done func(), err error)
}

// Templates finds templates by name.
type Templates interface {
	Get(name string) (*template.Template, error)
}

// Observer is told of everything the manager does (audit log, metrics). An
// error from an intent event aborts the action: the record is written first
// or the action does not happen.
type Observer interface {
	Event(ctx context.Context, e Event) error
}

// Event is one thing that happened.
type Event struct {
	Time     time.Time      `json:"time"`
	Kind     string         `json:"kind"`  // sandbox.create, sandbox.delete, sandbox.expire, sandbox.fail, exec
	Phase    string         `json:"phase"` // intent | result | event
	Tenant   string         `json:"tenant"`
	Actor    string         `json:"actor,omitempty"`
	Sandbox  string         `json:"sandbox,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	Error    string         `json:"error,omitempty"`
	Code     string         `json:"code,omitempty"` // the error's errs code, when Error is set
	Duration time.Duration  `json:"duration_ns,omitempty"`
}

// Config configures the manager.
type Config struct {
	Limits       Limits
	MaxSandboxes int           // alive at once, pool included
	PoolSize     int           // warm sandboxes of the default template
	MaxOutput    int64         // default per-stream cap of a buffered exec
	MaxExecTime  time.Duration // ceiling of an exec's timeout
	Files        FileLimits    // files API (files.go); zero fields take defaults
	// LayerRAMMB, where writable layers are tmpfs, is the RAM they may
	// take together (ramdisk.go); 0: layers are on disk.
	LayerRAMMB int64
	// SampleEvery is how often each running sandbox's consumption is
	// recorded (samples.go; 0: DefaultSampleEvery, negative: never), and
	// SampleKeep how many samples a sandbox keeps (0: DefaultSampleKeep).
	SampleEvery time.Duration
	SampleKeep  int
	// SampleTenantBudget bounds the samples one tenant's sandboxes keep
	// together (0: DefaultSampleTenantBudget).
	SampleTenantBudget int
}

// Deps are the manager's collaborators.
type Deps struct {
	Log     *slog.Logger
	Store   *store.DB
	Backend runtime.Backend // the native runtime: the default, and the warm pool's
	// Runtimes are further runtimes by name (runtimes.go): a spec's
	// runtime picks one. A runtime this server cannot run is still listed,
	// as a backend that refuses with why (gvisor.Unavailable).
	Runtimes  map[string]runtime.Backend
	Templates Templates
	Observer  Observer  // may be nil
	Admission Admission // may be nil
	// Snapshots is the snapshot store (snapshot.go); nil: no snapshots.
	Snapshots *snapshot.Store
	// SnapshotQuota answers a tenant's snapshot-bytes quota (0: none);
	// may be nil.
	SnapshotQuota func(ctx context.Context, tenant string) (int64, error)
	// Volumes is the volume store (volumes.go); nil: no volumes.
	Volumes *volume.Store
	// VolumeQuota answers a tenant's volume-bytes quota (0: none); may be nil.
	VolumeQuota func(ctx context.Context, tenant string) (int64, error)
	// PausedQuota and ForkQuota answer a tenant's max_paused and
	// max_forks (0: none); either may be nil (quotas.go).
	PausedQuota, ForkQuota func(ctx context.Context, tenant string) (int, error)
}

// Manager is the sandbox manager.
type Manager struct {
	cfg  Config
	log  *slog.Logger
	db   *store.DB
	rt   runtime.Backend
	rts  map[string]runtime.Backend // by name, rt included (runtimes.go)
	tpl  Templates
	obs  Observer
	adm  Admission
	pool *pool

	netLocks keyedLocks // network changes, one sandbox at a time (network.go)
	ram      layerRAM   // RAM-backed layers' reservations (ramdisk.go)

	browser   browserSlot // the browser service, if registered (browser.go)
	snaps     *snapshot.Store
	snapQ     func(ctx context.Context, tenant string) (int64, error)
	vols      *volume.Store // volumes.go
	volQ      func(ctx context.Context, tenant string) (int64, error)
	volUse    volTable
	volCreate sync.Mutex
	pausedQ   func(ctx context.Context, tenant string) (int, error) // quotas.go
	forkQ     func(ctx context.Context, tenant string) (int, error)
	pausedMu  sync.Mutex

	steps atomic.Int64 // build steps running (steprun.go): sandboxes too

	mu     sync.Mutex
	boxes  map[string]*box
	closed bool
	bg     sync.WaitGroup
	stop   chan struct{}
}

// box is the manager's state for one sandbox.
type box struct {
	mu    sync.Mutex
	sb    Sandbox
	inst  runtime.Instance
	timer *time.Timer
	gone  bool       // deleted or being deleted
	pz    pauseState // pause.go
	// samples is its consumption history (samples.go).
	samples sampleRing
	// layers are the diff ids (bottom first) of the image template's
	// layers it runs on; sleepLease pins them while it is hibernated
	// (templates_image.go), nil otherwise.
	layers     []string
	sleepLease func()
}

// New returns a manager; call Start before use.
func New(cfg Config, d Deps) *Manager {
	if cfg.MaxOutput == 0 {
		cfg.MaxOutput = 1 << 20
	}
	if cfg.MaxExecTime == 0 {
		cfg.MaxExecTime = time.Hour
	}
	if cfg.MaxSandboxes == 0 {
		cfg.MaxSandboxes = 1000
	}
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, log: log, db: d.Store, rt: d.Backend, tpl: d.Templates, obs: d.Observer, adm: d.Admission,
		boxes: make(map[string]*box), stop: make(chan struct{}), snaps: d.Snapshots, snapQ: d.SnapshotQuota,
		vols: d.Volumes, volQ: d.VolumeQuota, pausedQ: d.PausedQuota, forkQ: d.ForkQuota}
	m.rts = map[string]runtime.Backend{}
	for name, b := range d.Runtimes {
		m.rts[name] = b
	}
	if m.rt != nil {
		m.rts[wire.RuntimeNative] = m.rt
	}
	m.pool = newPool(m, cfg.PoolSize)
	return m
}

// Start reconciles persisted state with what is actually running — each
// recorded sandbox is reattached or cleaned up, and leftovers nobody
// recorded are swept — then starts the warm pool.
func (m *Manager) Start(ctx context.Context) error {
	rows, err := m.db.ListSandboxes(ctx)
	if err != nil {
		return fmt.Errorf("load sandboxes: %w", err)
	}
	keep := map[string]bool{}
	var reattached, cleaned int
	for _, r := range rows {
		if r.State == string(StateHibernated) && !r.Pooled {
			if m.adoptAsleep(r) { // hibernate.go
				keep[r.ID] = true
				reattached++
			} else {
				m.cleanupRow(ctx, r)
				cleaned++
			}
			continue
		}
		if r.Pooled || (r.State != string(StateRunning) && r.State != string(StatePaused)) {
			m.cleanupRow(ctx, r)
			cleaned++
			continue
		}
		var spec Spec
		_ = json.Unmarshal(r.Spec, &spec)
		inst, err := m.backendOf(spec).Reattach(ctx, r.ID, r.Runtime)
		if err != nil {
			m.log.Warn("sandbox lost across restart; cleaning up", "sandbox", r.ID, "err", err)
			m.cleanupRow(ctx, r)
			cleaned++
			continue
		}
		b := &box{inst: inst, sb: Sandbox{ID: r.ID, Tenant: r.Tenant, State: StateRunning, Spec: spec,
			CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}}
		if err := m.reattachPaused(ctx, b, State(r.State)); err != nil { // pause.go
			m.log.Warn("paused sandbox cannot be held paused across restart; cleaning up", "sandbox", r.ID, "err", err)
			_ = m.rt.Destroy(ctx, inst)
			m.cleanupRow(ctx, r)
			cleaned++
			continue
		}
		if r.State == string(StatePaused) {
			pausedAt := r.PausedAt
			b.sb.State, b.sb.PausedAt, b.sb.RemainingMS = StatePaused, &pausedAt, r.Remaining.Milliseconds()
			b.pz.remaining = r.Remaining
		}
		m.mu.Lock()
		m.boxes[r.ID] = b
		m.mu.Unlock()
		m.reattachTemplate(b) // templates_image.go
		m.reattachVolumes(b)  // volumes.go
		m.arm(b)
		m.armIdle(b)
		m.watch(b)
		keep[r.ID] = true
		reattached++
	}
	swept := m.sweep(ctx, keep) // runtimes.go: every runtime's
	swept += m.sweepHibernated(keep)
	m.log.Info("sandboxes reconciled", "reattached", reattached, "cleaned", cleaned, "swept", swept)
	m.pool.start()
	m.startSampler() // samples.go
	return nil
}

func (m *Manager) cleanupRow(ctx context.Context, r store.Sandbox) {
	var spec Spec
	_ = json.Unmarshal(r.Spec, &spec)
	if err := m.backendOf(spec).Cleanup(ctx, r.ID, r.Runtime); err != nil {
		m.log.Error("cleanup failed", "sandbox", r.ID, "err", err)
	}
	if h, ok := m.backendOf(spec).(hibernator); ok {
		_ = h.DropHibernated(r.ID) // a hibernated sandbox's image
	}
	if err := m.db.DeleteSandbox(ctx, r.ID); err != nil {
		m.log.Error("forget sandbox", "sandbox", r.ID, "err", err)
	}
}

// Close stops timers and the pool. Running sandboxes keep running and are
// reattached by the next Start; warm pool members are destroyed.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.stop)
	for _, b := range m.boxes {
		b.mu.Lock()
		if b.timer != nil {
			b.timer.Stop()
		}
		b.mu.Unlock()
	}
	m.mu.Unlock()
	m.pool.drain(ctx)
	m.bg.Wait()
	m.pool.drain(ctx) // a member the refill was starting when stop came
	return nil
}

func (m *Manager) event(ctx context.Context, e Event) error {
	if m.obs == nil {
		return nil
	}
	if e.Error != "" && e.Code == "" {
		e.Code = string(errs.CodeInternal)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	return m.obs.Event(ctx, e)
}

func (m *Manager) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.boxes) + m.pool.size() + int(m.steps.Load())
}

// admit consults the Admission hook; done is never nil.
func (m *Manager) admit(ctx context.Context, sc Scope, op string, spec *Spec) (done func(), err error) {
	if m.adm == nil {
		return func() {}, nil
	}
	done, err = m.adm.Admit(ctx, sc, op, spec, func() []Sandbox { return m.tenantList(sc.Tenant, "", nil) })
	if done == nil {
		done = func() {}
	}
	return done, err
}

// Create makes a sandbox for scope.
func (m *Manager) Create(ctx context.Context, sc Scope, spec Spec) (Sandbox, error) {
	if err := sc.Need(rights.Write); err != nil {
		return Sandbox{}, err
	}
	if sc.Sandbox != "" {
		return Sandbox{}, errs.New(errs.CodeForbidden, "a sandbox-scoped token cannot create sandboxes")
	}
	if spec.ForkOf != "" {
		return Sandbox{}, errs.Invalid("fork_of is set by the server: fork a sandbox with POST /v1/sandboxes/{id}/fork")
	}
	src, release, err := m.snapshotSource(ctx, sc, &spec) // snapshot.go: "snapshot": NAME
	if err != nil {
		return Sandbox{}, err
	}
	defer release()
	return m.createFrom(ctx, sc, spec, src)
}

// createFrom makes a sandbox whose writable layer starts with src (nil:
// empty).
func (m *Manager) createFrom(ctx context.Context, sc Scope, spec Spec, src *layerFrom) (Sandbox, error) {
	spec = m.cfg.Limits.browserSpec(spec) // before admission: quotas judge a browser's limits (browser.go)
	done, err := m.admit(ctx, sc, "create", &spec)
	defer done() // after create registered the sandbox (or failed)
	if err != nil {
		// A refusal is a policy decision worth recording on every surface.
		_ = m.event(ctx, Event{Kind: "sandbox.create", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor,
			Error: errs.Public(err), Code: string(errs.CodeOf(err))})
		return Sandbox{}, err
	}
	spec, err = m.cfg.Limits.Normalize(spec)
	if err != nil {
		return Sandbox{}, err
	}
	tpl, err := m.templateFor(sc.Tenant, spec.Template) // templates_image.go: the tenant's, then shared
	if err != nil {
		return Sandbox{}, err
	}
	releaseTpl, err := m.leaseTemplate(spec, tpl) // templates_image.go
	if err != nil {
		return Sandbox{}, err
	}
	release, err := m.reserveLayerRAM(spec) // ramdisk.go
	if err != nil {
		releaseTpl()
		_ = m.event(ctx, Event{Kind: "sandbox.create", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor,
			Error: errs.Public(err), Code: string(errs.CodeOf(err))})
		return Sandbox{}, err
	}
	defer release()
	vm, vdone, err := m.attachVolumes(ctx, sc, spec, tpl) // volumes.go
	if err != nil {
		releaseTpl()
		_ = m.event(ctx, Event{Kind: "sandbox.create", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor,
			Error: errs.Public(err), Code: string(errs.CodeOf(err))})
		return Sandbox{}, err
	}
	if err := m.event(ctx, Event{Kind: "sandbox.create", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor,
		Data: map[string]any{"spec": spec}}); err != nil {
		releaseTpl()
		vdone("", err)
		return Sandbox{}, errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	sb, err := m.create(ctx, sc, spec, tpl, src, vm)
	m.holdTemplate(sb.ID, err, tpl, releaseTpl) // templates_image.go
	vdone(sb.ID, err)
	res := Event{Kind: "sandbox.create", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: sb.ID,
		Duration: time.Since(start), Data: map[string]any{"from_pool": sb.FromPool}}
	if spec.ForkOf != "" {
		res.Data["fork_of"] = spec.ForkOf
	} else if src != nil {
		res.Data["snapshot"] = src.name
	}
	if err != nil {
		res.Error, res.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(ctx, res)
	m.browserCreated(sc, sb, err) // browser.go
	return sb, err
}

func (m *Manager) create(ctx context.Context, sc Scope, spec Spec, tpl *template.Template, src *layerFrom, vm []runtime.VolumeMount) (Sandbox, error) {
	now := time.Now()
	sb := Sandbox{Tenant: sc.Tenant, State: StateRunning, Spec: spec, CreatedAt: now,
		ExpiresAt: now.Add(time.Duration(spec.TimeoutS) * time.Second)}
	if src != nil {
		// A pool member's layer is already live: nothing to restore into.
	} else if b := m.poolClaim(spec, tpl); b != nil {
		var err error
		if p := b.sb.Spec; p.CPU != spec.CPU || p.MemoryMB != spec.MemoryMB || p.Pids != spec.Pids {
			err = b.inst.SetLimits(runtimeLimits(spec))
		}
		if err != nil {
			m.log.Warn("pooled sandbox rejected limits; destroying it", "sandbox", b.sb.ID, "err", err)
			m.destroy(b)
		} else if err := m.claimNetwork(ctx, b, spec); err != nil {
			m.log.Warn("pooled sandbox could not get its network; destroying it", "sandbox", b.sb.ID, "err", err)
			m.destroy(b)
		} else {
			sb.ID = b.sb.ID
			sb.FromPool = true
			b.sb = sb
			if err := m.persist(ctx, b, false); err != nil {
				m.destroy(b)
				return Sandbox{}, err
			}
			return m.adopt(b), nil
		}
	}
	if m.count() >= m.cfg.MaxSandboxes {
		return Sandbox{}, errs.New(errs.CodeLimit, "the server is at its limit of %d sandboxes", m.cfg.MaxSandboxes)
	}
	rt, err := m.backendFor(spec) // runtimes.go: unknown or unavailable is refused here
	if err != nil {
		return Sandbox{}, err
	}
	if err := canRestore(rt, src); err != nil { // snapshot.go
		return Sandbox{}, err
	}
	sb.ID = newID()
	b := &box{sb: sb}
	if err := m.persist(ctx, b, false); err != nil { // a crash from here on is swept by id
		return Sandbox{}, err
	}
	cfg := runtime.Config{ID: sb.ID, Tenant: sb.Tenant, Template: tpl, Limits: runtimeLimits(spec),
		Hostname: sb.ID, Network: runtimeNetwork(spec.Network), Layer: src.source(m), Volumes: vm}
	var inst runtime.Instance
	if src != nil && src.image != "" {
		cfg.Layer = nil
		inst, err = rt.(imager).Restore(ctx, cfg, src.image) // memsnap.go; canRestore checked it
	} else {
		inst, err = rt.Create(ctx, cfg)
	}
	if err != nil {
		_ = m.db.DeleteSandbox(context.WithoutCancel(ctx), sb.ID)
		m.log.Error("create sandbox", "sandbox", sb.ID, "err", err)
		if errs.CodeOf(err) == errs.CodeInternal {
			return Sandbox{}, errs.Wrap(errs.CodeInternal, err, "the sandbox could not be started")
		}
		return Sandbox{}, err
	}
	b.inst = inst
	if err := m.startImage(ctx, spec, tpl, inst); err != nil { // templates_image.go
		_ = rt.Destroy(context.WithoutCancel(ctx), inst)
		_ = m.db.DeleteSandbox(context.WithoutCancel(ctx), sb.ID)
		return Sandbox{}, err
	}
	// The life asked for starts once the sandbox runs: a runtime's start
	// (seconds for gVisor on a loaded host) must not eat a short timeout,
	// which could leave a sandbox expiring as its create answers.
	b.sb.ExpiresAt = time.Now().Add(time.Duration(spec.TimeoutS) * time.Second)
	if err := m.persist(ctx, b, false); err != nil {
		_ = rt.Destroy(context.WithoutCancel(ctx), inst)
		_ = m.db.DeleteSandbox(context.WithoutCancel(ctx), sb.ID)
		return Sandbox{}, err
	}
	return m.adopt(b), nil
}

// adopt registers a running box: timer, death watch.
func (m *Manager) adopt(b *box) Sandbox {
	m.mu.Lock()
	m.boxes[b.sb.ID] = b
	m.mu.Unlock()
	m.arm(b)
	m.armIdle(b)
	m.watch(b)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb
}

func runtimeLimits(s Spec) runtime.Limits {
	return runtime.Limits{CPU: s.CPU, MemoryBytes: s.MemoryMB << 20, DiskBytes: s.DiskMB << 20,
		DiskInodes: inodesFor(s.DiskMB), Pids: s.Pids}
}

// inodesFor gives a layer one inode per 8 KiB of quota, at least 16k.
func inodesFor(diskMB int64) int64 {
	n := diskMB * 128
	if n < 16384 {
		n = 16384
	}
	return n
}

func (m *Manager) persist(ctx context.Context, b *box, pooled bool) error {
	spec, _ := json.Marshal(b.sb.Spec)
	var rt []byte = []byte("{}")
	state := string(StateRunning)
	b.mu.Lock()
	row := store.Sandbox{ID: b.sb.ID, Tenant: b.sb.Tenant, Template: b.sb.Spec.Template,
		Spec: spec, CreatedAt: b.sb.CreatedAt, ExpiresAt: b.sb.ExpiresAt, Pooled: pooled}
	if b.sb.State == StatePaused || b.sb.State == StateHibernated {
		state = string(b.sb.State)
		row.PausedAt, row.Remaining = *b.sb.PausedAt, b.pz.remaining
	}
	b.mu.Unlock()
	if b.inst != nil {
		rt = b.inst.Record()
	} else {
		state = "creating"
	}
	row.State, row.Runtime = state, rt
	err := m.db.PutSandbox(ctx, row)
	if err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "the state store cannot be written")
	}
	return nil
}

func (m *Manager) lookup(id string) *box {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.boxes[id]
}

// find returns the box of id if scope may see it.
func (m *Manager) find(sc Scope, id string) (*box, error) {
	if !ValidID(id) {
		return nil, errs.NotFound("sandbox not found")
	}
	b := m.lookup(id)
	if b == nil {
		return nil, errs.NotFound("sandbox not found")
	}
	if sc.Sandbox != "" && sc.Sandbox != id {
		return nil, errs.NotFound("sandbox not found")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sb.Tenant != sc.Tenant || b.gone {
		return nil, errs.NotFound("sandbox not found")
	}
	return b, nil
}

// Delete destroys a sandbox.
func (m *Manager) Delete(ctx context.Context, sc Scope, id string) error {
	if err := sc.Need(rights.Write); err != nil {
		return err
	}
	b, err := m.find(sc, id)
	if err != nil {
		return err
	}
	if err := m.event(ctx, Event{Kind: "sandbox.delete", Phase: "intent", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id}); err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "the audit log cannot be written; refusing to act")
	}
	start := time.Now()
	m.remove(ctx, b)
	_ = m.event(ctx, Event{Kind: "sandbox.delete", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
		Duration: time.Since(start)})
	return nil
}

// remove kills the sandbox, forgets it and releases its resources.
func (m *Manager) remove(ctx context.Context, b *box) {
	b.mu.Lock()
	if b.gone {
		b.mu.Unlock()
		return
	}
	b.gone = true
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
	m.mu.Lock()
	delete(m.boxes, b.sb.ID)
	m.mu.Unlock()
	m.destroy(b)
	m.detachVolumes(b) // volumes.go
	if err := m.db.DeleteSandbox(context.WithoutCancel(ctx), b.sb.ID); err != nil {
		m.log.Error("forget sandbox", "sandbox", b.sb.ID, "err", err)
	}
}

func (m *Manager) destroy(b *box) {
	if b.inst == nil {
		return
	}
	if _, ok := isAsleep(b.inst); ok {
		m.dropAsleep(b) // hibernate.go
		return
	}
	if err := m.backendOf(b.sb.Spec).Destroy(context.Background(), b.inst); err != nil {
		m.log.Error("destroy sandbox", "sandbox", b.sb.ID, "err", err)
	}
}

// SetTimeout moves a sandbox's expiry to now+d.
func (m *Manager) SetTimeout(ctx context.Context, sc Scope, id string, d time.Duration) (Sandbox, error) {
	if err := sc.Need(rights.Write); err != nil {
		return Sandbox{}, err
	}
	b, err := m.find(sc, id)
	if err != nil {
		return Sandbox{}, err
	}
	if d <= 0 || d > m.cfg.Limits.MaxTimeout {
		return Sandbox{}, errs.Invalid("timeout must be between 1s and %s", m.cfg.Limits.MaxTimeout)
	}
	b.mu.Lock()
	spec := b.sb.Spec
	b.mu.Unlock()
	spec.TimeoutS = int64(d / time.Second)
	done, err := m.admit(ctx, sc, "timeout", &spec)
	done()
	if err != nil {
		_ = m.event(ctx, Event{Kind: "sandbox.timeout", Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Sandbox: id,
			Error: errs.Public(err), Code: string(errs.CodeOf(err))})
		return Sandbox{}, err
	}
	b.mu.Lock()
	if b.sb.State == StatePaused || b.sb.State == StateHibernated {
		// The clock is stopped: the new life starts at resume.
		b.pz.remaining = d
		b.sb.RemainingMS = d.Milliseconds()
	} else {
		b.sb.ExpiresAt = time.Now().Add(d)
	}
	b.sb.Spec.TimeoutS = int64(d / time.Second)
	b.mu.Unlock()
	if err := m.persist(ctx, b, false); err != nil {
		return Sandbox{}, err
	}
	m.arm(b)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb, nil
}

// Stats reads a sandbox's consumption.
func (m *Manager) Stats(ctx context.Context, sc Scope, id string) (Stats, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.Stats{}, err
	}
	b, err := m.find(sc, id)
	if err != nil {
		return wire.Stats{}, err
	}
	b.mu.Lock()
	state, reason := b.sb.State, b.sb.Reason
	b.mu.Unlock()
	if state != StateRunning && state != StatePaused && state != StateHibernated { // a paused or hibernated (zero) sandbox's consumption is readable
		return wire.Stats{}, errs.New(errs.CodeSandboxNotActive, "sandbox is %s: %s", state, reason)
	}
	st, err := b.inst.Stats()
	return st, err
}

// running is find, plus "must be running": a paused sandbox answers
// sandbox_paused or, with auto_resume, is resumed (pause.go).
func (m *Manager) running(sc Scope, id string) (*box, error) {
	b, err := m.find(sc, id)
	if err != nil {
		return nil, err
	}
	if err := m.gate(sc, b); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sb.State != StateRunning {
		return nil, errs.New(errs.CodeSandboxNotActive, "sandbox is %s: %s", b.sb.State, b.sb.Reason)
	}
	return b, nil
}

// guest returns the agent client of running sandbox id (the caller's
// right was checked) and the sandbox's spec.
func (m *Manager) guest(sc Scope, id string) (*guestapi.Client, Spec, error) {
	b, err := m.running(sc, id)
	if err != nil {
		return nil, Spec{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inst.Guest(), b.sb.Spec, nil
}

// DeleteLabeled destroys every sandbox of every tenant that has label
// key (any value), and returns how many. It is for the server's own
// bookkeeping — sandboxes owned by state that did not survive a restart,
// such as MCP session sandboxes — not for callers.
func (m *Manager) DeleteLabeled(ctx context.Context, key string) int {
	m.mu.Lock()
	var doomed []*box
	for _, b := range m.boxes {
		b.mu.Lock()
		_, has := b.sb.Spec.Labels[key]
		gone := b.gone
		b.mu.Unlock()
		if has && !gone {
			doomed = append(doomed, b)
		}
	}
	m.mu.Unlock()
	for _, b := range doomed {
		_ = m.event(ctx, Event{Kind: "sandbox.delete", Phase: "event", Tenant: b.sb.Tenant, Sandbox: b.sb.ID,
			Data: map[string]any{"reason": "orphaned (label " + key + ")"}})
		m.remove(ctx, b)
	}
	return len(doomed)
}
