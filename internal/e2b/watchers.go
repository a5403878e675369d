package e2b

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Polling watchers (CreateWatcher, GetWatcherEvents, RemoveWatcher): what
// SDKs without server streams use. Each is a watch held open by this
// adapter, its events kept until polled.

// Limits of polling watchers.
const (
	maxWatchers        = 1024 // in all (the guest allows 16 watches per sandbox)
	maxWatcherEvents   = 1024 // kept between two polls
	watcherIdleTimeout = 5 * time.Minute
)

type watchers struct {
	s      *Server
	mu     sync.Mutex
	byID   map[string]*pollWatch
	closed bool
	wg     sync.WaitGroup // the watches' readers
}

type pollWatch struct {
	id, sandbox, tenant string
	cancel              context.CancelFunc
	fw                  *sandbox.FileWatch

	mu       sync.Mutex
	events   []pbFilesystemEvent
	err      error // why it ended
	ended    bool
	lastPoll time.Time
}

func newWatchers(s *Server) *watchers {
	return &watchers{s: s, byID: map[string]*pollWatch{}}
}

func newWatcherID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "w_" + hex.EncodeToString(b[:])
}

// sweep closes watchers nobody polled for a while. Called with w.mu held.
func (w *watchers) sweep(now time.Time) {
	for id, pw := range w.byID {
		pw.mu.Lock()
		idle := now.Sub(pw.lastPoll) > watcherIdleTimeout
		pw.mu.Unlock()
		if idle {
			delete(w.byID, id)
			pw.cancel()
		}
	}
}

func fsCreateWatcher(c *rpcCall, in *pbWatchRequest) (any, error) {
	w := c.s.watch
	w.mu.Lock()
	w.sweep(time.Now())
	full := len(w.byID) >= maxWatchers || w.closed
	w.mu.Unlock()
	if full {
		return nil, errs.New(errs.CodeLimit, "too many watchers are open; remove some")
	}
	// The watch outlives this call: it belongs to the watcher.
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.ctx()))
	wc := &rpcCall{s: c.s, q: c.q, cx: ctx} // no request: it is over before the watch is
	fw, root, err := wc.openWatch(in)
	if err != nil {
		cancel()
		return nil, err
	}
	pw := &pollWatch{id: newWatcherID(), sandbox: c.q.id, tenant: c.q.sc.Tenant, cancel: cancel, fw: fw, lastPoll: time.Now()}
	w.mu.Lock()
	if w.closed || len(w.byID) >= maxWatchers {
		w.mu.Unlock()
		cancel()
		_ = fw.Close()
		return nil, errs.New(errs.CodeLimit, "too many watchers are open; remove some")
	}
	w.byID[pw.id] = pw
	w.wg.Add(1)
	w.mu.Unlock()
	go func() {
		defer w.wg.Done()
		pw.run(wc, root, in.IncludeEntry)
	}()
	return pbCreateWatcherResponse{WatcherID: pw.id}, nil
}

// run collects the watch's events until it ends or is removed.
func (pw *pollWatch) run(c *rpcCall, root string, withEntry bool) {
	defer pw.fw.Close()
	for {
		ev, err := pw.fw.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || c.ctx().Err() != nil {
				err = nil
			}
			pw.finish(err)
			return
		}
		out, done, err := c.watchEvents(root, ev, withEntry)
		pw.mu.Lock()
		if len(pw.events)+len(out) > maxWatcherEvents {
			pw.mu.Unlock()
			pw.finish(rpcErr(ccDataLoss, "more than %d events waited between two polls; events were lost", maxWatcherEvents))
			return
		}
		pw.events = append(pw.events, out...)
		pw.mu.Unlock()
		if done {
			pw.finish(err)
			return
		}
	}
}

func (pw *pollWatch) finish(err error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if !pw.ended {
		pw.ended, pw.err = true, err
	}
	pw.cancel()
}

// lookup finds a watcher of the caller's sandbox; any other is not found.
func (w *watchers) lookup(c *rpcCall, id string) *pollWatch {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw := w.byID[id]
	if pw == nil || pw.sandbox != c.q.id || pw.tenant != c.q.sc.Tenant {
		return nil
	}
	return pw
}

func (w *watchers) remove(id string) {
	w.mu.Lock()
	pw := w.byID[id]
	delete(w.byID, id)
	w.mu.Unlock()
	if pw != nil {
		pw.cancel()
	}
}

func fsGetWatcherEvents(c *rpcCall, in *pbWatcherRequest) (any, error) {
	pw := c.s.watch.lookup(c, in.WatcherID)
	if pw == nil {
		return nil, errs.NotFound("watcher not found")
	}
	pw.mu.Lock()
	events, ended, err := pw.events, pw.ended, pw.err
	pw.events = nil
	pw.lastPoll = time.Now()
	pw.mu.Unlock()
	if ended && len(events) == 0 {
		// Its events are delivered; then the end, once.
		c.s.watch.remove(pw.id)
		if err != nil {
			return nil, err
		}
		return nil, errs.NotFound("the watcher ended (its directory is gone)")
	}
	if events == nil {
		events = []pbFilesystemEvent{}
	}
	return pbWatcherEventsResponse{Events: events}, nil
}

func fsRemoveWatcher(c *rpcCall, in *pbWatcherRequest) (any, error) {
	if c.s.watch.lookup(c, in.WatcherID) == nil {
		return nil, errs.NotFound("watcher not found")
	}
	c.s.watch.remove(in.WatcherID)
	return empty{}, nil
}

// dropSandbox removes the watchers of a deleted sandbox.
func (w *watchers) dropSandbox(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for wid, pw := range w.byID {
		if pw.sandbox == id {
			delete(w.byID, wid)
			pw.cancel()
		}
	}
}

// closeAll ends every watcher and waits for their readers, so that none
// outlives the server (each records its watch's end).
func (w *watchers) closeAll() {
	w.mu.Lock()
	w.closed = true
	for id, pw := range w.byID {
		delete(w.byID, id)
		pw.cancel()
	}
	w.mu.Unlock()
	w.wg.Wait()
}
