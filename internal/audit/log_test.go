package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type countStats struct {
	appends, batches, records, syncs atomic.Int64
	errors                           atomic.Int64
}

func (c *countStats) AuditAppend(_ time.Duration, err error) {
	c.appends.Add(1)
	if err != nil {
		c.errors.Add(1)
	}
}

func (c *countStats) AuditBatch(n int, _, sync time.Duration, _ error) {
	c.batches.Add(1)
	c.records.Add(int64(n))
	if sync > 0 {
		c.syncs.Add(1)
	}
}

func TestConcurrentAppendsGroupCommit(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncBatch, SyncInterval} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			st := &countStats{}
			l := openTest(t, dir, Options{Sync: mode, Stats: st, CheckpointEvery: 100})
			const G, N = 32, 50
			var wg sync.WaitGroup
			seqs := make(chan uint64, G*N)
			for g := 0; g < G; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < N; i++ {
						phase := PhaseIntent
						if i%2 == 1 {
							phase = PhaseResult
						}
						r := mustAppend(t, l, Entry{Action: "exec", Phase: phase, Sandbox: fmt.Sprint("sb", g), Args: map[string]int{"i": i}})
						seqs <- r.Seq
					}
				}(g)
			}
			wg.Wait()
			close(seqs)
			seen := map[uint64]bool{}
			for s := range seqs {
				if seen[s] {
					t.Fatalf("seq %d handed out twice", s)
				}
				seen[s] = true
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			rep := mustVerify(t, dir)
			if rep.Records < G*N || rep.Checkpoints < G*N/200 {
				t.Fatalf("report %+v", rep)
			}
			if st.batches.Load() >= st.records.Load() {
				t.Fatalf("no batching: %d batches for %d records", st.batches.Load(), st.records.Load())
			}
			if mode == SyncAlways && st.syncs.Load() == 0 {
				t.Fatal("always mode never synced")
			}
			t.Logf("%s: %d records in %d batches, %d fsyncs", mode, st.records.Load(), st.batches.Load(), st.syncs.Load())
		})
	}
}

// Every mode puts the record in the file before Append returns (that is
// what survives kill -9).
func TestAppendIsInFileOnReturn(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncBatch, SyncInterval} {
		dir := t.TempDir()
		l := openTest(t, dir, Options{Sync: mode, SyncInterval: time.Hour})
		r := mustAppend(t, l, Entry{Action: "exec", Phase: PhaseResult, Args: map[string]string{"x": "marker-" + string(mode)}})
		b, _ := os.ReadFile(segPath(dir, 1))
		if !bytes.Contains(b, []byte(r.Hash)) {
			t.Fatalf("%s: record not in the file on return", mode)
		}
		l.Close()
	}
}

func TestTornLineRepairedOnOpen(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 10, Options{})
	before := mustVerify(t, dir)
	torn := `{"seq":13,"time":"2026-12-01T10:00:00.000000000Z","action":"exec","pha`
	f, _ := os.OpenFile(segPath(dir, 1), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(torn)
	f.Close()
	l := openTest(t, dir, Options{})
	l.Close()
	rep := mustVerify(t, dir)
	if rep.TornBytes != 0 || rep.Records <= before.Records {
		t.Fatalf("not repaired: %+v", rep)
	}
	var repair *Record
	for _, ln := range readLines(t, segPath(dir, 1)) {
		r, _ := ParseLine(ln)
		if r.Action == ActionRepair {
			repair = &r
		}
	}
	if repair == nil || !bytes.Contains(repair.Args, []byte(fmt.Sprintf(`"discarded_bytes":%d`, len(torn)))) {
		t.Fatalf("repair not recorded: %+v", repair)
	}
}

// Only a torn final line is repaired: a log shorter than its signed head
// is refused, and so is an existing log whose key is gone.
func TestOpenRefusesTamperedLog(t *testing.T) {
	t.Run("truncated", func(t *testing.T) {
		dir := t.TempDir()
		writeLog(t, dir, 10, Options{})
		lines := readLines(t, segPath(dir, 1))
		writeLines(t, segPath(dir, 1), lines[:5])
		if _, err := Open(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("open of a truncated log: %v", err)
		}
	})
	t.Run("key missing", func(t *testing.T) {
		dir := t.TempDir()
		writeLog(t, dir, 1, Options{})
		os.Remove(filepath.Join(dir, KeyFile))
		if _, err := Open(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "signing key") {
			t.Fatalf("open without the key: %v", err)
		}
	})
	t.Run("reopen continues the chain", func(t *testing.T) {
		dir := t.TempDir()
		writeLog(t, dir, 3, Options{})
		writeLog(t, dir, 3, Options{})
		rep := mustVerify(t, dir)
		if rep.FirstSeq != 1 || rep.Records != rep.LastSeq {
			t.Fatalf("%+v", rep)
		}
	})
}

func TestFilePermissions(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "audit")
	writeLog(t, dir, 1, Options{})
	for name, want := range map[string]os.FileMode{"": 0o700, KeyFile: 0o600, SegmentName(1): 0o600, HeadFile: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%q: mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
}

func TestAppendAfterClose(t *testing.T) {
	l := openTest(t, t.TempDir(), Options{})
	l.Close()
	if _, err := l.Append(context.Background(), Entry{Action: "x", Phase: PhaseEvent}); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestQuery(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{SegmentBytes: 4 << 10})
	defer l.Close()
	for i := 0; i < 120; i++ {
		mustAppend(t, l, Entry{Action: []string{"exec", "sandbox.create", "sandbox.delete"}[i%3], Phase: PhaseIntent,
			Actor: fmt.Sprint("k", i%2), Sandbox: fmt.Sprint("sb", i%4)})
	}
	ctx := context.Background()
	decode := func(p Page) []Record {
		var out []Record
		for _, raw := range p.Records {
			r, err := ParseLine(raw)
			if err != nil {
				t.Fatalf("query returned a line that does not verify: %v", err)
			}
			out = append(out, r)
		}
		return out
	}
	p, err := l.Query(ctx, Query{Action: "sandbox.*", Actor: "k1", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range decode(p) {
		if !strings.HasPrefix(r.Action, "sandbox.") || r.Actor != "k1" {
			t.Fatalf("filter leaked %+v", r)
		}
	}
	if len(p.Records) != 40 {
		t.Fatalf("got %d", len(p.Records))
	}
	// Paging by cursor visits every exec exactly once, in order.
	var got []uint64
	q := Query{Action: "exec", Limit: 7}
	for {
		p, err := l.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range decode(p) {
			got = append(got, r.Seq)
		}
		if !p.More {
			break
		}
		q.After = p.Next
	}
	if len(got) != 40 {
		t.Fatalf("paging got %d execs", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("not in order: %v", got)
		}
	}
	// Tail gives the newest.
	p, _ = l.Query(ctx, Query{Sandbox: "sb3", Tail: 3})
	tail := decode(p)
	if len(tail) != 3 || tail[2].Seq != l.LastSeq() {
		t.Fatalf("tail: %+v (last %d)", tail, l.LastSeq())
	}
	// Time window.
	p, _ = l.Query(ctx, Query{Until: time.Now().Add(-time.Hour)})
	if len(p.Records) != 0 {
		t.Fatalf("until filter: %d", len(p.Records))
	}
	// Export: JSON lines, each verifiable.
	var buf bytes.Buffer
	if err := l.Export(ctx, Query{Sandbox: "sb0"}, &buf); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 30 {
		t.Fatalf("export: %d lines", len(lines))
	}
	for _, ln := range lines {
		if _, err := ParseLine(ln); err != nil {
			t.Fatal(err)
		}
	}
	// Wait wakes on the next record.
	last := l.LastSeq()
	woke := make(chan bool)
	go func() {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		woke <- l.Wait(c, last)
	}()
	mustAppend(t, l, Entry{Action: "exec", Phase: PhaseEvent})
	if !<-woke {
		t.Fatal("Wait did not wake")
	}
}
