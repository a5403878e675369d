package sandbox

import (
	"sync"

	"github.com/paddockhq/paddock/internal/errs"
)

// Memory exhaustion through RAM-backed writable layers: where layers are
// tmpfs, a sandbox's disk is the host's RAM, so a 64 MiB sandbox could
// ask for a 64 GiB layer on a 24 GiB host. With Config.LayerRAMMB set the
// manager admits a create only if its disk, with every live sandbox's
// (warm pool and creates under way included), fits in that much RAM.
// Disk sizes are ceilings, counted in full: the host must be able to hold
// what it promised.

// layerRAM counts the disk of creates admitted but not yet registered.
type layerRAM struct {
	mu      sync.Mutex
	pending int64
}

// reserveLayerRAM admits spec's disk against the layers' RAM; release
// ends the reservation (after the sandbox is registered, or failed).
func (m *Manager) reserveLayerRAM(spec Spec) (release func(), err error) {
	capMB := m.cfg.LayerRAMMB
	if capMB <= 0 {
		return func() {}, nil
	}
	if spec.DiskMB > capMB {
		return nil, errs.Invalid("disk_mb %d is more than this server can hold: its writable layers are RAM (tmpfs) and %d MiB is all it has for them", spec.DiskMB, capMB)
	}
	m.ram.mu.Lock()
	defer m.ram.mu.Unlock()
	used := m.ram.pending + m.layerDiskMB()
	if used+spec.DiskMB > capMB {
		return nil, errs.New(errs.CodeLimit, "this server's writable layers are RAM (tmpfs): %d MiB of disk requested, %d MiB of its %d MiB held by other sandboxes; ask for less disk (disk_mb) or delete sandboxes",
			spec.DiskMB, used, capMB)
	}
	m.ram.pending += spec.DiskMB
	var once sync.Once
	return func() {
		once.Do(func() {
			m.ram.mu.Lock()
			m.ram.pending -= spec.DiskMB
			m.ram.mu.Unlock()
		})
	}, nil
}

// layerDiskMB is the disk of every sandbox the manager holds, the warm
// pool's included.
func (m *Manager) layerDiskMB() int64 {
	m.mu.Lock()
	boxes := make([]*box, 0, len(m.boxes))
	for _, b := range m.boxes {
		boxes = append(boxes, b)
	}
	m.mu.Unlock()
	var n int64
	for _, b := range boxes {
		b.mu.Lock()
		if !b.gone {
			n += b.sb.Spec.DiskMB
		}
		b.mu.Unlock()
	}
	return n + int64(m.pool.size())*m.cfg.Limits.Default.DiskMB
}
