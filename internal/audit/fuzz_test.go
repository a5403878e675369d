package audit

import (
	"bytes"
	"encoding/json"
	"testing"
)

func seedLines(f *testing.F) []byte {
	r := Record{Seq: 1, Time: formatTime(fixedTime), Action: "exec", Phase: PhaseIntent, Actor: "admin",
		Args: json.RawMessage(`{"argv":["sh","-c","echo \"hi\"\n"]}`), Prev: ZeroHash}
	line, _, err := encode(&r)
	if err != nil {
		f.Fatal(err)
	}
	return bytes.TrimSuffix(line, []byte("\n"))
}

// FuzzVerifyLine: whatever the bytes, parsing never panics, and a line
// that is accepted is exactly the canonical encoding of what it says (so
// two readers cannot disagree about a record), holds no raw newline, and
// chains only from its stated predecessor.
func FuzzVerifyLine(f *testing.F) {
	good := seedLines(f)
	f.Add(good, uint64(0), ZeroHash)
	f.Add(bytes.Replace(good, []byte(`"seq":1`), []byte(`"seq":2`), 1), uint64(1), ZeroHash)
	f.Add([]byte(`{"seq":1}`), uint64(0), "")
	f.Add([]byte(`{}`+`,"hash":"`+ZeroHash+`"}`), uint64(0), "")
	f.Add(append(good[:len(good)-10:len(good)-10], []byte("\n{\"seq\":2}")...), uint64(0), ZeroHash)
	f.Fuzz(func(t *testing.T, line []byte, prevSeq uint64, prevHash string) {
		var prev *Record
		if prevSeq > 0 {
			prev = &Record{Seq: prevSeq, Hash: prevHash}
		}
		r, err := VerifyLine(prev, line)
		if err != nil {
			return
		}
		if bytes.ContainsAny(line, "\n\r") {
			t.Fatalf("accepted a line with a raw line break: %q", line)
		}
		again, hash, err := encode(&r)
		if err != nil || !bytes.Equal(bytes.TrimSuffix(again, []byte("\n")), line) || hash != r.Hash {
			t.Fatalf("accepted a non-canonical line:\n%q\n%q", line, again)
		}
		if prev != nil && (r.Prev != prev.Hash || r.Seq != prev.Seq+1) {
			t.Fatalf("accepted a broken link")
		}
	})
}

// FuzzEncode: any field values encode to one line that parses back to the
// same record (nothing a caller passes can split or forge a line).
func FuzzEncode(f *testing.F) {
	f.Add("exec", "sh -c 'echo hi'", "admin", "\n{\"seq\":2}\n", uint64(1))
	f.Add("", "", "", "", uint64(0))
	f.Add("a\u2028b", "\x00\xff", "\"", "}", uint64(1<<63))
	f.Fuzz(func(t *testing.T, action, arg, actor, errText string, seq uint64) {
		if seq == 0 {
			seq = 1
		}
		l := &Log{}
		r := l.prepare(Entry{Action: action, Phase: PhaseResult, Actor: actor, Error: errText, Args: map[string]any{"argv": []string{arg}}})
		r.Seq, r.Time, r.Prev = seq, formatTime(fixedTime), ZeroHash
		line, _, err := encode(&r)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("not one line: %q", line)
		}
		back, err := ParseLine(line[:len(line)-1])
		if err != nil {
			t.Fatalf("own line refused: %v\n%q", err, line)
		}
		if back.Seq != seq || back.Actor != r.Actor || back.Error != r.Error || back.Action != r.Action {
			t.Fatalf("round trip changed the record")
		}
	})
}
