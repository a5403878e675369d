package guestapi

import (
	"strings"
	"testing"
)

func TestParseSignal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"SIGTERM", 15}, {"term", 15}, {" TERM ", 15}, {"sigkill", 9}, {"9", 9}, {"SIGIOT", 6},
		{"HUP", 1}, {"SIGRTMIN", 34}, {"RTMIN+3", 37}, {"SIGRTMAX", 64}, {"RTMAX-2", 62}, {"64", 64},
	} {
		got, err := ParseSignal(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSignal(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "65", "-1", "SIGNOPE", "RTMIN+31", "RTMAX+1", "RTMIN++1", "RTMIN+-1", "RTMIN1", "SIG", "+9", strings.Repeat("9", 40)} {
		if n, err := ParseSignal(bad); err == nil {
			t.Errorf("ParseSignal(%q) = %d, want an error", bad, n)
		}
	}
	if SignalName(15) != "SIGTERM" || SignalName(36) != "SIGRTMIN+2" || SignalName(6) != "SIGABRT" {
		t.Errorf("names: %s %s %s", SignalName(15), SignalName(36), SignalName(6))
	}
}

func FuzzParseSignal(f *testing.F) {
	for _, s := range []string{"SIGTERM", "9", "rtmin+1", "RTMAX-0", "", "SIG", "RTMIN+", "999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSignal(s)
		if err != nil {
			return
		}
		if n < 1 || n > 64 {
			t.Fatalf("%q → %d out of range", s, n)
		}
		// The canonical name reads back as the same signal.
		if m, err := ParseSignal(SignalName(n)); err != nil || m != n {
			t.Fatalf("%q → %d → %q → %d, %v", s, n, SignalName(n), m, err)
		}
	})
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
	}{
		{"123", Ref{Kind: RefPid, Pid: 123}},
		{"p7", Ref{Kind: RefID, ID: "p7"}},
		{"tag:web server", Ref{Kind: RefTag, Tag: "web server"}},
		{"tag:é", Ref{Kind: RefTag, Tag: "é"}},
	} {
		got, err := ParseRef(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRef(%q) = %+v, %v", tc.in, got, err)
		}
	}
	for _, bad := range []string{"", "0", "-1", "p", "px", "tag:", "tag:a/b", "tag:\x00", "12345678901", "../1", "1 ", "P7"} {
		if r, err := ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", bad, r)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"1", "p1", "tag:x", "tag:", "p", "99999999999", "tag:\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		back, err := ParseRef(r.String())
		if err != nil || back != r {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, r, r.String(), back, err)
		}
		if r.Kind == RefTag && ValidTag(r.Tag) != nil {
			t.Fatalf("invalid tag accepted: %q", r.Tag)
		}
	})
}

func TestParseFromAndOffsets(t *testing.T) {
	for _, tc := range []struct {
		from         string
		stream       string
		oldest, next int64
		off, dropped int64
	}{
		{"", "stdout", 0, 10, 0, 0},
		{"start", "stdout", 4, 10, 4, 4}, // 4 bytes already overwritten
		{"tail", "stdout", 4, 10, 10, 0},
		{"7", "stderr", 4, 10, 7, 0},
		{"2", "stderr", 4, 10, 4, 2},
		{"99", "stderr", 4, 10, 10, 0},
		{"stdout:5,stderr:1", "stdout", 0, 10, 5, 0},
		{"stdout:5", "stderr", 3, 10, 3, 3},
	} {
		f, err := ParseFrom(tc.from)
		if err != nil {
			t.Fatalf("ParseFrom(%q): %v", tc.from, err)
		}
		off, dropped := f.OffsetFor(tc.stream, tc.oldest, tc.next)
		if off != tc.off || dropped != tc.dropped {
			t.Errorf("%q %s [%d,%d): offset %d dropped %d, want %d %d", tc.from, tc.stream, tc.oldest, tc.next, off, dropped, tc.off, tc.dropped)
		}
	}
	for _, bad := range []string{"-1", "x", "stdout:", "stdout:1,stdout:2", "other:1", "stdout:1,", "1.5", "99999999999999999999", strings.Repeat("1", 200)} {
		if f, err := ParseFrom(bad); err == nil {
			t.Errorf("ParseFrom(%q) = %+v, want an error", bad, f)
		}
	}
}

func FuzzParseFrom(f *testing.F) {
	for _, s := range []string{"start", "tail", "0", "123", "stdout:1,stderr:2", "pty:9", "stdout:1,stdout:1", ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		from, err := ParseFrom(s)
		if err != nil {
			return
		}
		back, err := ParseFrom(from.String())
		if err != nil || back.String() != from.String() {
			t.Fatalf("%q → %q → %v", s, from.String(), err)
		}
		for _, st := range []string{StreamStdout, StreamStderr, StreamPTY} {
			off, dropped := from.OffsetFor(st, 10, 20)
			if off < 10 || off > 20 || dropped < 0 {
				t.Fatalf("%q: offset %d dropped %d outside [10,20]", s, off, dropped)
			}
		}
	})
}

func TestParseControl(t *testing.T) {
	good := map[string]Control{
		`{"type":"resize","rows":40,"cols":100}`: {Type: ControlResize, Rows: 40, Cols: 100},
		`{"type":"eof"}`:                         {Type: ControlEOF},
		`{"type":"signal","signal":"int"}`:       {Type: ControlSignal, Signal: "SIGINT"},
	}
	for in, want := range good {
		got, err := ParseControl([]byte(in))
		if err != nil || got != want {
			t.Errorf("ParseControl(%s) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{``, `{}`, `{"type":"resize"}`, `{"type":"resize","rows":0,"cols":5}`, `{"type":"resize","rows":5,"cols":5000}`,
		`{"type":"signal","signal":"NOPE"}`, `{"type":"eof","x":1}`, `{"type":"eof"} {}`, `[]`, `{"type":"boom"}`, `{"type":"eof"` + strings.Repeat(" ", 5000) + `}`} {
		if c, err := ParseControl([]byte(bad)); err == nil {
			t.Errorf("ParseControl(%q) = %+v, want an error", bad, c)
		}
	}
}

func FuzzParseControl(f *testing.F) {
	for _, s := range []string{`{"type":"resize","rows":1,"cols":1}`, `{"type":"eof"}`, `{"type":"signal","signal":"9"}`, `{"type":"resize","rows":-1}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseControl(b)
		if err != nil {
			return
		}
		switch c.Type {
		case ControlResize:
			if (PTYSize{Rows: c.Rows, Cols: c.Cols}).Valid() != nil {
				t.Fatalf("accepted size %dx%d", c.Rows, c.Cols)
			}
		case ControlSignal:
			if _, err := ParseSignal(c.Signal); err != nil {
				t.Fatalf("accepted signal %q", c.Signal)
			}
		case ControlEOF:
		default:
			t.Fatalf("accepted type %q", c.Type)
		}
	})
}
