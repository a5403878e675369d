package sandbox

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/wire"
)

// statsInst is an instance whose stats the test sets.
type statsInst struct {
	st   wire.Stats
	done chan struct{}
}

func (f *statsInst) ID() string                     { return "f" }
func (f *statsInst) Guest() *guestapi.Client        { return nil }
func (f *statsInst) Record() json.RawMessage        { return nil }
func (f *statsInst) Done() <-chan struct{}          { return f.done }
func (f *statsInst) SetLimits(runtime.Limits) error { return nil }
func (f *statsInst) Stats() (runtime.Stats, error)  { return f.st, nil }

func samplesManager(t *testing.T, keep int) (*Manager, *box, *statsInst) {
	t.Helper()
	m := New(Config{SampleKeep: keep, SampleEvery: -1}, Deps{})
	inst := &statsInst{done: make(chan struct{})}
	b := &box{inst: inst, sb: Sandbox{ID: newID(), Tenant: "t1", State: StateRunning,
		CreatedAt: time.Now().Add(-time.Second), Spec: Spec{CPU: 2}}}
	m.boxes[b.sb.ID] = b
	return m, b, inst
}

func TestSampleRingKeepsTheNewest(t *testing.T) {
	var r sampleRing
	for i := 0; i < 10; i++ {
		r.push(Sample{MemoryBytes: int64(i)}, 4)
	}
	got := r.slice()
	if len(got) != 4 || got[0].MemoryBytes != 6 || got[3].MemoryBytes != 9 {
		t.Fatalf("ring = %+v, want the 4 newest (6..9) oldest first", got)
	}
	r.push(Sample{MemoryBytes: 10}, 2) // a smaller bound keeps the newest
	if got := r.slice(); len(got) != 2 || got[0].MemoryBytes != 9 || got[1].MemoryBytes != 10 {
		t.Fatalf("after shrinking: %+v", got)
	}
}

func TestSamplesScopeRangeAndCPU(t *testing.T) {
	m, b, inst := samplesManager(t, 3)
	sc := rights.Scope{Tenant: "t1", Rights: rights.All}
	inst.st = wire.Stats{MemoryBytes: 100, DiskBytes: 7, CPUUsage: 0}
	// First read: sampled on demand.
	got, err := m.Samples(context.Background(), sc, b.sb.ID, time.Time{}, time.Time{})
	if err != nil || len(got) != 1 || got[0].MemoryBytes != 100 || got[0].DiskBytes != 7 {
		t.Fatalf("first Samples = %+v, %v", got, err)
	}
	for i := 0; i < 5; i++ {
		inst.st.CPUUsage += time.Hour // far more than the wall time: pct is large, never negative
		inst.st.MemoryBytes++
		m.sample(b)
	}
	got, _ = m.Samples(context.Background(), sc, b.sb.ID, time.Time{}, time.Time{})
	if len(got) != 3 || got[2].MemoryBytes != 105 {
		t.Fatalf("kept %d samples (want the newest 3): %+v", len(got), got)
	}
	if got[2].CPUPct <= 0 {
		t.Fatalf("cpu pct = %v, want > 0", got[2].CPUPct)
	}
	// A range after every sample is empty; one covering them all is whole.
	future := time.Now().Add(time.Hour)
	if got, _ := m.Samples(context.Background(), sc, b.sb.ID, future, time.Time{}); len(got) != 0 {
		t.Fatalf("future range: %+v", got)
	}
	if got, _ := m.Samples(context.Background(), sc, b.sb.ID, time.Now().Add(-time.Hour), future); len(got) != 3 {
		t.Fatalf("whole range: %d samples", len(got))
	}
	if _, err := m.Samples(context.Background(), sc, b.sb.ID, future, time.Now()); errs.CodeOf(err) != errs.CodeInvalid {
		t.Fatalf("inverted range: %v", err)
	}
	// Another tenant does not see them; a token for another sandbox neither.
	for _, other := range []rights.Scope{{Tenant: "t2", Rights: rights.All}, {Tenant: "t1", Sandbox: newID(), Rights: rights.All}} {
		if _, err := m.Samples(context.Background(), other, b.sb.ID, time.Time{}, time.Time{}); errs.CodeOf(err) != errs.CodeNotFound {
			t.Fatalf("scope %+v: %v, want not found", other, err)
		}
	}
	// A sandbox that does not run is not sampled.
	b.sb.State = StatePaused
	inst.st.MemoryBytes = 999
	m.sample(b)
	got, _ = m.Samples(context.Background(), sc, b.sb.ID, time.Time{}, time.Time{})
	if got[len(got)-1].MemoryBytes == 999 {
		t.Fatal("a paused sandbox was sampled")
	}
}

// TestSampleTenantBudget: a tenant with many sandboxes keeps a shorter
// history of each, within its budget; another tenant is not affected.
func TestSampleTenantBudget(t *testing.T) {
	m := New(Config{SampleKeep: 10, SampleTenantBudget: 20, SampleEvery: -1}, Deps{})
	var many []*box
	for i := 0; i < 5; i++ {
		b := &box{inst: &statsInst{done: make(chan struct{})}, sb: Sandbox{ID: newID(), Tenant: "big", State: StateRunning, CreatedAt: time.Now()}}
		m.boxes[b.sb.ID] = b
		many = append(many, b)
	}
	lone := &box{inst: &statsInst{done: make(chan struct{})}, sb: Sandbox{ID: newID(), Tenant: "small", State: StateRunning, CreatedAt: time.Now()}}
	m.boxes[lone.sb.ID] = lone
	for i := 0; i < 30; i++ {
		m.sampleAll()
	}
	total := 0
	for _, b := range many {
		total += b.samples.n
	}
	if total > 20 {
		t.Fatalf("tenant big keeps %d samples, over its budget of 20", total)
	}
	if lone.samples.n != 10 {
		t.Fatalf("tenant small keeps %d samples, want its full 10", lone.samples.n)
	}
}
