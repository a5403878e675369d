package audit

import (
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/internal/durable"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Retention. The log is written in segments; a full one is sealed (its
// last record is a signed checkpoint) and the next begins. Sealed segments
// expire — oldest first, never the active one — beyond MaxSegments, beyond
// MaxBytes in all, or once older than MaxAge; expired ones are moved to
// ArchiveDir, or deleted. An audit.prune record, made durable before any
// file goes, names them and where the kept chain starts, so Verify tells
// retention from deletion: an unbounded log is a disk-exhaustion target
// (a read-only key grew it ~5 MB/s, and a full disk fails every tenant
// closed: issue 14 item 12).

func (l *Log) rotateDue() bool { return l.size >= l.o.SegmentBytes && l.broken == nil }

// rotate starts the next segment (the chain simply continues in it) and
// reports whether it did.
func (l *Log) rotate() bool {
	l.waitSyncs() // the file is about to be closed
	if l.unsynced {
		if err := l.sync(); err != nil {
			return false
		}
	}
	next := l.segIdx + 1
	f, err := os.OpenFile(filepath.Join(l.dir, SegmentName(next)), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		l.log.Warn("audit segment rotation failed; continuing in the current one", "err", err)
		return false
	}
	if err := durable.SyncDir(l.dir); err != nil {
		f.Close()
		_ = os.Remove(filepath.Join(l.dir, SegmentName(next)))
		l.log.Warn("audit segment rotation failed; continuing in the current one", "err", err)
		return false
	}
	_ = l.f.Close()
	l.f, l.size, l.segIdx = f, 0, next
	l.mu.Lock()
	l.segs = append(l.segs, segment{name: SegmentName(next), idx: next})
	l.written = 0
	l.mu.Unlock()
	return true
}

// retains reports whether any retention bound is set.
func (o *Options) retains() bool { return o.MaxSegments > 0 || o.MaxBytes > 0 || o.MaxAge > 0 }

// expire picks the sealed segments past a retention bound and queues the
// prune record that accounts for them; the next commit writes it, syncs,
// and only then removes them (drop). Called with wmu held.
func (l *Log) expire() {
	if !l.o.retains() || len(l.dropping) > 0 || l.broken != nil {
		return
	}
	l.mu.Lock()
	segs := append([]segment(nil), l.segs...)
	l.mu.Unlock()
	if len(segs) < 2 {
		return
	}
	sealed := segs[:len(segs)-1]
	sizes := make([]int64, len(sealed))
	var total int64
	for i, s := range sealed {
		if st, err := os.Stat(filepath.Join(l.dir, s.name)); err == nil {
			sizes[i] = st.Size()
			total += st.Size()
		}
	}
	total += l.size
	now := time.Now()
	n := 0
	for n < len(sealed) {
		s := sealed[n]
		over := l.o.MaxSegments > 0 && len(segs)-n > l.o.MaxSegments
		over = over || l.o.MaxBytes > 0 && total > l.o.MaxBytes
		if !over && l.o.MaxAge > 0 {
			// A sealed segment's last write is its newest record.
			if st, err := os.Stat(filepath.Join(l.dir, s.name)); err == nil && now.Sub(st.ModTime()) > l.o.MaxAge {
				over = true
			}
		}
		if !over {
			break
		}
		total -= sizes[n]
		n++
	}
	if n == 0 {
		return
	}
	keep := segs[n]
	firstSeq, firstPrev := l.seq+1, l.prev // the prune record opens an empty segment
	if keep.firstSeq != 0 {
		r, err := firstRecord(filepath.Join(l.dir, keep.name))
		if err != nil || r == nil {
			l.log.Warn("audit retention skipped: the oldest kept segment is unreadable", "segment", keep.name, "err", err)
			return
		}
		firstSeq, firstPrev = r.Seq, r.Prev
	}
	var names []string
	for _, s := range sealed[:n] {
		names = append(names, s.name)
	}
	l.dropping = append([]segment(nil), sealed[:n]...)
	args := pruneArgs{Removed: names, FirstSeq: firstSeq, FirstPrev: firstPrev}
	if l.o.ArchiveDir != "" {
		args.ArchivedTo = l.o.ArchiveDir
	}
	// First in the queue: the commit writes the queue before anything
	// else, so for a fresh segment this is its first record.
	l.sysQueue = append([]Entry{{Action: ActionPrune, Phase: PhaseEvent, Args: args}}, l.sysQueue...)
}

// drop removes (or archives) the segments whose prune record is durable.
// Called with wmu held.
func (l *Log) drop() {
	segs := l.dropping
	l.dropping = nil
	gone := 0
	for _, s := range segs {
		p := filepath.Join(l.dir, s.name)
		var err error
		if l.o.ArchiveDir != "" {
			err = archive(p, filepath.Join(l.o.ArchiveDir, s.name))
		} else {
			err = os.Remove(p)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			// The record says it went; Verify still passes with it here.
			l.log.Warn("audit retention: cannot remove a segment", "segment", s.name, "err", err)
			break
		}
		gone++
	}
	if gone == 0 {
		return
	}
	_ = durable.SyncDir(l.dir)
	l.mu.Lock()
	l.segs = append([]segment(nil), l.segs[gone:]...)
	l.mu.Unlock()
	l.log.Info("audit retention: segments expired", "count", gone, "archived", l.o.ArchiveDir != "")
}

// archive moves a sealed segment to dst (a copy, fsync'd, then the
// original removed, where a rename cannot cross file systems).
func archive(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err == nil {
		return durable.SyncDir(filepath.Dir(dst))
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("archive %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := durable.SyncDir(filepath.Dir(dst)); err != nil {
		return err
	}
	return os.Remove(src)
}

// pruneArgs are the args of a prune record.
type pruneArgs struct {
	Removed    []string `json:"removed"`
	FirstSeq   uint64   `json:"first_seq"`
	FirstPrev  string   `json:"first_prev"`
	ArchivedTo string   `json:"archived_to,omitempty"`
}
