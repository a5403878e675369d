package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Segments: naming and listing them, finding where the log ends after a
// restart (repairing a torn final line), rotation and pruning.

// SegmentName is the file name of segment idx.
func SegmentName(idx int) string { return fmt.Sprintf("audit-%08d.jsonl", idx) }

func parseSegmentName(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "audit-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".jsonl")
	if !ok || len(s) != 8 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// listSegments returns the segment files of dir in order.
func listSegments(dir string) ([]segment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, e := range ents {
		if idx, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			segs = append(segs, segment{name: e.Name(), idx: idx})
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].idx < segs[j].idx })
	return segs, nil
}

// recover finds where the log ends. A final line without its newline is
// the remnant of a write cut short by a crash: it was never acknowledged
// (Append waits for the write), so it is cut off and the cut is recorded.
// Anything else that is wrong is left alone for Verify to report.
func (l *Log) recover(segs []segment, startInfo map[string]any) error {
	last := segs[len(segs)-1]
	path := filepath.Join(l.dir, last.name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open audit segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	// Find the last newline, reading backwards.
	end := size
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end > 0 {
		off := end - chunk
		if off < 0 {
			off = 0
		}
		n, err := f.ReadAt(buf[:end-off], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read audit segment: %w", err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = off + int64(i) + 1
			break
		}
		end = off
		if size-end > MaxLineBytes+1 {
			break
		}
	}
	if end < size {
		torn := make([]byte, size-end)
		if _, err := f.ReadAt(torn, end); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read audit segment: %w", err)
		}
		if size-end > MaxLineBytes+1 {
			return fmt.Errorf("audit segment %s ends with %d bytes that are not a record: run `paddock audit verify`", last.name, size-end)
		}
		if err := f.Truncate(end); err != nil {
			return fmt.Errorf("repair torn audit record: %w", err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("repair torn audit record: %w", err)
		}
		sum := sha256.Sum256(torn)
		l.sysQueue = append(l.sysQueue, Entry{Action: ActionRepair, Phase: PhaseEvent, Args: map[string]any{
			"segment": last.name, "offset": end, "discarded_bytes": len(torn), "discarded_sha256": hex.EncodeToString(sum[:]),
			"reason": "a partial final record (a write cut short by a crash) was removed"}})
		l.log.Warn("audit log: removed a torn final record left by a crash", "segment", last.name, "bytes", len(torn))
	}
	// The last complete record gives the chain's state. A just-rotated
	// empty segment takes it from the one before.
	var lastRec *Record
	for i := len(segs) - 1; i >= 0 && lastRec == nil; i-- {
		r, err := lastRecord(filepath.Join(l.dir, segs[i].name))
		if err != nil {
			return fmt.Errorf("audit segment %s: the last record is unreadable (%v): run `paddock audit verify`", segs[i].name, err)
		}
		lastRec = r
	}
	if lastRec != nil {
		l.seq, l.prev = lastRec.Seq, lastRec.Hash
	}
	for i := range segs {
		r, err := firstRecord(filepath.Join(l.dir, segs[i].name))
		if err != nil {
			return fmt.Errorf("audit segment %s: %w", segs[i].name, err)
		}
		if r != nil {
			segs[i].firstSeq, segs[i].firstTime = r.Seq, r.Time
		}
	}
	h, err := ReadHead(filepath.Join(l.dir, HeadFile), l.pub)
	switch {
	case errors.Is(err, ErrNoHead):
		if l.seq > 0 {
			startInfo["head_problem"] = "missing"
			l.log.Warn("audit log: head file missing; verify will report it until the next flush rewrites it")
		}
	case err != nil:
		startInfo["head_problem"] = err.Error()
		l.log.Warn("audit log: head file unusable", "err", err)
	case h.Seq > l.seq:
		// Fail closed: continuing would overwrite the head, the only
		// evidence that records were removed.
		return fmt.Errorf("the audit log is truncated: it ends at seq %d but its signed head records seq %d; preserve %s as evidence and run `paddock audit verify`", l.seq, h.Seq, l.dir)
	default:
		if n := l.seq - h.Seq; n > 0 {
			startInfo["unsigned_tail"] = n // written before a crash, after the last head
		}
	}
	return nil
}

func lastRecord(path string) (*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, nil
	}
	n := int64(MaxLineBytes + 2)
	if n > st.Size() {
		n = st.Size()
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, st.Size()-n); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	} else if n < st.Size() {
		return nil, errors.New("last line too long")
	}
	r, err := ParseLine(buf)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

func firstRecord(path string) (*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	line, err := readLine(br)
	if errors.Is(err, io.EOF) && len(line) == 0 {
		return nil, nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("first record unreadable: %w", err)
	}
	return &r, nil
}

// readLine reads one line (without its newline), refusing lines over
// MaxLineBytes. At the end of input it returns the partial line and
// io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > MaxLineBytes+1 {
			return nil, fmt.Errorf("line over %d bytes", MaxLineBytes)
		}
		if err == nil {
			return line[:len(line)-1], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}
