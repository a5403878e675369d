package audit

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// dirBytes is the size of the segments in dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range segs {
		st, err := os.Stat(filepath.Join(dir, s.name))
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

func TestSegmentsAreSealed(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 300, Options{SegmentBytes: 4 << 10, CheckpointEvery: 1000})
	segs, _ := listSegments(dir)
	if len(segs) < 4 {
		t.Fatalf("want several segments, got %d", len(segs))
	}
	for _, s := range segs[:len(segs)-1] {
		r, err := lastRecord(filepath.Join(dir, s.name))
		if err != nil || r == nil || r.Action != ActionCheckpoint {
			t.Fatalf("%s does not end with a checkpoint: %+v %v", s.name, r, err)
		}
	}
	rep := mustVerify(t, dir)
	if rep.Sealed != len(segs)-1 || len(rep.Warnings) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	// A sealed segment cut short is found (the chain breaks at the next).
	lines := readLines(t, filepath.Join(dir, segs[1].name))
	writeLines(t, filepath.Join(dir, segs[1].name), lines[:len(lines)-1])
	if _, err := Verify(dir, nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a sealed segment without its seal: %v", err)
	}
}

func TestRetentionByBytes(t *testing.T) {
	dir := t.TempDir()
	const seg, bound = 4 << 10, 20 << 10
	writeLog(t, dir, 1000, Options{SegmentBytes: seg, MaxBytes: bound})
	if n := dirBytes(t, dir); n > bound+seg {
		t.Fatalf("the log holds %d bytes, bound %d", n, bound)
	}
	rep := mustVerify(t, dir)
	if rep.PrunedBefore == 0 || rep.FirstSeq != rep.PrunedBefore || rep.Sealed != rep.Segments-1 {
		t.Fatalf("report: %+v", rep)
	}
	t.Logf("kept %d bytes in %d segments, from seq %d", dirBytes(t, dir), rep.Segments, rep.FirstSeq)
	segs, _ := listSegments(dir)
	// Tampering in what is kept is still found.
	p := filepath.Join(dir, segs[1].name)
	orig, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.Replace(orig, []byte(`"hello"`), []byte(`"HELLO"`), 1), 0o600)
	if _, err := Verify(dir, nil); err == nil {
		t.Fatal("a changed record in a kept segment verified")
	}
	os.WriteFile(p, orig, 0o600)
	// Deleting more than retention did is found.
	os.Remove(filepath.Join(dir, segs[0].name))
	if _, err := Verify(dir, nil); err == nil || !strings.Contains(err.Error(), "no retention record") {
		t.Fatalf("deleting beyond retention: %v", err)
	}
}

func TestRetentionByAgeArchives(t *testing.T) {
	dir, arch := t.TempDir(), filepath.Join(t.TempDir(), "archive")
	writeLog(t, dir, 300, Options{SegmentBytes: 4 << 10})
	segs, _ := listSegments(dir)
	old := time.Now().Add(-3 * time.Hour)
	for _, s := range segs[:len(segs)-2] {
		os.Chtimes(filepath.Join(dir, s.name), old, old)
	}
	l := openTest(t, dir, Options{SegmentBytes: 4 << 10, MaxAge: time.Hour, ArchiveDir: arch, CheckpointInterval: 20 * time.Millisecond})
	deadline := time.Now().Add(10 * time.Second)
	for {
		now, _ := listSegments(dir)
		if len(now) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("old segments not expired: %d of %d left", len(now), len(segs))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, dir)
	if rep.PrunedBefore == 0 {
		t.Fatalf("report: %+v", rep)
	}
	// The archive holds exactly what went, unchanged: put back, the whole
	// chain from seq 1 verifies again.
	for _, s := range segs[:len(segs)-2] {
		b, err := os.ReadFile(filepath.Join(arch, s.name))
		if err != nil {
			t.Fatalf("not archived: %v", err)
		}
		os.WriteFile(filepath.Join(dir, s.name), b, 0o600)
	}
	if rep := mustVerify(t, dir); rep.FirstSeq != 1 {
		t.Fatalf("with the archive back: %+v", rep)
	}
}

func TestRetentionBoundTooSmall(t *testing.T) {
	if _, err := Open(Options{Dir: t.TempDir(), SegmentBytes: 64 << 10, MaxBytes: 64 << 10}); err == nil {
		t.Fatal("a byte bound of one segment was accepted")
	}
}

// diskStats records what the log reports about its volume.
type diskStats struct {
	mu   sync.Mutex
	free uint64
	low  []bool
}

func (d *diskStats) AuditAppend(time.Duration, error)                    {}
func (d *diskStats) AuditBatch(int, time.Duration, time.Duration, error) {}
func (d *diskStats) AuditDisk(free, total uint64, low bool) {
	d.mu.Lock()
	d.free, d.low = free, append(d.low, low)
	d.mu.Unlock()
}

func TestLowDiskAlarm(t *testing.T) {
	for _, tc := range []struct {
		name    string
		min     int64
		wantLow bool
	}{
		{name: "plenty of space", min: 1 << 10, wantLow: false},
		{name: "below the alarm", min: 1 << 62, wantLow: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			st := &diskStats{}
			l := openTest(t, t.TempDir(), Options{MinFreeBytes: tc.min, Stats: st, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			l.Close()
			st.mu.Lock()
			defer st.mu.Unlock()
			if len(st.low) == 0 || st.free == 0 {
				t.Fatal("no disk measurement reported")
			}
			if st.low[0] != tc.wantLow {
				t.Fatalf("low = %v, want %v", st.low[0], tc.wantLow)
			}
			if warned := strings.Contains(logs.String(), "nearly full"); warned != tc.wantLow {
				t.Fatalf("warning logged: %v, want %v:\n%s", warned, tc.wantLow, logs.String())
			}
		})
	}
}
