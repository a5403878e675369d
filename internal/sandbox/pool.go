package sandbox

import (
	"context"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
)

// pool keeps warm sandboxes of the default template with the default disk
// size, so that create is a claim: set the cgroup limits, record the owner.
// CPU, memory and pids can change at claim time; a different template or
// disk size falls back to a cold start.
type pool struct {
	m      *Manager
	target int

	mu    sync.Mutex
	ready []*box
	kick  chan struct{}
}

func newPool(m *Manager, target int) *pool {
	return &pool{m: m, target: target, kick: make(chan struct{}, 1)}
}

func (p *pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

func (p *pool) claim(spec Spec) *box {
	d := p.m.cfg.Limits.Default
	// Warm sandboxes are native: another runtime starts its own.
	if p.target == 0 || spec.Template != d.Template || spec.DiskMB != d.DiskMB || !isNative(spec) || len(spec.Volumes) > 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.refill()
	for len(p.ready) > 0 {
		b := p.ready[len(p.ready)-1]
		p.ready = p.ready[:len(p.ready)-1]
		select {
		case <-b.inst.Done(): // died while waiting
			go p.m.destroy(b)
			continue
		default:
		}
		return b
	}
	return nil
}

func (p *pool) refill() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *pool) start() {
	if p.target == 0 {
		return
	}
	p.m.bg.Add(1)
	go p.loop()
	p.refill()
}

// loop tops the pool up, one sandbox at a time so it never starves
// foreground creates of CPU.
func (p *pool) loop() {
	defer p.m.bg.Done()
	backoff := time.Second
	for {
		select {
		case <-p.m.stop:
			return
		case <-p.kick:
		}
		if !p.settle() {
			return
		}
		for p.size() < p.target {
			select {
			case <-p.m.stop:
				return
			default:
			}
			if p.m.count() >= p.m.cfg.MaxSandboxes {
				break
			}
			if err := p.add(); err != nil {
				p.m.log.Warn("warm pool: cannot add a sandbox", "err", err)
				select {
				case <-p.m.stop:
					return
				case <-time.After(backoff):
				}
				if backoff < time.Minute {
					backoff *= 2
				}
				continue
			}
			backoff = time.Second
		}
	}
}

// refillSettle is how long a refill waits after the last claim. Starting
// a sandbox takes both cores for a few ms; the agent that just claimed one
// runs its first commands right away, and a refill started at once would
// double their latency (measured: exec 1.7 → 5.6 ms right after a claim).
const refillSettle = 30 * time.Millisecond

// settle waits until no claim has come for refillSettle (at most 10 of
// them), or reports false when the manager stops.
func (p *pool) settle() bool {
	t := time.NewTimer(refillSettle)
	defer t.Stop()
	for range 10 {
		select {
		case <-p.m.stop:
			return false
		case <-p.kick:
			t.Reset(refillSettle)
		case <-t.C:
			return true
		}
	}
	return true
}

func (p *pool) add() error {
	d, err := p.m.cfg.Limits.Normalize(Spec{})
	if err != nil {
		return err
	}
	// Warm sandboxes are native, whatever the default runtime: the spec
	// recorded with one says which runtime cleans it up after a restart.
	d.Runtime = ""
	tpl, err := p.m.tpl.Get(d.Template)
	if err != nil {
		return err
	}
	now := time.Now()
	b := &box{sb: Sandbox{ID: newID(), State: StateRunning, Spec: d, CreatedAt: now, ExpiresAt: now}}
	ctx := context.Background()
	if err := p.m.persist(ctx, b, true); err != nil {
		return err
	}
	inst, err := p.m.rt.Create(ctx, runtime.Config{ID: b.sb.ID, Template: tpl, Limits: runtimeLimits(d), Hostname: b.sb.ID})
	if err != nil {
		_ = p.m.db.DeleteSandbox(ctx, b.sb.ID)
		return err
	}
	b.inst = inst
	warmUp(ctx, inst)
	if err := p.m.persist(ctx, b, true); err != nil {
		_ = p.m.rt.Destroy(ctx, inst)
		_ = p.m.db.DeleteSandbox(ctx, b.sb.ID)
		return err
	}
	p.mu.Lock()
	p.ready = append(p.ready, b)
	p.mu.Unlock()
	return nil
}

// warmUp runs one command in a new pool member, so that its claimer's
// first exec finds the guest's connection, spawner and exec sub-group
// ready (measured: the first exec of a sandbox cost ~1.8 ms more than the
// next). Best effort: a failure leaves a member that is merely cold.
func warmUp(ctx context.Context, inst runtime.Instance) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, _ = inst.Guest().Exec(ctx, guestapi.ExecRequest{Argv: []string{"/bin/true"}, TimeoutMs: 5000, MaxOutput: 1 << 10}, nil, discard{})
}

type discard struct{}

func (discard) Stdout([]byte) error { return nil }
func (discard) Stderr([]byte) error { return nil }

// drain destroys the pool's members.
func (p *pool) drain(ctx context.Context) {
	p.mu.Lock()
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	for _, b := range ready {
		p.m.destroy(b)
		_ = p.m.db.DeleteSandbox(ctx, b.sb.ID)
	}
}
