package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// BadRecord is what Verify found wrong, at the first record where it went
// wrong.
type BadRecord struct {
	Seq     uint64 // the seq expected at that place (0: not about one record)
	Segment string // file name; empty for the head
	Line    int    // 1-based line in Segment
	Reason  string
}

func (b *BadRecord) Error() string {
	switch {
	case b.Segment == "":
		return "audit log invalid: " + b.Reason
	case b.Seq == 0:
		return fmt.Sprintf("audit log invalid at %s line %d: %s", b.Segment, b.Line, b.Reason)
	}
	return fmt.Sprintf("audit log invalid at seq %d (%s line %d): %s", b.Seq, b.Segment, b.Line, b.Reason)
}

// Report summarises a log that verified.
type Report struct {
	Records  uint64 `json:"records"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Segments int    `json:"segments"`
	// Sealed counts the closed segments whose last record is a signed
	// checkpoint (every closed segment, for a log written since sealing).
	Sealed         int    `json:"sealed_segments"`
	Checkpoints    int    `json:"checkpoints"`
	LastCheckpoint uint64 `json:"last_checkpoint_seq"`
	HeadSeq        uint64 `json:"head_seq"`
	Signer         string `json:"signer"`
	// UnsignedTail counts records after both the last checkpoint and the
	// head: written just before a crash (or appended by someone without
	// the key); nothing signed vouches for them.
	UnsignedTail uint64 `json:"unsigned_tail"`
	// TornBytes is a partial final line: a write in progress, or one cut
	// short by a crash (the next start removes it). Never acknowledged.
	TornBytes int `json:"torn_bytes,omitempty"`
	// PrunedBefore is set when older segments were removed by retention
	// (recorded in the log, so it is not a deletion).
	PrunedBefore uint64   `json:"pruned_before,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
}

// Verify checks the audit log in dir: every record's hash, the chain
// (each prev is the hash before it), consecutive sequence numbers across
// segments, every checkpoint's signature, and the signed head (a log that
// ends before the head has been truncated). pub is the key to check
// signatures with (nil: dir's signing.pub — pass an off-host copy to rule
// out a replaced key). It returns a *BadRecord naming the first problem.
func Verify(dir string, pub ed25519.PublicKey) (*Report, error) {
	if pub == nil {
		var err error
		if pub, err = LoadPublicKey(filepath.Join(dir, PubKeyFile)); err != nil {
			return nil, fmt.Errorf("%w (pass --pubkey)", err)
		}
	}
	rep := &Report{Signer: Fingerprint(pub)}
	// The head first: the log only grows, so a head read before the
	// segments never runs past them, even while a server writes.
	head, herr := ReadHead(filepath.Join(dir, HeadFile), pub)
	if herr != nil && !errors.Is(herr, ErrNoHead) {
		return rep, &BadRecord{Reason: herr.Error()}
	}
	segs, err := listSegments(dir)
	if err != nil {
		return rep, fmt.Errorf("read audit directory: %w", err)
	}
	if len(segs) == 0 {
		return rep, &BadRecord{Reason: "no audit segments in " + dir}
	}
	if errors.Is(herr, ErrNoHead) {
		return rep, &BadRecord{Reason: "the head file is missing: the log cannot be checked for truncation"}
	}
	rep.HeadSeq = head.Seq
	rep.Segments = len(segs)
	v := verifier{pub: pub, fp: rep.Signer, rep: rep, head: head}
	unsealed := 0
	for i, s := range segs {
		last := i == len(segs)-1
		if err := v.segment(filepath.Join(dir, s.name), s.name, last); err != nil {
			return rep, err
		}
		switch {
		case last:
		case v.segLastAction == ActionCheckpoint:
			rep.Sealed++
		default:
			unsealed++
		}
	}
	if unsealed > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d closed segment(s) do not end with a signed checkpoint (written before segments were sealed); the chain still covers them", unsealed))
	}
	if rep.Records == 0 {
		return rep, &BadRecord{Seq: 1, Segment: segs[0].name, Line: 1, Reason: "the log has no records"}
	}
	if v.lastSeq < head.Seq {
		return rep, &BadRecord{Seq: v.lastSeq + 1, Segment: v.lastSeg, Line: v.lastLine + 1,
			Reason: fmt.Sprintf("missing: the log is truncated (it ends at seq %d, the signed head records seq %d)", v.lastSeq, head.Seq)}
	}
	if !v.headSeen {
		return rep, &BadRecord{Seq: head.Seq, Reason: "the signed head names a record that is not in the log"}
	}
	if rep.FirstSeq != 1 {
		if v.pruneFirst != rep.FirstSeq || v.pruneFirstPrev != v.firstPrev {
			return rep, &BadRecord{Seq: 1, Segment: segs[0].name, Line: 1,
				Reason: fmt.Sprintf("missing: the log starts at seq %d and no retention record accounts for the earlier ones", rep.FirstSeq)}
		}
		rep.PrunedBefore = rep.FirstSeq
	}
	signed := max(rep.LastCheckpoint, head.Seq)
	if rep.LastSeq > signed {
		rep.UnsignedTail = rep.LastSeq - signed
	}
	return rep, nil
}

type verifier struct {
	pub  ed25519.PublicKey
	fp   string
	rep  *Report
	head Head

	lastSeq        uint64
	segLastAction  string // the action of the current segment's last record
	lastHash       string
	lastSeg        string
	lastLine       int
	firstPrev      string
	headSeen       bool
	pruneFirst     uint64
	pruneFirstPrev string
}

func (v *verifier) segment(path, name string, last bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	v.segLastAction = ""
	for lineNo := 1; ; lineNo++ {
		expect := v.lastSeq + 1
		bad := func(format string, args ...any) error {
			return &BadRecord{Seq: expect, Segment: name, Line: lineNo, Reason: fmt.Sprintf(format, args...)}
		}
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			if len(line) == 0 {
				return nil
			}
			if !last {
				return bad("the segment ends with a partial record (%d bytes without a newline)", len(line))
			}
			v.rep.TornBytes = len(line)
			v.rep.Warnings = append(v.rep.Warnings, fmt.Sprintf("%s ends with a partial record of %d bytes (a write in progress, or cut short by a crash; never acknowledged; removed at the next start)", name, len(line)))
			return nil
		}
		if err != nil {
			return bad("%v", err)
		}
		r, err := ParseLine(line)
		if err != nil {
			return bad("%v", err)
		}
		first := v.rep.Records == 0
		switch {
		case first && r.Seq == 1:
			if r.Prev != ZeroHash {
				return bad("the first record must chain from the zero hash")
			}
		case first:
			// The start may have been pruned; the prune record, later in
			// the log, must account for it (checked at the end).
			v.rep.FirstSeq, v.firstPrev = r.Seq, r.Prev
			expect = r.Seq
		case r.Seq < expect:
			return bad("found seq %d here: records are duplicated or out of order", r.Seq)
		case r.Seq > expect:
			return bad("missing (found seq %d here): records were removed or reordered", r.Seq)
		case r.Prev != v.lastHash:
			return bad("its prev does not match the hash of seq %d before it: that record was altered or replaced, or this one was", v.lastSeq)
		}
		if first && r.Seq == 1 {
			v.rep.FirstSeq, v.firstPrev = 1, r.Prev
		}
		switch r.Action {
		case ActionCheckpoint:
			if err := v.checkpoint(&r); err != nil {
				return bad("%v", err)
			}
		case ActionPrune:
			var a pruneArgs
			if json.Unmarshal(r.Args, &a) == nil {
				v.pruneFirst, v.pruneFirstPrev = a.FirstSeq, a.FirstPrev
			}
		}
		if r.Seq == v.head.Seq {
			if r.Hash != v.head.Hash {
				return bad("the record differs from the one the signed head vouches for")
			}
			v.headSeen = true
		}
		v.lastSeq, v.lastHash, v.lastSeg, v.lastLine = r.Seq, r.Hash, name, lineNo
		v.segLastAction = r.Action
		v.rep.LastSeq = r.Seq
		v.rep.Records++
	}
}

func (v *verifier) checkpoint(r *Record) error {
	var a checkpointArgs
	dec := json.NewDecoder(bytes.NewReader(r.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return fmt.Errorf("checkpoint unreadable: %v", err)
	}
	// The chain check already tied r.Prev to the record before (when there
	// is one in the log: a pruned log may start with a checkpoint).
	if a.Seq != r.Seq-1 || a.Hash != r.Prev {
		return fmt.Errorf("checkpoint covers seq %d but follows seq %d", a.Seq, r.Seq-1)
	}
	if a.Signer != v.fp {
		return fmt.Errorf("checkpoint signed by %s, not by %s", a.Signer, v.fp)
	}
	sig, err := base64.StdEncoding.DecodeString(a.Sig)
	if err != nil || !ed25519.Verify(v.pub, checkpointMessage(a.Seq, a.Hash), sig) {
		return fmt.Errorf("checkpoint signature does not verify with key %s", v.fp)
	}
	v.rep.Checkpoints++
	v.rep.LastCheckpoint = r.Seq
	return nil
}

// VerifyLine parses one line and, given the record before it (nil for the
// first), checks the chain link. It is the per-line core of Verify.
func VerifyLine(prev *Record, line []byte) (Record, error) {
	r, err := ParseLine(line)
	if err != nil {
		return r, err
	}
	if prev == nil {
		if r.Seq == 1 && r.Prev != ZeroHash {
			return r, errors.New("the first record must chain from the zero hash")
		}
		return r, nil
	}
	if r.Seq != prev.Seq+1 {
		return r, fmt.Errorf("seq %d follows seq %d", r.Seq, prev.Seq)
	}
	if r.Prev != prev.Hash {
		return r, errors.New("prev does not match the previous record's hash")
	}
	return r, nil
}
