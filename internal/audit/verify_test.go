package audit

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each tampering makes Verify fail at the first bad record, by seq and
// line; the untouched log (the control) verifies.
func TestVerifyDetectsTampering(t *testing.T) {
	const n = 40
	type tamper struct {
		edit     func(t *testing.T, dir string)
		wantSeq  uint64
		wantLine int
		reason   string
	}
	// Lines: 1 is audit.start; exec records are seq 2..n+1; then a stop
	// and a checkpoint (CheckpointEvery is large: those are the only
	// ones).
	cases := map[string]tamper{
		"edited record": {edit: func(t *testing.T, dir string) {
			lines := readLines(t, segPath(dir, 1))
			lines[9] = bytes.Replace(lines[9], []byte(`"hello"`), []byte(`"HELLO"`), 1)
			writeLines(t, segPath(dir, 1), lines)
		}, wantSeq: 10, wantLine: 10, reason: "hash does not match"},
		"edited record, hash recomputed": {edit: func(t *testing.T, dir string) {
			lines := readLines(t, segPath(dir, 1))
			r, _ := ParseLine(lines[9])
			r.Actor = "someone-else"
			line, _, _ := encode(&r)
			lines[9] = bytes.TrimSuffix(line, []byte("\n"))
			writeLines(t, segPath(dir, 1), lines)
		}, wantSeq: 11, wantLine: 11, reason: "prev does not match the hash of seq 10"},
		"deleted record": {edit: func(t *testing.T, dir string) {
			lines := readLines(t, segPath(dir, 1))
			lines = append(lines[:19:19], lines[20:]...)
			writeLines(t, segPath(dir, 1), lines)
		}, wantSeq: 20, wantLine: 20, reason: "missing (found seq 21"},
		"reordered records": {edit: func(t *testing.T, dir string) {
			lines := readLines(t, segPath(dir, 1))
			lines[14], lines[15] = lines[15], lines[14]
			writeLines(t, segPath(dir, 1), lines)
		}, wantSeq: 15, wantLine: 15, reason: "missing (found seq 16"},
		"duplicated record": {edit: func(t *testing.T, dir string) {
			lines := readLines(t, segPath(dir, 1))
			lines = append(lines[:6:6], append([][]byte{lines[4]}, lines[6:]...)...)
			writeLines(t, segPath(dir, 1), lines)
		}, wantSeq: 7, wantLine: 7, reason: "duplicated or out of order"},
		"truncated tail": {edit: func(t *testing.T, dir string) {
			lines := readLines(t, segPath(dir, 1))
			writeLines(t, segPath(dir, 1), lines[:30])
		}, wantSeq: 31, wantLine: 31, reason: "truncated"},
		"truncated mid-line": {edit: func(t *testing.T, dir string) {
			b, _ := os.ReadFile(segPath(dir, 1))
			lines := readLines(t, segPath(dir, 1))
			cut := len(bytes.Join(lines[:25], []byte("\n"))) + 1 + 40
			os.WriteFile(segPath(dir, 1), b[:cut], 0o600)
		}, wantSeq: 26, wantLine: 26, reason: "truncated"},
		"first records deleted": {edit: func(t *testing.T, dir string) {
			lines := readLines(t, segPath(dir, 1))
			writeLines(t, segPath(dir, 1), lines[3:])
		}, wantSeq: 1, wantLine: 1, reason: "starts at seq 4"},
		"checkpoint signature forged": {edit: func(t *testing.T, dir string) {
			lines := readLines(t, segPath(dir, 1))
			last := len(lines) - 1
			r, _ := ParseLine(lines[last])
			r.Args = bytes.Replace(r.Args, []byte(`"sig":"`), []byte(`"sig":"AA`), 1)
			line, _, _ := encode(&r)
			lines[last] = bytes.TrimSuffix(line, []byte("\n"))
			writeLines(t, segPath(dir, 1), lines)
		}, wantSeq: n + 3, wantLine: n + 3, reason: "checkpoint"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, n, Options{CheckpointEvery: 1 << 20})
			mustVerify(t, dir) // control
			c.edit(t, dir)
			_, err := Verify(dir, nil)
			var bad *BadRecord
			if !errors.As(err, &bad) {
				t.Fatalf("verify after tampering: %v", err)
			}
			if bad.Seq != c.wantSeq || bad.Line != c.wantLine || bad.Segment != SegmentName(1) || !strings.Contains(bad.Reason, c.reason) {
				t.Fatalf("got %v; want seq %d line %d (%q)", err, c.wantSeq, c.wantLine, c.reason)
			}
			if !strings.Contains(err.Error(), "seq ") || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("the message must name seq and line: %v", err)
			}
		})
	}
}

func TestVerifyHeadAndKey(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 5, Options{})
	rep := mustVerify(t, dir)
	if rep.HeadSeq != rep.LastSeq || rep.UnsignedTail != 0 || rep.Checkpoints < 1 {
		t.Fatalf("a cleanly closed log ends signed: %+v", rep)
	}

	t.Run("other key", func(t *testing.T) {
		other, _, _ := ed25519.GenerateKey(nil)
		if _, err := Verify(dir, other); err == nil || !strings.Contains(err.Error(), "signature") {
			t.Fatalf("a different public key must not verify: %v", err)
		}
	})
	t.Run("head missing", func(t *testing.T) {
		d := t.TempDir()
		writeLog(t, d, 5, Options{})
		os.Remove(filepath.Join(d, HeadFile))
		if _, err := Verify(d, nil); err == nil || !strings.Contains(err.Error(), "head") {
			t.Fatalf("a missing head must fail: %v", err)
		}
	})
	t.Run("head replaced by an unsigned one", func(t *testing.T) {
		d := t.TempDir()
		writeLog(t, d, 5, Options{})
		b, _ := os.ReadFile(filepath.Join(d, HeadFile))
		i := bytes.Index(b, []byte(`"hash":"`)) + len(`"hash":"`)
		if b[i] == '0' { // another hex digit
			b[i] = '1'
		} else {
			b[i] = '0'
		}
		os.WriteFile(filepath.Join(d, HeadFile), b, 0o600)
		if _, err := Verify(d, nil); err == nil || !strings.Contains(err.Error(), "head signature") {
			t.Fatalf("an edited head must fail: %v", err)
		}
	})
	t.Run("whole log re-signed with a new key", func(t *testing.T) {
		d := t.TempDir()
		writeLog(t, d, 5, Options{})
		orig, err := LoadPublicKey(filepath.Join(d, PubKeyFile))
		if err != nil {
			t.Fatal(err)
		}
		// The attacker rebuilds a log with their own key in place.
		os.RemoveAll(d)
		writeLog(t, d, 3, Options{})
		if _, err := Verify(d, nil); err != nil {
			t.Fatalf("control: the rebuilt log is self-consistent: %v", err)
		}
		if _, err := Verify(d, orig); err == nil {
			t.Fatal("verifying with the original public key must expose the rebuilt log")
		}
	})
}

func TestVerifySegmentsAndPrune(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 200, Options{SegmentBytes: 4 << 10, CheckpointEvery: 50})
	segs, _ := listSegments(dir)
	if len(segs) < 4 {
		t.Fatalf("want several segments, got %d", len(segs))
	}
	rep := mustVerify(t, dir)
	if rep.Segments != len(segs) || rep.Checkpoints < 4 || rep.FirstSeq != 1 {
		t.Fatalf("report: %+v", rep)
	}
	// Deleting a middle segment is found at the first record after it.
	mid := segs[2]
	first, _ := firstRecord(filepath.Join(dir, segs[3].name))
	os.Remove(filepath.Join(dir, mid.name))
	_, err := Verify(dir, nil)
	var bad *BadRecord
	if !errors.As(err, &bad) || bad.Segment != segs[3].name || bad.Line != 1 || !strings.Contains(bad.Reason, "missing") {
		t.Fatalf("deleted segment: %v (first of next: seq %d)", err, first.Seq)
	}

	t.Run("retention is not deletion", func(t *testing.T) {
		d := t.TempDir()
		writeLog(t, d, 300, Options{SegmentBytes: 4 << 10, MaxSegments: 3})
		segs, _ := listSegments(d)
		if len(segs) > 4 || segs[0].idx == 1 {
			t.Fatalf("prune kept %v", segs)
		}
		rep := mustVerify(t, d)
		if rep.PrunedBefore == 0 || rep.FirstSeq != rep.PrunedBefore {
			t.Fatalf("report: %+v", rep)
		}
		// Removing one more (an attacker) is still found.
		os.Remove(filepath.Join(d, segs[0].name))
		if _, err := Verify(d, nil); err == nil || !strings.Contains(err.Error(), "no retention record") {
			t.Fatalf("deleting beyond retention: %v", err)
		}
	})
}

func TestVerifyTornTailIsAWarning(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 5, Options{})
	f, _ := os.OpenFile(segPath(dir, 1), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":99,"time":"20`)
	f.Close()
	rep := mustVerify(t, dir)
	if rep.TornBytes == 0 || len(rep.Warnings) == 0 {
		t.Fatalf("torn tail not reported: %+v", rep)
	}
}
