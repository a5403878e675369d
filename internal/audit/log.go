package audit

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/internal/durable"
	"log/slog"
	"os"
	"path/filepath"
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
	Dir          string // the audit directory (DATA/audit), created 0700
	Sync         SyncMode
	SyncInterval time.Duration // default 10ms
	SegmentBytes int64         // rotate segments at this size; default 64 MiB
	MaxSegments  int           // keep at most this many segments (0: all)
	MaxBytes     int64         // keep at most this many bytes of segments (0: no bound)
	MaxAge       time.Duration // expire sealed segments older than this (0: never)
	ArchiveDir   string        // move expired segments here instead of deleting them
	// MinFreeBytes is the low-disk alarm: below this much free space on
	// the audit volume the log warns and reports it (DiskStats), before a
	// full disk makes it refuse every audited action. Default: 4 segments
	// (at least 256 MiB); negative: no alarm.
	MinFreeBytes       int64
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
	sealing   bool      // a full segment's closing checkpoint is being written
	dropping  []segment // expired segments, removed once their prune record is durable
	disk      diskState

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
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = max(4*o.SegmentBytes, 256<<20)
	}
	if o.MaxBytes > 0 && o.MaxBytes < 2*o.SegmentBytes {
		return nil, fmt.Errorf("audit: the byte bound (%d) must hold at least two segments of %d bytes", o.MaxBytes, o.SegmentBytes)
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
	if err := durable.SyncDir(o.Dir); err != nil {
		l.f.Close()
		return nil, fmt.Errorf("audit directory: %w", err)
	}
	l.headF, err = os.OpenFile(filepath.Join(o.Dir, HeadFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		l.f.Close()
		return nil, fmt.Errorf("audit head: %w", err)
	}
	l.lastCP = time.Now()
	l.checkDisk() // the gauge has a value from the start
	go l.background()
	if _, err := l.append(context.Background(), Entry{Action: ActionStart, Phase: PhaseEvent, Args: startInfo}, true); err != nil {
		l.Close()
		return nil, fmt.Errorf("write the audit start record: %w", err)
	}
	return l, nil
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
