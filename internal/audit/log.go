package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SyncMode is when records reach the disk.
type SyncMode string

// Sync modes. Every mode writes a record into the file (where it survives
// a crash or kill -9 of the server) before Append returns; they differ in
// when fsync makes it survive a power loss or kernel crash.
const (
	// SyncAlways: every record is fsync'd before Append returns.
	SyncAlways SyncMode = "always"
	// SyncBatch: intent records are fsync'd before Append returns (the
	// action never starts before its intent is durable); result and event
	// records are fsync'd with the next batch, at most SyncInterval later.
	SyncBatch SyncMode = "batch"
	// SyncInterval: the log is fsync'd every SyncInterval; a power loss
	// can lose that much.
	SyncInterval SyncMode = "interval"
)

// ParseSyncMode parses a --audit-sync value.
func ParseSyncMode(s string) (SyncMode, error) {
	switch m := SyncMode(s); m {
	case SyncAlways, SyncBatch, SyncInterval:
		return m, nil
	}
	return "", fmt.Errorf("audit sync mode %q: want always, batch or interval", s)
}

// Stats receives the log's measurements (metrics). Methods must not block.
type Stats interface {
	// AuditAppend is one Append: how long the caller waited, and how it
	// ended.
	AuditAppend(wait time.Duration, err error)
	// AuditBatch is one group commit: records written, and the time spent
	// in write and in fsync (0 if none).
	AuditBatch(records int, write, sync time.Duration, err error)
}

// Options configure a Log.
type Options struct {
	Dir                string // the audit directory (DATA/audit), created 0700
	Sync               SyncMode
	SyncInterval       time.Duration // default 10ms
	SegmentBytes       int64         // rotate segments at this size; default 64 MiB
	MaxSegments        int           // keep at most this many segments (0: all)
	CheckpointEvery    int           // records between signed checkpoints; default 1000
	CheckpointInterval time.Duration // and at most this long; default 1m
	Version            string        // recorded in the start record
	Log                *slog.Logger
	Stats              Stats
}

// Entry is what a caller records. Args and Result are redacted by Append.
type Entry struct {
	Action   string
	Phase    string
	Actor    string
	Tenant   string
	Sandbox  string
	Request  string
	Args     any
	Result   any
	Status   int
	Code     string
	Error    string
	Duration time.Duration
}

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("the audit log is closed")

// Log is an open audit log. It is safe for concurrent use.
type Log struct {
	o    Options
	dir  string
	log  *slog.Logger
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	fp   string

	closeMu  sync.Once
	closeErr error

	// Group commit: appenders queue; the first to arrive at an idle log
	// becomes the leader and commits the whole queue itself (no hand-off
	// to another goroutine, which costs milliseconds on a loaded host);
	// those arriving meanwhile wait, and the first of them leads next.
	qmu      sync.Mutex
	qcond    *sync.Cond // signalled when leading turns false
	queue    []*pending
	spare    []*pending
	leading  bool
	isClosed bool
	stopBG   chan struct{}
	bgDone   chan struct{}

	// writer state, under wmu.
	wmu       sync.Mutex
	wclosed   bool
	f         *os.File
	headF     *os.File
	seq       uint64
	prev      string
	size      int64
	segIdx    int
	sinceCP   int
	lastCP    time.Time
	unsynced  bool
	syncArmed bool
	syncing   int        // background fsyncs running without wmu
	syncDone  *sync.Cond // on wmu: a background fsync ended
	headSeq   uint64     // the record the head file names
	broken    error
	lost      int
	lostFirst string
	lostLast  string
	sysQueue  []Entry // records the log writes about itself, at the next commit
	buf       []byte

	// shared with readers
	mu      sync.Mutex
	segs    []segment
	written int64  // bytes of the active segment that readers may read
	lastSeq uint64 // last written record
	changed chan struct{}
}

type segment struct {
	name      string
	idx       int
	firstSeq  uint64 // 0 while empty
	firstTime string
}

type pending struct {
	rec  Record
	sync bool
	done chan error // the outcome, or errPromoted
}

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

// Open opens (or creates) the log in o.Dir: it loads the signing key,
// repairs a torn final line left by a crash (recording the repair),
// refuses a log that is shorter than its signed head, and starts the
// writer.
func Open(o Options) (*Log, error) {
	if o.Dir == "" {
		return nil, errors.New("audit: no directory")
	}
	if o.Sync == "" {
		o.Sync = SyncInterval // see docs/audit.md: the mode that meets the latency target here
	}
	if _, err := ParseSyncMode(string(o.Sync)); err != nil {
		return nil, err
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = 10 * time.Millisecond
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 64 << 20
	}
	if o.SegmentBytes < 4<<10 {
		o.SegmentBytes = 4 << 10
	}
	if o.CheckpointEvery <= 0 {
		o.CheckpointEvery = 1000
	}
	if o.CheckpointInterval <= 0 {
		o.CheckpointInterval = time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	// The log lives in the server's 0700 data directory, outside every
	// sandbox's root: nothing inside a sandbox can name it, let alone open
	// it (see docs/audit.md).
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit directory: %w", err)
	}
	if err := os.Chmod(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit directory: %w", err)
	}
	l := &Log{o: o, dir: o.Dir, log: o.Log, stopBG: make(chan struct{}), bgDone: make(chan struct{}),
		changed: make(chan struct{}), prev: ZeroHash}
	l.qcond = sync.NewCond(&l.qmu)
	l.syncDone = sync.NewCond(&l.wmu)
	segs, err := listSegments(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("audit directory: %w", err)
	}
	l.priv, err = loadOrCreateKey(o.Dir, len(segs) > 0)
	if err != nil {
		return nil, err
	}
	l.pub = l.priv.Public().(ed25519.PublicKey)
	l.fp = Fingerprint(l.pub)
	if err := ensurePublicKey(o.Dir, l.pub); err != nil {
		return nil, err
	}
	var startInfo = map[string]any{"version": o.Version, "pid": os.Getpid(), "sync": string(o.Sync), "signer": l.fp}
	if len(segs) == 0 {
		segs = []segment{{name: SegmentName(1), idx: 1}}
	} else if err := l.recover(segs, startInfo); err != nil {
		return nil, err
	}
	l.segs = segs
	last := segs[len(segs)-1]
	l.segIdx = last.idx
	l.f, err = os.OpenFile(filepath.Join(o.Dir, last.name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit segment: %w", err)
	}
	st, err := l.f.Stat()
	if err != nil {
		l.f.Close()
		return nil, fmt.Errorf("audit segment: %w", err)
	}
	l.size = st.Size()
	l.written = l.size
	l.lastSeq = l.seq
	if err := syncDir(o.Dir); err != nil {
		l.f.Close()
		return nil, fmt.Errorf("audit directory: %w", err)
	}
	l.headF, err = os.OpenFile(filepath.Join(o.Dir, HeadFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		l.f.Close()
		return nil, fmt.Errorf("audit head: %w", err)
	}
	l.lastCP = time.Now()
	go l.background()
	if _, err := l.append(context.Background(), Entry{Action: ActionStart, Phase: PhaseEvent, Args: startInfo}, true); err != nil {
		l.Close()
		return nil, fmt.Errorf("write the audit start record: %w", err)
	}
	return l, nil
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

// PublicKey is the key checkpoints and the head are signed with.
func (l *Log) PublicKey() ed25519.PublicKey { return l.pub }

// SigningKey is the log's signing key, for signing what the log sends
// elsewhere (webhook bodies). It never leaves the process.
func (l *Log) SigningKey() ed25519.PrivateKey { return l.priv }

// Dir is the audit directory.
func (l *Log) Dir() string { return l.dir }

// Mode is the sync mode.
func (l *Log) Mode() SyncMode { return l.o.Sync }

// Append records e and returns the record as written. It waits until the
// record is in the file (and fsync'd, as the sync mode says for e's
// phase). An error means the record is not in the log: the caller must
// not act.
func (l *Log) Append(ctx context.Context, e Entry) (Record, error) {
	return l.append(ctx, e, false)
}

func (l *Log) append(ctx context.Context, e Entry, forceSync bool) (Record, error) {
	start := time.Now()
	p := &pending{rec: l.prepare(e), done: make(chan error, 1), sync: forceSync}
	switch l.o.Sync {
	case SyncAlways:
		p.sync = true
	case SyncBatch:
		p.sync = p.sync || e.Phase == PhaseIntent
	}
	err := l.submit(ctx, p)
	if l.o.Stats != nil {
		l.o.Stats.AuditAppend(time.Since(start), err)
	}
	return p.rec, err
}

// prepare builds the record's fields (in the caller's goroutine, so the
// writer only numbers, chains and writes).
func (l *Log) prepare(e Entry) Record {
	r := Record{Action: clean(e.Action, 128), Phase: clean(e.Phase, 16), Actor: clean(e.Actor, 256), Tenant: clean(e.Tenant, 256),
		Sandbox: clean(e.Sandbox, 256), Request: clean(e.Request, 128), Status: e.Status, Code: clean(e.Code, 64),
		Error: clean(RedactString(e.Error), 2048), DurationNs: int64(e.Duration)}
	if e.Args != nil {
		r.Args = Redact(e.Args)
	}
	if e.Result != nil {
		r.Result = Redact(e.Result)
	}
	return r
}

// clean makes s valid UTF-8 (json.Marshal would write invalid bytes as
// an escape that decodes to a different string, and the record would not
// re-encode to itself) and bounds it.
func clean(s string, limit int) string {
	return clip(strings.ToValidUTF8(s, "\uFFFD"), limit)
}

// errPromoted tells a waiting appender that it leads the next commit.
var errPromoted = errors.New("promoted")

// submit queues p and waits for its outcome, committing the queue itself
// when it leads. Once queued, the outcome is the disk's: it waits for it
// whatever ctx says, or the caller could act on a record that then fails.
func (l *Log) submit(ctx context.Context, p *pending) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.qmu.Lock()
	if l.isClosed {
		l.qmu.Unlock()
		return ErrClosed
	}
	l.queue = append(l.queue, p)
	lead := !l.leading
	l.leading = true
	l.qmu.Unlock()
	if !lead {
		if err := <-p.done; err != errPromoted {
			return err
		}
	}
	// Leading: p is in the queue (appended above, or first in it when
	// promoted), so this one commit settles it.
	l.qmu.Lock()
	batch := l.queue
	l.queue = l.spare[:0]
	l.qmu.Unlock()
	l.wmu.Lock()
	l.commit(batch, false)
	l.wmu.Unlock()
	l.qmu.Lock()
	clear(batch)
	l.spare = batch[:0]
	if len(l.queue) > 0 {
		next := l.queue[0]
		l.qmu.Unlock()
		next.done <- errPromoted
	} else {
		l.leading = false
		l.qcond.Broadcast()
		l.qmu.Unlock()
	}
	return <-p.done
}

// background fsyncs written records SyncInterval after the first of them
// (when no commit did) and checkpoints every CheckpointInterval.
func (l *Log) background() {
	defer close(l.bgDone)
	cp := time.NewTicker(l.o.CheckpointInterval)
	defer cp.Stop()
	for {
		select {
		case <-l.stopBG:
			return
		case <-cp.C:
			l.wmu.Lock()
			if !l.wclosed && l.sinceCP > 0 {
				l.commit(nil, true)
			}
			l.wmu.Unlock()
		}
	}
}

// timedSync is the deferred fsync of batch and interval modes. It runs
// the fsync without holding wmu, so that appends keep being written
// meanwhile; what it makes durable is what was written when it started.
func (l *Log) timedSync() {
	l.wmu.Lock()
	l.syncArmed = false
	if l.wclosed || !l.unsynced || l.broken != nil {
		l.wmu.Unlock()
		return
	}
	f, seq, prev, seg := l.f, l.seq, l.prev, l.segIdx
	l.unsynced = false // writes from now on set it again
	l.syncing++
	l.wmu.Unlock()
	t0 := time.Now()
	err := f.Sync()
	took := time.Since(t0)
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.syncing--
	l.syncDone.Broadcast()
	if err != nil {
		l.fsyncFailed(err)
		return
	}
	if l.o.Stats != nil {
		l.o.Stats.AuditBatch(0, 0, took, nil)
	}
	l.writeHead(seq, prev, seg)
}

// waitSyncs waits for background fsyncs (before the file is closed).
func (l *Log) waitSyncs() {
	for l.syncing > 0 {
		l.syncDone.Wait()
	}
}

// Close writes a final signed checkpoint, syncs and closes the log.
func (l *Log) Close() error {
	l.closeMu.Do(func() {
		l.qmu.Lock()
		l.isClosed = true
		for l.leading {
			l.qcond.Wait()
		}
		l.qmu.Unlock()
		close(l.stopBG)
		<-l.bgDone
		l.wmu.Lock()
		defer l.wmu.Unlock()
		l.sysQueue = append(l.sysQueue, Entry{Action: ActionStop, Phase: PhaseEvent})
		l.commit(nil, true)
		l.waitSyncs()
		l.wclosed = true
		l.closeErr = l.finish()
	})
	return l.closeErr
}

func (l *Log) finish() error {
	var errs []error
	if l.f != nil {
		if err := l.f.Sync(); err != nil && l.broken == nil {
			errs = append(errs, err)
		}
		errs = append(errs, l.f.Close())
	}
	if l.headF != nil {
		if err := l.headF.Sync(); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, l.headF.Close())
	}
	if l.broken != nil {
		errs = append(errs, l.broken)
	}
	return errors.Join(errs...)
}

// commit writes batch (and any records the log owes about itself) with one
// write, checkpointing when due, and fsyncs once if any record asks (or,
// with batch nil, if anything is unsynced). Called with wmu held.
func (l *Log) commit(batch []*pending, forceCP bool) {
	if l.broken != nil {
		l.failAll(batch, l.broken)
		return
	}
	// Rotate before writing, so that what rotation records (a prune) goes
	// out with this batch and no empty segment is left at the end.
	if l.rotateDue() {
		l.rotate()
	}
	now := formatTime(time.Now())
	seq, prev := l.seq, l.prev
	buf := l.buf[:0]
	n := 0
	add := func(r *Record) error {
		r.Seq, r.Time, r.Prev = seq+1, now, prev
		line, hash, err := encode(r)
		if err != nil {
			return err
		}
		if len(line) > MaxLineBytes {
			return fmt.Errorf("audit record of %d bytes is over the limit", len(line))
		}
		buf = append(buf, line...)
		seq, prev = seq+1, hash
		n++
		return nil
	}
	if l.lost > 0 {
		gap := l.prepare(Entry{Action: ActionGap, Phase: PhaseEvent, Args: map[string]any{
			"lost": l.lost, "first": l.lostFirst, "last": l.lostLast,
			"reason": "records could not be written (the actions were refused, or allowed in fail-open mode)"}})
		if add(&gap) != nil {
			seq, prev, buf, n = l.seq, l.prev, buf[:0], 0
		}
	}
	for _, e := range l.sysQueue {
		r := l.prepare(e)
		_ = add(&r)
	}
	sync := forceCP
	ok := batch[:0:0]
	for _, p := range batch {
		if err := add(&p.rec); err != nil {
			p.done <- err
			continue
		}
		ok = append(ok, p)
		sync = sync || p.sync
	}
	if forceCP || l.sinceCP+n >= l.o.CheckpointEvery || (n > 0 && time.Since(l.lastCP) >= l.o.CheckpointInterval) {
		cp := l.checkpointRecord(seq, prev)
		if add(&cp) == nil {
			forceCP = true
			sync = true
		}
	}
	var wrote, synced time.Duration
	if n > 0 {
		t0 := time.Now()
		wasEmpty, firstSeq := l.size == 0, l.seq+1
		if err := l.write(buf); err != nil {
			l.failAll(ok, err)
			l.buf = buf[:0]
			if l.o.Stats != nil {
				l.o.Stats.AuditBatch(n, time.Since(t0), 0, err)
			}
			return
		}
		wrote = time.Since(t0)
		l.sysQueue = l.sysQueue[:0]
		l.lost = 0
		l.seq, l.prev = seq, prev
		if forceCP {
			l.sinceCP, l.lastCP = 0, time.Now()
		} else {
			l.sinceCP += n
		}
		l.unsynced = true
		l.publish(wasEmpty, firstSeq, now)
	}
	l.buf = buf[:0]
	// Writers that only need the write are told now; those that need the
	// fsync wait for it.
	for _, p := range ok {
		if !p.sync {
			p.done <- nil
		}
	}
	var syncErr error
	if l.unsynced && (sync || l.o.Sync == SyncAlways || batch == nil) {
		t0 := time.Now()
		syncErr = l.sync()
		synced = time.Since(t0)
	} else if l.unsynced && !l.syncArmed {
		l.syncArmed = true
		time.AfterFunc(l.o.SyncInterval, l.timedSync)
	}
	for _, p := range ok {
		if p.sync {
			p.done <- syncErr
		}
	}
	if l.o.Stats != nil && n > 0 {
		l.o.Stats.AuditBatch(n, wrote, synced, syncErr)
	}
}

func (l *Log) checkpointRecord(seq uint64, hash string) Record {
	sig := ed25519.Sign(l.priv, checkpointMessage(seq, hash))
	args, _ := json.Marshal(checkpointArgs{Seq: seq, Hash: hash, Signer: l.fp, Sig: base64.StdEncoding.EncodeToString(sig)})
	return Record{Action: ActionCheckpoint, Phase: PhaseEvent, Args: args}
}

// checkpointArgs are the args of a checkpoint record: a signature over the
// seq and hash of the record just before it.
type checkpointArgs struct {
	Seq    uint64 `json:"seq"`
	Hash   string `json:"hash"`
	Signer string `json:"signer"`
	Sig    string `json:"sig"`
}

// write appends buf to the active segment. A short write (ENOSPC, EDQUOT)
// is cut back off so the file ends on a record boundary and the chain in
// memory stays the chain on disk; if even that fails the log stops.
func (l *Log) write(buf []byte) error {
	n, err := l.f.Write(buf)
	if err == nil {
		l.size += int64(n)
		return nil
	}
	if terr := l.f.Truncate(l.size); terr != nil {
		l.broken = fmt.Errorf("audit log unusable: a write failed (%v) and could not be undone: %w", err, terr)
		l.log.Error("audit log unusable; every audited action is refused until restart", "err", l.broken)
		return l.broken
	}
	return fmt.Errorf("write audit log: %w", err)
}

// sync fsyncs the segment and then rewrites the signed head. After a
// failed fsync the kernel may have dropped the dirty pages (and a retry
// would then "succeed"), so nothing since the last good fsync can be
// trusted: the log stops.
func (l *Log) sync() error {
	if err := l.f.Sync(); err != nil {
		return l.fsyncFailed(err)
	}
	l.unsynced = false
	l.writeHead(l.seq, l.prev, l.segIdx)
	return nil
}

func (l *Log) fsyncFailed(err error) error {
	l.broken = fmt.Errorf("audit log unusable: fsync failed: %w", err)
	l.log.Error("audit log unusable; every audited action is refused until restart", "err", l.broken)
	return l.broken
}

// writeHead signs and writes the head for a durable record (never going
// back to an earlier one).
func (l *Log) writeHead(seq uint64, hash string, seg int) {
	if seq <= l.headSeq && l.headSeq != 0 {
		return
	}
	h := signHead(l.priv, seq, hash, formatTime(time.Now()), SegmentName(seg))
	b, err := h.encode()
	if err == nil {
		_, err = l.headF.WriteAt(b, 0)
	}
	if err != nil {
		// The head only lags: verify then reports an unsigned tail, not a
		// broken chain. Not a reason to refuse actions.
		l.log.Warn("audit head not updated", "err", err)
		return
	}
	l.headSeq = seq
}

func (l *Log) failAll(ps []*pending, err error) {
	for _, p := range ps {
		p.done <- err
	}
	if len(ps) > 0 {
		l.noteLost(len(ps), formatTime(time.Now()))
	}
}

func (l *Log) noteLost(n int, when string) {
	if n == 0 {
		return
	}
	if l.lost == 0 {
		l.lostFirst = when
	}
	l.lost += n
	l.lostLast = when
}

// publish makes what was written visible to readers and wakes followers.
func (l *Log) publish(segStarted bool, firstSeq uint64, firstTime string) {
	l.mu.Lock()
	l.written = l.size
	l.lastSeq = l.seq
	if s := &l.segs[len(l.segs)-1]; segStarted {
		s.firstSeq, s.firstTime = firstSeq, firstTime
	}
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *Log) rotateDue() bool { return l.size >= l.o.SegmentBytes && l.broken == nil }

// rotate starts the next segment. The chain simply continues in it.
func (l *Log) rotate() {
	l.waitSyncs() // the file is about to be closed
	if l.unsynced {
		if err := l.sync(); err != nil {
			return
		}
	}
	next := l.segIdx + 1
	f, err := os.OpenFile(filepath.Join(l.dir, SegmentName(next)), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		l.log.Warn("audit segment rotation failed; continuing in the current one", "err", err)
		return
	}
	if err := syncDir(l.dir); err != nil {
		f.Close()
		_ = os.Remove(filepath.Join(l.dir, SegmentName(next)))
		l.log.Warn("audit segment rotation failed; continuing in the current one", "err", err)
		return
	}
	_ = l.f.Close()
	l.f, l.size, l.segIdx = f, 0, next
	l.mu.Lock()
	l.segs = append(l.segs, segment{name: SegmentName(next), idx: next})
	l.written = 0
	l.mu.Unlock()
	l.prune()
}

// prune removes the oldest segments beyond MaxSegments and records it, so
// that Verify can tell retention from deletion.
func (l *Log) prune() {
	if l.o.MaxSegments <= 0 {
		return
	}
	l.mu.Lock()
	var drop []segment
	if len(l.segs) > l.o.MaxSegments {
		drop = append(drop, l.segs[:len(l.segs)-l.o.MaxSegments]...)
	}
	l.mu.Unlock()
	if len(drop) == 0 {
		return
	}
	keep := l.segs[len(drop)]
	var first *Record
	if keep.firstSeq != 0 {
		r, err := firstRecord(filepath.Join(l.dir, keep.name))
		if err != nil || r == nil {
			l.log.Warn("audit prune skipped: oldest kept segment unreadable", "segment", keep.name, "err", err)
			return
		}
		first = r
	}
	firstSeq, firstPrev := l.seq+1, l.prev
	if first != nil {
		firstSeq, firstPrev = first.Seq, first.Prev
	}
	var names []string
	for _, s := range drop {
		if err := os.Remove(filepath.Join(l.dir, s.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.log.Warn("audit prune: cannot remove segment", "segment", s.name, "err", err)
			return
		}
		names = append(names, s.name)
	}
	l.mu.Lock()
	l.segs = append([]segment(nil), l.segs[len(drop):]...)
	l.mu.Unlock()
	l.sysQueue = append(l.sysQueue, Entry{Action: ActionPrune, Phase: PhaseEvent, Args: pruneArgs{
		Removed: names, FirstSeq: firstSeq, FirstPrev: firstPrev}})
}

// pruneArgs are the args of a prune record.
type pruneArgs struct {
	Removed   []string `json:"removed"`
	FirstSeq  uint64   `json:"first_seq"`
	FirstPrev string   `json:"first_prev"`
}
