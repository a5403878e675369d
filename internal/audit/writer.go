package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The writer: group commit, chaining, checkpoints, fsync and the signed
// head.

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
	disk := time.NewTicker(diskCheckInterval)
	defer disk.Stop()
	for {
		select {
		case <-l.stopBG:
			return
		case <-cp.C:
			l.wmu.Lock()
			if !l.wclosed {
				l.expire() // by age, while the log is quiet too
				if l.sinceCP > 0 || len(l.sysQueue) > 0 {
					l.commit(nil, true)
				}
			}
			l.wmu.Unlock()
		case <-disk.C:
			l.checkDisk()
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
	// out with this batch and no empty segment is left at the end. The
	// full segment is sealed first: a signed checkpoint is its last record.
	if l.rotateDue() && !l.sealing {
		l.sealing = true
		if l.sinceCP > 0 || len(l.sysQueue) > 0 || l.lost > 0 {
			l.commit(nil, true)
		}
		l.sealing = false
		if l.broken != nil {
			l.failAll(batch, l.broken)
			return
		}
		if l.rotate() {
			l.expire()
		}
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
	for _, e := range l.sysQueue {
		r := l.prepare(e)
		_ = add(&r)
	}
	gapSeq, gapPrev, gapLen, gapN := seq, prev, len(buf), n
	if l.lost > 0 {
		gap := l.prepare(Entry{Action: ActionGap, Phase: PhaseEvent, Args: map[string]any{
			"lost": l.lost, "first": l.lostFirst, "last": l.lostLast,
			"reason": "records could not be written (the actions were refused, or allowed in fail-open mode)"}})
		if add(&gap) != nil {
			seq, prev, buf, n = gapSeq, gapPrev, buf[:gapLen], gapN
		}
	}
	// Records of expired segments must be durable before the files go.
	sync := forceCP || len(l.dropping) > 0
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
	if len(l.dropping) > 0 && n > 0 && syncErr == nil && !l.unsynced {
		l.drop()
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
