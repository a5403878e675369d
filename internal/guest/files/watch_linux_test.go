//go:build linux

package files

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// events reads a watch stream in the background, so a stream that stops
// fails the test instead of hanging it.
type events struct {
	t  *testing.T
	ch chan guestapi.FileEvent
}

func readEvents(t *testing.T, s *guestapi.WatchStream) *events {
	e := &events{t: t, ch: make(chan guestapi.FileEvent, 100000)}
	go func() {
		defer close(e.ch)
		for {
			ev, err := s.Next()
			if err != nil {
				return
			}
			e.ch <- ev
		}
	}()
	return e
}

// expect reads until an event of typ for p arrives (other events are
// skipped) and returns it.
func (e *events) expect(typ, p string) guestapi.FileEvent {
	e.t.Helper()
	guard := time.After(time.Minute) // a hang guard, not a timing assertion
	for {
		select {
		case ev, ok := <-e.ch:
			if !ok {
				e.t.Fatalf("stream ended while waiting for %s %s", typ, p)
			}
			if ev.Type == typ && (p == "" || ev.Path == p) {
				return ev
			}
		case <-guard:
			e.t.Fatalf("no %s event for %s", typ, p)
		}
	}
}

func TestWatch(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := t.TempDir()
	if err := os.MkdirAll(filepath.Join(d, "pre/existing"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := c.Watch(ctx, guestapi.WatchRequest{Path: d, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev := readEvents(t, s)
	ev.expect(guestapi.EventReady, d)

	f := filepath.Join(d, "a.txt")
	os.WriteFile(f, []byte("x"), 0o644)
	if got := ev.expect(guestapi.EventCreate, f); got.Entry != guestapi.TypeFile {
		t.Errorf("create entry = %q", got.Entry)
	}
	ev.expect(guestapi.EventWrite, f)

	// A directory that existed before the watch, and one made after it.
	deep := filepath.Join(d, "pre/existing/x")
	os.WriteFile(deep, nil, 0o644)
	ev.expect(guestapi.EventCreate, deep)
	sub := filepath.Join(d, "sub")
	os.Mkdir(sub, 0o755)
	if got := ev.expect(guestapi.EventCreate, sub); got.Entry != guestapi.TypeDir {
		t.Errorf("mkdir entry = %q", got.Entry)
	}
	inSub := filepath.Join(sub, "new")
	os.WriteFile(inSub, []byte("y"), 0o644)
	ev.expect(guestapi.EventCreate, inSub)

	g := filepath.Join(d, "b.txt")
	os.Rename(f, g)
	if got := ev.expect(guestapi.EventRename, g); got.OldPath != f {
		t.Errorf("rename old path = %q", got.OldPath)
	}
	// A renamed directory: events inside carry the new name.
	sub2 := filepath.Join(d, "sub2")
	os.Rename(sub, sub2)
	ev.expect(guestapi.EventRename, sub2)
	os.WriteFile(filepath.Join(sub2, "after"), nil, 0o644)
	ev.expect(guestapi.EventCreate, filepath.Join(sub2, "after"))

	os.Remove(g)
	ev.expect(guestapi.EventRemove, g)
	// Moved out of the tree: a removal.
	out := t.TempDir()
	os.Rename(sub2, filepath.Join(out, "gone"))
	if got := ev.expect(guestapi.EventRemove, sub2); got.Entry != guestapi.TypeDir {
		t.Errorf("moved-out entry = %q", got.Entry)
	}
	// Moved in: a creation, and the directory is watched.
	in := filepath.Join(out, "incoming")
	os.MkdirAll(in, 0o755)
	os.Rename(in, filepath.Join(d, "incoming"))
	ev.expect(guestapi.EventCreate, filepath.Join(d, "incoming"))
	os.WriteFile(filepath.Join(d, "incoming/z"), nil, 0o644)
	ev.expect(guestapi.EventCreate, filepath.Join(d, "incoming/z"))

	// The root goes: the stream says so and ends.
	os.RemoveAll(d)
	ev.expect(guestapi.EventRemove, d)
	for range ev.ch {
	}
}

// TestWatchBoundedQueue: a client that does not read loses events, and is
// told so by an overflow event, instead of the agent buffering without
// bound.
func TestWatchBoundedQueue(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := t.TempDir()
	s, err := c.Watch(ctx, guestapi.WatchRequest{Path: d})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if first, err := s.Next(); err != nil || first.Type != guestapi.EventReady {
		t.Fatalf("first event %+v %v", first, err)
	}
	// Nobody reads while 20000 events happen.
	for i := 0; i < 20000; i++ {
		f, err := os.Create(filepath.Join(d, "f"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	ev := readEvents(t, s)
	ov := ev.expect(guestapi.EventOverflow, "")
	if ov.Error == "" {
		t.Error("overflow event without a reason")
	}
	// The watch goes on.
	os.WriteFile(filepath.Join(d, "after"), nil, 0o644)
	ev.expect(guestapi.EventCreate, filepath.Join(d, "after"))
}

// TestWatchSeesWritesNotStaging: a write through the files API lands via a
// private name renamed into place; a watcher sees what the caller did — the
// target created (when new) and written — and never the private names
// (E2B's envd reports a write for the target; SDK users watch for it).
func TestWatchSeesWritesNotStaging(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := t.TempDir()
	s, err := c.Watch(ctx, guestapi.WatchRequest{Path: d, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev := readEvents(t, s)
	ev.expect(guestapi.EventReady, d)

	f := filepath.Join(d, "new.txt")
	write := func() {
		if _, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: f}, strings.NewReader("hello"), 5); err != nil {
			t.Fatal(err)
		}
	}
	write()
	// Then a marker made in place, so everything before it has arrived.
	mark := func(n string) string {
		p := filepath.Join(d, n)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	collect := func(until string) []guestapi.FileEvent {
		var got []guestapi.FileEvent
		for {
			var e guestapi.FileEvent
			select {
			case x, ok := <-ev.ch:
				if !ok {
					t.Fatal("the stream ended")
				}
				e = x
			case <-time.After(time.Minute): // a hang guard, not a timing assertion
				t.Fatalf("no marker %s", until)
			}
			if e.Type == guestapi.EventCreate && e.Path == until {
				return got
			}
			if strings.Contains(e.Path, ".paddock-") || strings.Contains(e.OldPath, ".paddock-") {
				t.Errorf("a private staging name was reported: %+v", e)
			}
			got = append(got, e)
		}
	}
	got := collect(mark("m1"))
	if len(got) != 2 || got[0].Type != guestapi.EventCreate || got[0].Path != f || got[1].Type != guestapi.EventWrite || got[1].Path != f {
		t.Errorf("a new file's write: got %+v, want create then write of %s", got, f)
	}
	write() // an existing file: a write, no creation
	write() // and again, right after: each write is reported
	got = collect(mark("m2"))
	if len(got) != 2 || got[0].Type != guestapi.EventWrite || got[0].Path != f || got[1] != got[0] {
		t.Errorf("two overwrites: got %+v, want two writes of %s", got, f)
	}
	// An archive extracted into a new directory: the directory and its
	// entries appear under their real names.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "a.txt", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("a"))
	tw.Close()
	x := filepath.Join(d, "unpacked")
	if _, err := c.Extract(ctx, guestapi.ExtractRequest{Path: x}, &buf, int64(buf.Len())); err != nil {
		t.Fatal(err)
	}
	got = collect(mark("m3"))
	seen := map[string]bool{}
	for _, e := range got {
		seen[e.Type+" "+e.Path] = true
	}
	if !seen[guestapi.EventCreate+" "+x] || !seen[guestapi.EventCreate+" "+filepath.Join(x, "a.txt")] {
		t.Errorf("an extraction: got %+v, want the directory and its entry created", got)
	}
}

func TestTempNames(t *testing.T) {
	for _, c := range []struct {
		name      string
		fresh, ok bool
	}{
		{tempName("x.txt", true), true, true},
		{tempName("x.txt", false), false, true},
		{tempName(strings.Repeat("y", 300), true), true, true},
		{".x.paddock-0123456789abcdef.tmp", false, true},
		{"x.paddock-0123456789abcdef.tmp", false, false},  // not hidden
		{".x.paddock-0123456789abcdeg.tmp", false, false}, // not hex
		{".x.paddock-0123.tmp", false, false},
		{".paddock-0123456789abcdef.new", false, false}, // no base
		{"report.tmp", false, false},
		{"", false, false},
	} {
		fresh, ok := isTempName(c.name)
		if fresh != c.fresh || ok != c.ok {
			t.Errorf("isTempName(%q) = %v, %v; want %v, %v", c.name, fresh, ok, c.fresh, c.ok)
		}
	}
}
