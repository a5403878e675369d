package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestEncodeParseRoundTrip(t *testing.T) {
	r := Record{Seq: 7, Time: formatTime(fixedTime), Action: "exec", Phase: PhaseIntent, Actor: "k1", Tenant: "t",
		Sandbox: "sb", Request: "rq", Args: json.RawMessage(`{"argv":["a","<b>&"]}`), Status: 200, Code: "x",
		Error: "e", DurationNs: 5, Prev: ZeroHash}
	line, hash, err := encode(&r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(line, []byte(`,"hash":"`+hash+`"}`+"\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("line shape: %s", line)
	}
	got, err := ParseLine(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if got.Hash != hash || got.Seq != 7 || got.Actor != "k1" || string(got.Args) != `{"argv":["a","\u003cb\u003e\u0026"]}` {
		t.Fatalf("round trip: %+v", got)
	}
}

func TestParseLineRefuses(t *testing.T) {
	r := Record{Seq: 1, Time: formatTime(fixedTime), Action: "exec", Phase: PhaseIntent, Prev: ZeroHash}
	good, _, _ := encode(&r)
	good = bytes.TrimSuffix(good, []byte("\n"))
	if _, err := ParseLine(good); err != nil {
		t.Fatalf("control: the untouched line must parse: %v", err)
	}
	cases := map[string]struct {
		line string
		want error
	}{
		"edited value":        {strings.Replace(string(good), `"exec"`, `"exed"`, 1), ErrBadHash},
		"extra space":         {strings.Replace(string(good), `"seq":1`, `"seq": 1`, 1), ErrNotCanonical},
		"duplicate key":       {strings.Replace(string(good), `{"seq":1,`, `{"seq":1,"seq":1,`, 1), ErrNotCanonical},
		"reordered fields":    {strings.Replace(string(good), `"action":"exec","phase":"intent"`, `"phase":"intent","action":"exec"`, 1), ErrNotCanonical},
		"unknown field":       {strings.Replace(string(good), `{"seq":1,`, `{"seq":1,"x":1,`, 1), ErrNotCanonical},
		"no hash":             {string(good[:len(good)-hashSuffixLen]) + "}", ErrNotCanonical},
		"uppercase hash":      {string(good[:len(good)-66]) + strings.ToUpper(string(good[len(good)-66:])), ErrNotCanonical},
		"escaped differently": {strings.Replace(string(good), `"exec"`, `"\u0065xec"`, 1), ErrNotCanonical},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseLine([]byte(c.line)); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

// A command holding newlines and a complete, well-formed record of its
// own stays inside one string of one line: it cannot become a record.
func TestNewlinesCannotForgeRecord(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{Sync: SyncAlways})
	// Forge the record that would come next, hash and all.
	next := Record{Seq: l.LastSeq() + 2, Time: formatTime(fixedTime), Action: "sandbox.delete", Phase: PhaseResult,
		Actor: "admin", Prev: ZeroHash}
	forged, _, _ := encode(&next)
	payload := "echo hi\n" + string(forged) + "\r\n{\"seq\":99}\n\u2028\x00"
	mustAppend(t, l, Entry{Action: "exec", Phase: PhaseIntent, Args: map[string]any{"argv": []string{"sh", "-c", payload}}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, dir)
	lines := readLines(t, segPath(dir, 1))
	if uint64(len(lines)) != rep.Records {
		t.Fatalf("%d lines for %d records", len(lines), rep.Records)
	}
	var found bool
	for _, ln := range lines {
		r, err := ParseLine(ln)
		if err != nil {
			t.Fatal(err)
		}
		if r.Action == "sandbox.delete" {
			t.Fatalf("a forged record became a record: %s", ln)
		}
		if r.Action == "exec" {
			var a struct{ Argv []string }
			if err := json.Unmarshal(r.Args, &a); err != nil || len(a.Argv) != 3 || !strings.Contains(a.Argv[2], `"action":"sandbox.delete"`) {
				t.Fatalf("the payload must survive as data: %v %q", err, a.Argv)
			}
			found = true
		}
	}
	if !found {
		t.Fatal("exec record missing")
	}
}
