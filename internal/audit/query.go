package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ParseWhen reads a time bound of a query as the API and the CLI take it:
// an RFC 3339 time, or a duration meaning that long ago ("1h"). An empty s
// is no bound (the zero time); ok is false for anything else.
func ParseWhen(s string) (t time.Time, ok bool) {
	if s == "" {
		return time.Time{}, true
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return time.Now().Add(-d), true
	}
	return time.Time{}, false
}

// Query selects records. Zero fields match everything.
type Query struct {
	Sandbox string
	Actor   string
	Tenant  string
	// Action matches exactly, or as a prefix when it ends in "." or "*"
	// ("sandbox.*" matches sandbox.create and sandbox.delete).
	Action string
	Since  time.Time // records at or after
	Until  time.Time // records before
	After  uint64    // cursor: only records with a larger seq
	Limit  int       // page size (default 100, at most MaxPage)
	// Tail, if set, returns the last Tail matching records (After still
	// applies) instead of the first Limit.
	Tail int
}

// MaxPage bounds one page of Query.
const MaxPage = 1000

// Page is one answer of Query. Records are the lines exactly as stored
// (each still carries its hash). Next is the cursor to continue from (the
// seq of the last record examined, matching or not, so that a follower
// never rescans); More says whether another match follows it now.
type Page struct {
	Records []json.RawMessage `json:"records"`
	Next    uint64            `json:"next_cursor"`
	More    bool              `json:"has_more"`
}

// meta is the part of a record the filters look at.
type meta struct {
	Seq     uint64 `json:"seq"`
	Time    string `json:"time"`
	Action  string `json:"action"`
	Actor   string `json:"actor"`
	Tenant  string `json:"tenant"`
	Sandbox string `json:"sandbox"`
}

func (q *Query) match(m *meta) bool {
	if m.Seq <= q.After {
		return false
	}
	if q.Sandbox != "" && m.Sandbox != q.Sandbox {
		return false
	}
	if q.Actor != "" && m.Actor != q.Actor {
		return false
	}
	if q.Tenant != "" && m.Tenant != q.Tenant {
		return false
	}
	if q.Action != "" {
		if p, ok := strings.CutSuffix(q.Action, "*"); ok {
			if !strings.HasPrefix(m.Action, p) {
				return false
			}
		} else if strings.HasSuffix(q.Action, ".") {
			if !strings.HasPrefix(m.Action, q.Action) {
				return false
			}
		} else if m.Action != q.Action {
			return false
		}
	}
	// Times are fixed-width UTC strings: they compare as strings.
	if !q.Since.IsZero() && m.Time < formatTime(q.Since) {
		return false
	}
	if !q.Until.IsZero() && m.Time >= formatTime(q.Until) {
		return false
	}
	return true
}

// view is a consistent snapshot of what readers may read.
type view struct {
	segs    []segment
	written int64
	lastSeq uint64
}

func (l *Log) snapshot() view {
	l.mu.Lock()
	defer l.mu.Unlock()
	return view{segs: append([]segment(nil), l.segs...), written: l.written, lastSeq: l.lastSeq}
}

// startSegment is the first segment that can hold a match of q.
func (v view) startSegment(q *Query) int {
	start := 0
	for i := 1; i < len(v.segs); i++ {
		s := v.segs[i]
		if s.firstSeq == 0 {
			break
		}
		// Segment i-1 holds only records before s.firstSeq and before
		// s.firstTime (the writer's clock, so nearly monotonic: a clock
		// step backwards can only make us read more).
		if s.firstSeq <= q.After+1 || (!q.Since.IsZero() && s.firstTime <= formatTime(q.Since)) {
			start = i
		}
	}
	return start
}

// scan calls fn for every record from segment index from on, up to what
// was written when the scan started; fn returns false to stop.
func (l *Log) scan(ctx context.Context, v view, from int, fn func(m *meta, line []byte) bool) error {
	for i := from; i < len(v.segs); i++ {
		limit := int64(-1)
		if i == len(v.segs)-1 {
			limit = v.written
		}
		cont, err := scanFile(ctx, filepath.Join(l.dir, v.segs[i].name), limit, fn)
		if err != nil {
			return err
		}
		if !cont {
			return nil
		}
	}
	return nil
}

func scanFile(ctx context.Context, path string, limit int64, fn func(m *meta, line []byte) bool) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil // pruned meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("read audit segment: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return false, ctx.Err()
		}
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return true, nil // a partial line at the end is a write in progress
		}
		if err != nil {
			return false, fmt.Errorf("read audit segment: %w", err)
		}
		var m meta
		if json.Unmarshal(line, &m) != nil {
			continue // Verify reports it; queries skip it
		}
		if !fn(&m, line) {
			return false, nil
		}
	}
}

// Query returns one page of records matching q, oldest first (or, with
// q.Tail, the last q.Tail matches).
func (l *Log) Query(ctx context.Context, q Query) (Page, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	if q.Limit > MaxPage {
		q.Limit = MaxPage
	}
	if q.Tail > MaxPage {
		q.Tail = MaxPage
	}
	v := l.snapshot()
	page := Page{Records: []json.RawMessage{}, Next: q.After}
	if q.Tail > 0 {
		return l.tail(ctx, v, q)
	}
	err := l.scan(ctx, v, v.startSegment(&q), func(m *meta, line []byte) bool {
		if m.Seq <= q.After {
			return true
		}
		if q.match(m) {
			if len(page.Records) == q.Limit {
				page.More = true // another match follows
				return false
			}
			page.Records = append(page.Records, append(json.RawMessage(nil), line...))
		}
		page.Next = m.Seq
		return true
	})
	return page, err
}

// tail keeps the last q.Tail matches, walking segments from the newest
// back until enough are found.
func (l *Log) tail(ctx context.Context, v view, q Query) (Page, error) {
	page := Page{Records: []json.RawMessage{}, Next: v.lastSeq}
	var found [][]json.RawMessage // per segment, newest segment first
	total := 0
	for i := len(v.segs) - 1; i >= 0 && total < q.Tail; i-- {
		if i+1 < len(v.segs) && v.segs[i+1].firstSeq != 0 && v.segs[i+1].firstSeq <= q.After+1 {
			break
		}
		ring := make([]json.RawMessage, 0, q.Tail)
		limit := int64(-1)
		if i == len(v.segs)-1 {
			limit = v.written
		}
		if _, err := scanFile(ctx, filepath.Join(l.dir, v.segs[i].name), limit, func(m *meta, line []byte) bool {
			if q.match(m) {
				if len(ring) == q.Tail {
					copy(ring, ring[1:])
					ring = ring[:q.Tail-1]
				}
				ring = append(ring, append(json.RawMessage(nil), line...))
			}
			return true
		}); err != nil {
			return page, err
		}
		found = append(found, ring)
		total += len(ring)
	}
	var all []json.RawMessage
	for i := len(found) - 1; i >= 0; i-- {
		all = append(all, found[i]...)
	}
	if len(all) > q.Tail {
		all = all[len(all)-q.Tail:]
	}
	page.Records = append(page.Records, all...)
	return page, nil
}

// Export writes every record matching q (ignoring Limit and Tail) to w as
// JSON lines, exactly as stored, up to what was written when it started.
func (l *Log) Export(ctx context.Context, q Query, w io.Writer) error {
	v := l.snapshot()
	var werr error
	err := l.scan(ctx, v, v.startSegment(&q), func(m *meta, line []byte) bool {
		if !q.match(m) {
			return true
		}
		if _, werr = w.Write(line); werr == nil {
			_, werr = w.Write([]byte{'\n'})
		}
		return werr == nil
	})
	if err != nil {
		return err
	}
	return werr
}

// Wait blocks until a record after seq exists or ctx ends; it reports
// whether one does.
func (l *Log) Wait(ctx context.Context, seq uint64) bool {
	l.mu.Lock()
	ch, last := l.changed, l.lastSeq
	l.mu.Unlock()
	if last > seq {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// LastSeq is the seq of the last record written.
func (l *Log) LastSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastSeq
}
