package sandbox

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// Consumption history: the manager samples every running sandbox's stats
// (Stats) at a fixed interval into a bounded ring kept on its box, so a
// caller can ask what a sandbox used over a time range (E2B's metrics
// endpoints read it). The ring goes with the box: a deleted sandbox's
// history is gone with it. Memory is bounded per sandbox (SampleKeep
// samples of a few dozen bytes), hence per tenant by its sandbox quota
// and on the server by MaxSandboxes — and, whatever a tenant's quota, by
// a budget of samples per tenant (Config.SampleTenantBudget): a tenant
// with many sandboxes keeps a shorter history of each.

// Sampling defaults (Config.SampleEvery, Config.SampleKeep).
const (
	DefaultSampleEvery = 5 * time.Second
	DefaultSampleKeep  = 120 // ten minutes at 5 s
	// DefaultSampleTenantBudget is the samples one tenant's sandboxes keep
	// together (about 1 MB): a full history for 100 sandboxes.
	DefaultSampleTenantBudget = 100 * DefaultSampleKeep
	maxSampleKeep             = 4096
)

// Sample is one reading of a sandbox's consumption.
type Sample struct {
	At time.Time
	// CPUPct is the CPU used since the previous sample (since the
	// sandbox started, for the first one), in percent of its CPU count.
	CPUPct      float64
	MemoryBytes int64
	DiskBytes   int64
}

// sampleRing is a fixed-size ring of samples, oldest first.
type sampleRing struct {
	buf   []Sample
	start int // index of the oldest
	n     int
	// lastCPU and lastAt are the previous reading's CPU time and moment.
	lastCPU time.Duration
	lastAt  time.Time
}

func (r *sampleRing) push(s Sample, keep int) {
	if keep < 1 {
		keep = 1
	}
	if len(r.buf) != keep {
		old := r.slice()
		if len(old) > keep {
			old = old[len(old)-keep:]
		}
		r.buf = make([]Sample, keep)
		r.n = copy(r.buf, old)
		r.start = 0
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.start] = s
	r.start = (r.start + 1) % len(r.buf)
}

// slice returns a copy, oldest first.
func (r *sampleRing) slice() []Sample {
	out := make([]Sample, 0, r.n)
	for i := 0; i < r.n; i++ {
		out = append(out, r.buf[(r.start+i)%len(r.buf)])
	}
	return out
}

// sampleEvery and sampleKeep are the configured interval and ring size.
func (m *Manager) sampleEvery() time.Duration {
	if m.cfg.SampleEvery > 0 {
		return m.cfg.SampleEvery
	}
	return DefaultSampleEvery
}

func (m *Manager) sampleKeep() int {
	switch k := m.cfg.SampleKeep; {
	case k <= 0:
		return DefaultSampleKeep
	case k > maxSampleKeep:
		return maxSampleKeep
	default:
		return k
	}
}

// keepFor is how many samples each of a tenant's n running sandboxes
// keeps: sampleKeep, less when the tenant's budget is shared by many.
func (m *Manager) keepFor(n int) int {
	budget := m.cfg.SampleTenantBudget
	if budget <= 0 {
		budget = DefaultSampleTenantBudget
	}
	keep := m.sampleKeep()
	if n > 0 && budget/n < keep {
		keep = max(budget/n, 1)
	}
	return keep
}

// startSampler runs the sampling loop until Close.
func (m *Manager) startSampler() {
	if m.cfg.SampleEvery < 0 {
		return // sampling off
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		t := time.NewTicker(m.sampleEvery())
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sampleAll()
			}
		}
	}()
}

// sampleAll takes one sample of every running sandbox.
func (m *Manager) sampleAll() {
	m.mu.Lock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.Unlock()
	perTenant := map[string]int{}
	tenants := make([]string, len(boxes))
	for i, b := range boxes {
		b.mu.Lock()
		tenants[i] = b.sb.Tenant
		b.mu.Unlock()
		perTenant[tenants[i]]++
	}
	for i, b := range boxes {
		m.sampleKeeping(b, m.keepFor(perTenant[tenants[i]]))
	}
}

// sample reads b's stats once and records them (a sandbox that does not
// run is not sampled: a paused one's history keeps its last readings).
func (m *Manager) sample(b *box) {
	m.sampleKeeping(b, 0)
}

// sampleKeeping is sample keeping keep samples (0: as many as the box
// keeps now, or sampleKeep for its first).
func (m *Manager) sampleKeeping(b *box, keep int) {
	b.mu.Lock()
	inst, ok := b.inst, !b.gone && b.sb.State == StateRunning && b.sb.Tenant != ""
	b.mu.Unlock()
	if !ok || inst == nil {
		return
	}
	st, err := inst.Stats() // outside the lock: it reads the cgroup and disk
	if err != nil {
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone || b.inst != inst {
		return
	}
	if keep <= 0 {
		keep = len(b.samples.buf)
		if keep == 0 {
			keep = m.sampleKeep()
		}
	}
	b.samples.push(m.reading(b, st, now), keep)
}

// reading turns stats read at now into a sample (b.mu held).
func (m *Manager) reading(b *box, st wire.Stats, now time.Time) Sample {
	r := &b.samples
	prevCPU, prevAt := r.lastCPU, r.lastAt
	if prevAt.IsZero() || st.CPUUsage < prevCPU {
		prevCPU, prevAt = 0, b.sb.CreatedAt
	}
	r.lastCPU, r.lastAt = st.CPUUsage, now
	s := Sample{At: now, MemoryBytes: st.MemoryBytes, DiskBytes: st.DiskBytes}
	if wall := now.Sub(prevAt); wall > 0 {
		cpus := CPUCount(b.sb.Spec)
		s.CPUPct = 100 * float64(st.CPUUsage-prevCPU) / float64(wall) / float64(cpus)
		if s.CPUPct < 0 {
			s.CPUPct = 0
		}
	}
	return s
}

// CPUCount is the whole number of CPUs a spec's ceiling amounts to (at
// least 1).
func CPUCount(spec Spec) int {
	n := int(spec.CPU)
	if float64(n) < spec.CPU {
		n++
	}
	if n < 1 {
		n = 1
	}
	return n
}

// Samples returns a sandbox's recorded consumption between from and to
// (either zero: unbounded), oldest first. A running sandbox with no
// sample yet is sampled now, so a new sandbox answers at once.
func (m *Manager) Samples(ctx context.Context, sc Scope, id string, from, to time.Time) ([]Sample, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return nil, errs.Invalid("the end of the range is before its start")
	}
	b, err := m.find(sc, id)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	empty := b.samples.n == 0
	b.mu.Unlock()
	if empty {
		m.sample(b)
	}
	b.mu.Lock()
	all := b.samples.slice()
	b.mu.Unlock()
	out := all[:0]
	for _, s := range all {
		if (!from.IsZero() && s.At.Before(from)) || (!to.IsZero() && s.At.After(to)) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}
