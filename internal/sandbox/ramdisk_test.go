package sandbox

import (
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

// RAM-backed layers are admitted against the host's RAM: creates under
// way count, a release frees, a disk larger than the whole is invalid.
// Positive control: without LayerRAMMB (layers on disk) nothing is held.
func TestReserveLayerRAM(t *testing.T) {
	m := New(Config{Limits: DefaultLimits(1), LayerRAMMB: 1000}, Deps{})
	r1, err := m.reserveLayerRAM(Spec{DiskMB: 600})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.reserveLayerRAM(Spec{DiskMB: 600})
	if errs.CodeOf(err) != errs.CodeLimit || errs.Public(err) != "this server's writable layers are RAM (tmpfs): 600 MiB of disk requested, 600 MiB of its 1000 MiB held by other sandboxes; ask for less disk (disk_mb) or delete sandboxes" {
		t.Fatalf("over the host: %v", err)
	}
	r1()
	r1() // once
	r2, err := m.reserveLayerRAM(Spec{DiskMB: 600})
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
	if _, err := m.reserveLayerRAM(Spec{DiskMB: 2000}); errs.CodeOf(err) != errs.CodeInvalid {
		t.Fatalf("larger than the host: %v", err)
	}
	onDisk := New(Config{Limits: DefaultLimits(1)}, Deps{})
	for i := 0; i < 3; i++ {
		if _, err := onDisk.reserveLayerRAM(Spec{DiskMB: 64 << 10}); err != nil {
			t.Fatalf("layers on disk: %v", err)
		}
	}
}
