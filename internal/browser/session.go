package browser

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

const (
	maxTabs       = 64  // tabs the server attaches to per sandbox
	maxDownloads  = 100 // downloads remembered per sandbox
	attachTimeout = 10 * time.Second
)

// session is the server's DevTools connection to one sandbox's browser
// instance, with the tabs it attached to. Actions on it run one at a time
// (sem): a tab's chromedp context must not be shared by goroutines, and
// an agent's actions are sequential anyway.
type session struct {
	s      *Service
	id     string        // the sandbox
	sc     sandbox.Scope // the caller it was opened for
	need   rights.Right  // and the right of that caller's action
	d      devtools
	spec   sandbox.Spec
	ctx    context.Context // the browser connection; done when it is lost
	cancel context.CancelFunc
	alloc  *allocator
	sem    chan struct{}
	used   atomic.Int64 // unix nanos
	active atomic.Int32
	oomAt  int64 // the sandbox's OOM kills when the session connected

	mu        sync.Mutex
	restarted string // how the previous instance ended, if this session is the first with a restarted browser
	tabs      map[target.ID]*tab
	current   target.ID
	downloads []download // newest last, at most maxDownloads
	dlSeq     int        // downloads ever seen
	closeOnce sync.Once
}

type download struct {
	guid string
	seq  int
	d    wire.Download
}

// tab is a page the session attached to.
type tab struct {
	id      target.ID
	ctx     context.Context
	cancel  context.CancelFunc
	crashed atomic.Bool // the renderer died; a navigation brings it back
	stuck   atomic.Bool // an action timed out: the page may be hung

	mu      sync.Mutex
	refs    map[string]cdp.BackendNodeID // from the last snapshot
	onCrash func()
	nav     *navWatch // the navigation the running action watches for
}

// connect starts the browser if needed and opens a session with it. A
// browser that just died can still look running for a moment (until the
// guest reaps it): connecting then fails, and is tried again.
func (s *Service) connect(ctx context.Context, sc sandbox.Scope, id string, need rights.Right, spec sandbox.Spec) (*session, error) {
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt) * 150 * time.Millisecond):
			}
		}
		var sess *session
		if sess, err = s.connectOnce(ctx, sc, id, need, spec); err == nil || errs.CodeOf(err) != errs.CodeUnavailable {
			return sess, err
		}
	}
	return nil, err
}

func (s *Service) connectOnce(ctx context.Context, sc sandbox.Scope, id string, need rights.Right, spec sandbox.Spec) (*session, error) {
	info, err := s.startBrowser(ctx, sc, id, need)
	if err != nil {
		return nil, err
	}
	d := newDevtools(s.m, sc, id, need, info, s.limits)
	debugf := func(format string, args ...any) {
		s.log.Debug("browser: chromedp", "sandbox", id, "msg", fmt.Sprintf(format, args...))
	}
	alloc := &allocator{d: d, opts: []chromedp.BrowserOption{chromedp.WithBrowserLogf(debugf),
		chromedp.WithBrowserErrorf(debugf), chromedp.WithBrowserDebugf(func(string, ...any) {})}}
	actx, acancel := chromedp.NewAllocatorContext(s.ctx, alloc)
	rctx, rcancel := chromedp.NewContext(actx)
	sess := &session{s: s, id: id, sc: sc, need: need, d: d, spec: spec, ctx: rctx, alloc: alloc,
		sem: make(chan struct{}, 1), tabs: map[target.ID]*tab{}}
	sess.cancel = func() { rcancel(); acancel() }
	sess.touch()
	if prev := s.lastInstance(id, info.Instance); prev != 0 && prev != info.Instance && info.LastExit != "" {
		sess.restarted = info.LastExit
	}
	sess.oomAt = info.SandboxOOMKills
	fail := func(err error) (*session, error) {
		sess.close()
		if why := alloc.refusedWhy(); why != "" {
			return nil, errs.New(errs.CodeUnavailable, "cannot connect to the sandbox's browser: the server closed the connection, which broke a DevTools limit (%s)",
				strings.TrimPrefix(why, errCDPLimit.Error()+": "))
		}
		if errs.CodeOf(err) == errs.CodeInternal {
			return nil, errs.Wrap(errs.CodeUnavailable, err, "cannot connect to the sandbox's browser")
		}
		return nil, err
	}
	// The first call binds the connection's life to rctx.
	if err := within(ctx, attachTimeout, "connecting to the browser", func() error {
		_, err := chromedp.Targets(rctx)
		return err
	}); err != nil {
		return fail(err)
	}
	b := chromedp.FromContext(rctx).Browser
	yes := true
	cctx, cancel := context.WithTimeout(rctx, attachTimeout)
	defer cancel()
	if _, err := cdp.Call(cctx, b, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: s.o.DownloadDir, EventsEnabled: &yes}); err != nil {
		return fail(err)
	}
	go sess.watchDownloads(b)
	go func() {
		<-rctx.Done()
		s.drop(sess)
	}()
	return sess, nil
}

// takeRestarted returns (once) how the browser's previous instance ended,
// when it crashed since the sandbox's last session.
func (sess *session) takeRestarted() string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	r := sess.restarted
	sess.restarted = ""
	return r
}

func (sess *session) touch()              { sess.used.Store(time.Now().UnixNano()) }
func (sess *session) lastUsed() time.Time { return time.Unix(0, sess.used.Load()) }
func (sess *session) busy() int32         { return sess.active.Load() }
func (sess *session) alive() bool         { return sess.ctx.Err() == nil }

// close ends the connection (the browser and its tabs stay).
func (sess *session) close() {
	sess.closeOnce.Do(func() {
		sess.mu.Lock()
		tabs := sess.tabs
		sess.tabs = map[target.ID]*tab{}
		sess.mu.Unlock()
		for _, t := range tabs {
			t.cancel()
		}
		sess.cancel()
	})
}

// warm attaches to the current tab ahead of the first action (a browser
// started at create is then ready to navigate at once).
func (sess *session) warm(ctx context.Context) error {
	unlock, err := sess.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	id, err := sess.resolveTab(ctx, "")
	if err != nil {
		return err
	}
	_, err = sess.attach(ctx, id)
	return err
}

// lock takes the session for one action.
func (sess *session) lock(ctx context.Context) (func(), error) {
	sess.active.Add(1)
	select {
	case sess.sem <- struct{}{}:
		sess.touch()
		return func() {
			<-sess.sem
			sess.touch()
			sess.active.Add(-1)
		}, nil
	case <-ctx.Done():
		sess.active.Add(-1)
		return nil, ctx.Err()
	case <-sess.ctx.Done():
		sess.active.Add(-1)
		return nil, sess.lostError(ctx, "the action")
	}
}

// watchDownloads records the browser's downloads.
func (sess *session) watchDownloads(b *chromedp.Browser) {
	go func() {
		for ev, err := range cdp.Events(sess.ctx, b, browser.DownloadWillBegin) {
			if err != nil {
				return
			}
			sess.mu.Lock()
			if len(sess.downloads) >= maxDownloads {
				sess.downloads = append(sess.downloads[:0], sess.downloads[1:]...)
			}
			sess.dlSeq++
			sess.downloads = append(sess.downloads, download{guid: ev.GUID, seq: sess.dlSeq, d: wire.Download{
				URL: clipText(ev.URL, 2048), Filename: clipText(ev.SuggestedFilename, 255), State: "inProgress"}})
			sess.mu.Unlock()
		}
	}()
	for ev, err := range cdp.Events(sess.ctx, b, browser.DownloadProgress) {
		if err != nil {
			return
		}
		sess.mu.Lock()
		for i := range sess.downloads {
			if sess.downloads[i].guid != ev.GUID {
				continue
			}
			d := &sess.downloads[i].d
			d.State, d.Bytes, d.TotalBytes = string(ev.State), ev.ReceivedBytes, ev.TotalBytes
			if ev.FilePath != "" {
				d.Path = clipText(ev.FilePath, 4096)
			} else if ev.State == browser.DownloadProgressStateCompleted && d.Path == "" {
				d.Path = strings.TrimRight(sess.s.o.DownloadDir, "/") + "/" + d.Filename
			}
		}
		sess.mu.Unlock()
	}
}

// downloadMark is where downloadsSince starts: now.
func (sess *session) downloadMark() int {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.dlSeq
}

// downloadsSince returns the downloads that began after mark.
func (sess *session) downloadsSince(mark int) []wire.Download {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	var out []wire.Download
	for _, d := range sess.downloads {
		if d.seq > mark {
			out = append(out, d.d)
		}
	}
	return out
}

// pages lists the browser's pages (tabs), in the browser's order.
func (sess *session) pages(ctx context.Context) ([]*target.Info, error) {
	tctx, cancel := context.WithTimeout(sess.ctx, attachTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	infos, err := chromedp.Targets(tctx)
	if err != nil {
		return nil, err
	}
	var out []*target.Info
	for _, in := range infos {
		if in.Type == "page" && !strings.HasPrefix(in.URL, "chrome://") && !strings.HasPrefix(in.URL, "devtools://") {
			out = append(out, in)
		}
	}
	return out, nil
}

func (sess *session) tabList(ctx context.Context) ([]wire.Tab, error) {
	infos, err := sess.pages(ctx)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	cur := sess.current
	sess.mu.Unlock()
	out := make([]wire.Tab, 0, len(infos))
	for _, in := range infos {
		out = append(out, wire.Tab{ID: string(in.TargetID), URL: clipText(in.URL, 2048), Title: clipText(in.Title, 512),
			Current: in.TargetID == cur})
	}
	return out, nil
}

// resolveTab finds the tab ref names: "" (the current tab; the first page
// if none is current, a new one if there is none), an index in the tab
// list, or an id (or a unique prefix of at least 4 characters).
func (sess *session) resolveTab(ctx context.Context, ref string) (target.ID, error) {
	infos, err := sess.pages(ctx)
	if err != nil {
		return "", err
	}
	sess.mu.Lock()
	cur := sess.current
	sess.mu.Unlock()
	if ref == "" {
		for _, in := range infos {
			if in.TargetID == cur {
				return cur, nil
			}
		}
		if len(infos) > 0 {
			sess.setCurrent(infos[0].TargetID)
			return infos[0].TargetID, nil
		}
		return sess.newPage(ctx, "about:blank")
	}
	if n, err := strconv.Atoi(ref); err == nil {
		if n < 0 || n >= len(infos) {
			return "", errs.NotFound("no tab %d: the browser has %d tabs (0..%d)", n, len(infos), len(infos)-1)
		}
		return infos[n].TargetID, nil
	}
	var match []target.ID
	for _, in := range infos {
		id := string(in.TargetID)
		if strings.EqualFold(id, ref) {
			return in.TargetID, nil
		}
		if len(ref) >= 4 && strings.HasPrefix(strings.ToUpper(id), strings.ToUpper(ref)) {
			match = append(match, in.TargetID)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return "", errs.NotFound("no tab %q (list them with GET .../browser/tabs)", clipText(ref, 64))
	}
	return "", errs.Invalid("tab %q is ambiguous: give more of its id", clipText(ref, 64))
}

func (sess *session) setCurrent(id target.ID) {
	sess.mu.Lock()
	sess.current = id
	sess.mu.Unlock()
}

func (sess *session) currentTab() target.ID {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.current
}

// newPage opens a tab (its own window, so it is never hidden behind
// another and keeps rendering) and makes it current.
func (sess *session) newPage(ctx context.Context, url string) (target.ID, error) {
	infos, err := sess.pages(ctx)
	if err != nil {
		return "", err
	}
	if len(infos) >= maxTabs {
		return "", errs.New(errs.CodeLimit, "the browser has %d tabs (the limit); close some", len(infos))
	}
	cctx, cancel := context.WithTimeout(sess.ctx, attachTimeout)
	defer cancel()
	yes := true
	res, err := cdp.Call(cctx, chromedp.FromContext(sess.ctx).Browser, target.CreateTarget,
		target.CreateTargetParams{URL: url, NewWindow: &yes})
	if err != nil {
		return "", err
	}
	sess.setCurrent(res.TargetID)
	return res.TargetID, nil
}

// attach returns the session's handle on page id, attaching first.
func (sess *session) attach(ctx context.Context, id target.ID) (*tab, error) {
	sess.mu.Lock()
	if t := sess.tabs[id]; t != nil && t.ctx.Err() == nil {
		sess.mu.Unlock()
		return t, nil
	}
	if len(sess.tabs) >= maxTabs {
		for tid, t := range sess.tabs { // forget detached ones first
			if t.ctx.Err() != nil {
				delete(sess.tabs, tid)
			}
		}
	}
	sess.mu.Unlock()
	t := &tab{id: id}
	tctx, cancel := chromedp.NewContext(sess.ctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel(),
		chromedp.WithListener(t.onEvent))
	t.ctx, t.cancel = tctx, cancel
	// The viewport is the configured size: a headless window's viewport
	// is its size less the browser's (invisible) toolbars.
	w, h := int64(sess.s.o.Width), int64(sess.s.o.Height)
	if err := within(ctx, attachTimeout, "attaching to the tab", func() error {
		return chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride,
				emulation.SetDeviceMetricsOverrideParams{Width: w, Height: h, DeviceScaleFactor: 1})
			return err
		}))
	}); err != nil {
		cancel()
		return nil, err
	}
	sess.mu.Lock()
	if old := sess.tabs[id]; old != nil {
		old.cancel()
	}
	sess.tabs[id] = t
	sess.mu.Unlock()
	return t, nil
}

// forget drops the handle on a closed tab.
func (sess *session) forget(id target.ID) {
	sess.mu.Lock()
	t := sess.tabs[id]
	delete(sess.tabs, id)
	if sess.current == id {
		sess.current = ""
	}
	sess.mu.Unlock()
	if t != nil {
		t.cancel()
	}
}

// onEvent follows a tab: a new document invalidates the snapshot's
// references; a renderer crash marks the tab; the running action's
// navigation watch sees the page's events in order.
func (t *tab) onEvent(ev any) {
	switch ev.(type) {
	case *page.EventFrameRequestedNavigation, *page.EventLoadEventFired, *page.EventFrameStoppedLoading:
		t.mu.Lock()
		if t.nav != nil {
			t.nav.onEvent(ev)
		}
		t.mu.Unlock()
	}
	switch ev := ev.(type) {
	case *page.EventFrameNavigated:
		if ev.Frame != nil && ev.Frame.ParentID == "" {
			t.mu.Lock()
			t.refs = nil
			t.mu.Unlock()
			t.crashed.Store(false)
		}
	case *inspector.EventTargetCrashed:
		t.crashed.Store(true)
		t.mu.Lock()
		f := t.onCrash
		t.mu.Unlock()
		if f != nil {
			f()
		}
	case *inspector.EventTargetReloadedAfterCrash:
		t.crashed.Store(false)
	}
}

// watchCrash calls f if the tab crashes until the returned func is called.
func (t *tab) watchCrash(f func()) func() {
	t.mu.Lock()
	t.onCrash = f
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.onCrash = nil
		t.mu.Unlock()
	}
}

func (t *tab) setRefs(refs map[string]cdp.BackendNodeID) {
	t.mu.Lock()
	t.refs = refs
	t.mu.Unlock()
}

func (t *tab) ref(name string) (cdp.BackendNodeID, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.refs[name]
	return id, ok
}

// errLost marks an action that failed because the connection to the
// browser went away (the action may not have reached it).
var errLost = errors.New("connection to the browser lost")

// lostError explains a connection that went away under an action. A
// browser that just died still looks running until the guest reaps it:
// give that a moment, to say what happened.
func (sess *session) lostError(ctx context.Context, what string) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	var info sandbox.BrowserState
	for i := 0; ; i++ {
		var err error
		info, err = sess.s.m.BrowserState(cctx, sess.sc, sess.id, sess.need)
		if err != nil {
			return errs.Wrap(errs.CodeSandboxNotActive, err, "%s failed: the sandbox is gone", what)
		}
		if info.State != sandbox.BrowserRunning || info.Instance != sess.d.instance || i == 5 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	e := sess.lostExplained(what, info)
	e.Cause = errLost
	return e
}

func (sess *session) lostExplained(what string, info sandbox.BrowserState) *errs.Error {
	switch {
	case sess.alloc.refusedWhy() != "":
		return errs.New(errs.CodeUnavailable, "%s failed: the server closed its connection to the browser, which broke a DevTools limit (%s); the next action reconnects", what, strings.TrimPrefix(sess.alloc.refusedWhy(), errCDPLimit.Error()+": "))
	case info.State == sandbox.BrowserFailed:
		return errs.New(errs.CodeUnavailable, "%s failed: the browser failed (%s)%s", what, info.Error, oomNote(info))
	case info.State == sandbox.BrowserStopped:
		return errs.New(errs.CodeUnavailable, "%s failed: the browser was stopped; the next action starts it again", what)
	case (info.Instance != sess.d.instance || info.State != sandbox.BrowserRunning) && info.LastExit != "":
		return errs.New(errs.CodeUnavailable, "%s failed: the browser crashed (%s) and is restarted; its tabs are gone: try again, and navigate first", what, info.LastExit)
	}
	return errs.New(errs.CodeUnavailable, "%s failed: the connection to the browser was lost; try again", what)
}

func oomNote(info sandbox.BrowserState) string {
	if info.OOMKills > 0 {
		return "; it ran out of memory: give the sandbox more (memory_mb)"
	}
	return ""
}

// crashError explains a page whose renderer died under an action.
func (sess *session) crashError(ctx context.Context, what string) error {
	why := "its renderer failed"
	if st, err := sess.s.m.BrowserState(context.WithoutCancel(ctx), sess.sc, sess.id, sess.need); err == nil && st.SandboxOOMKills > sess.oomAt {
		why = fmt.Sprintf("it ran out of memory (the sandbox's limit is %d MiB)", sess.spec.MemoryMB)
		sess.oomAt = st.SandboxOOMKills
	}
	return errs.New(errs.CodeUnavailable, "%s failed: the page crashed: %s; the browser is fine — navigate again (or open a new tab)", what, why)
}
