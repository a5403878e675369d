package sandbox

import (
	"testing"
	"time"
)

func TestBrowserLimits(t *testing.T) {
	l := DefaultLimits(4)
	for _, tc := range []struct {
		name           string
		in             Spec
		mem, pids      int64
		wantShmAtLeast int64
	}{
		{"no browser keeps the defaults", Spec{}, 512, 512, 0},
		{"browser raises unset limits", Spec{Browser: true}, BrowserMemoryMB, BrowserPids, 256},
		{"browser keeps explicit limits", Spec{Browser: true, MemoryMB: 768, Pids: 600}, 768, 600, 0},
		{"explicit memory, unset pids", Spec{Browser: true, MemoryMB: 2048}, 2048, BrowserPids, 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.Normalize(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.MemoryMB != tc.mem || got.Pids != tc.pids {
				t.Errorf("memory %d pids %d, want %d %d", got.MemoryMB, got.Pids, tc.mem, tc.pids)
			}
			// The native backend gives /dev/shm half the memory.
			if tc.wantShmAtLeast > 0 && got.MemoryMB/2 < tc.wantShmAtLeast {
				t.Errorf("/dev/shm would be %d MiB", got.MemoryMB/2)
			}
		})
	}
	// Ceilings below a browser's needs bound the raised defaults.
	small := Limits{Default: Spec{Template: "host", CPU: 1, MemoryMB: 256, DiskMB: 1024, Pids: 128, TimeoutS: 60},
		MaxCPU: 1, MaxMemoryMB: 640, MaxDiskMB: 2048, MaxPids: 300, MaxTimeout: time.Hour}
	got, err := small.Normalize(Spec{Browser: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.MemoryMB != 640 || got.Pids != 300 {
		t.Errorf("bounded: memory %d pids %d, want 640 300", got.MemoryMB, got.Pids)
	}
	// Idempotent: Create applies it before admission, Normalize again.
	if again := small.browserSpec(got); again.MemoryMB != got.MemoryMB || again.Pids != got.Pids {
		t.Errorf("browserSpec changed a normalized spec: %+v", again)
	}
}
