package sandbox

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
)

// The sandbox's browser (docs/browser.md): a Chromium inside the sandbox,
// run by its guest. The manager holds the primitives — its state, a
// launch and a stop on the record, DevTools connections, a record around
// any action — and the limits that fit a browser; the browser service
// (internal/browser) builds the actions agents and people use on them.
// The composition root registers the service with SetBrowser only so that
// a sandbox created with a browser has it started at once.

// Limits a sandbox created with a browser gets when its spec leaves them
// unset: Chromium with one tab takes about 175 MiB (measured), more tabs
// and heavy pages far more, and it runs tens of processes and threads.
// /dev/shm is half the memory (the native backend), so at least 512 MiB.
// Its start and first page take about a CPU-second: with one core's quota
// the first navigation took 760–970 ms, with two 410–550 ms.
const (
	BrowserMemoryMB = 1024
	BrowserPids     = 1024
	BrowserCPU      = 2.0
)

// browserSpec raises what s leaves unset to a browser's needs (bounded by
// the limits' ceilings). It runs before admission, so that quotas judge
// what the sandbox will really get, and again in Normalize.
func (l Limits) browserSpec(s Spec) Spec {
	if !s.Browser {
		return s
	}
	d := l.Default
	if s.MemoryMB == 0 && d.MemoryMB < BrowserMemoryMB {
		s.MemoryMB = min(int64(BrowserMemoryMB), max(l.MaxMemoryMB, d.MemoryMB))
	}
	if s.Pids == 0 && d.Pids < BrowserPids {
		s.Pids = min(int64(BrowserPids), max(l.MaxPids, d.Pids))
	}
	if s.CPU == 0 && d.CPU < BrowserCPU {
		s.CPU = min(BrowserCPU, max(l.MaxCPU, d.CPU))
	}
	return s
}

// States of a browser.
const (
	BrowserStopped  = guestapi.BrowserStopped
	BrowserStarting = guestapi.BrowserStarting // launched, DevTools not listening yet
	BrowserRunning  = guestapi.BrowserRunning
	BrowserFailed   = guestapi.BrowserFailed // crashed too often, or could not start
)

// ValidDevToolsID reports whether s looks like a DevTools target or
// browser id (hex digits and dashes, at most 64): ids the sandbox's
// browser sends are checked with it before they go into a URL.
func ValidDevToolsID(s string) bool { return guestapi.ValidDevToolsID(s) }

// BrowserState is the state of a sandbox's browser.
type BrowserState struct {
	State     string
	Pid       int    // in the sandbox
	Port      int    // DevTools port on the sandbox's loopback
	WSPath    string // /devtools/browser/<id>
	StartedAt time.Time
	// Instance counts launches (it changes at every restart); Restarts
	// counts the relaunches after a crash.
	Instance int
	Restarts int
	LastExit string // how the previous instance ended
	OOMKills int    // instances ended by the OOM killer
	Error    string // why it failed
	StartMs  float64
	// SandboxOOMKills are the OOM kills of the whole sandbox (a page's
	// renderer killed for memory counts here, not in OOMKills).
	SandboxOOMKills int64
}

// BrowserLaunch is how the browser service starts a sandbox's browser.
type BrowserLaunch struct {
	Path string            // the browser binary inside the sandbox
	Args []string          // without the binary; must include the profile and DevTools flags
	Env  map[string]string // added to its environment
	User string            // root or user (default)
	// ProfileDir is its --user-data-dir; DownloadDir is made for it.
	ProfileDir, DownloadDir string
	// Preferences is written to ProfileDir/Default/Preferences when the
	// profile has none yet.
	Preferences string
	// SmallShmArg is added to Args when /dev/shm is smaller than
	// ShmMinBytes (e.g. --disable-dev-shm-usage).
	SmallShmArg string
	ShmMinBytes int64
	Timeout     time.Duration // waiting for DevTools (0: 30 s)
}

// browserGuest is the guest of running sandbox id, for a caller acting
// with need.
func (m *Manager) browserGuest(sc Scope, id string, need rights.Right) (*box, *guestapi.Client, error) {
	if err := sc.Need(need); err != nil {
		return nil, nil, err
	}
	b, err := m.running(sc, id)
	if err != nil {
		return nil, nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b, b.inst.Guest(), nil
}

func browserState(b *box, info guestapi.BrowserInfo) BrowserState {
	st := BrowserState{State: info.State, Pid: info.Pid, Port: info.Port, WSPath: info.WSPath, StartedAt: info.StartedAt,
		Instance: info.Instance, Restarts: info.Restarts, LastExit: info.LastExit, OOMKills: info.OOMKills,
		Error: info.Error, StartMs: info.StartMs}
	if s, err := b.inst.Stats(); err == nil {
		st.SandboxOOMKills = s.OOMKills
	}
	return st
}

// BrowserState reports the sandbox's browser, for a caller acting with
// need (its status is read; actions of any right look it up). It starts
// nothing.
func (m *Manager) BrowserState(ctx context.Context, sc Scope, id string, need rights.Right) (BrowserState, error) {
	b, g, err := m.browserGuest(sc, id, need)
	if err != nil {
		return BrowserState{}, err
	}
	info, err := g.Browser(ctx)
	if err != nil {
		return BrowserState{}, err
	}
	return browserState(b, info), nil
}

// StartBrowser makes the sandbox's browser run, for a caller acting with
// need (an action of any right starts the browser it needs), and waits
// until its DevTools listen. A launch is on the record (browser.start); a
// browser already running is reported as it is.
func (m *Manager) StartBrowser(ctx context.Context, sc Scope, id string, need rights.Right, l BrowserLaunch) (BrowserState, error) {
	b, g, err := m.browserGuest(sc, id, need)
	if err != nil {
		return BrowserState{}, err
	}
	info, err := g.Browser(ctx)
	if err != nil {
		return BrowserState{}, err
	}
	if info.State == guestapi.BrowserRunning {
		return browserState(b, info), nil
	}
	err = m.act(ctx, sc, id, "browser.start", map[string]any{"binary": l.Path, "user": l.User}, func() (map[string]any, error) {
		var err error
		info, err = g.StartBrowser(ctx, guestapi.BrowserStartRequest{Path: l.Path, Args: l.Args, Env: l.Env, User: l.User,
			ProfileDir: l.ProfileDir, DownloadDir: l.DownloadDir, Preferences: l.Preferences, SmallShmArg: l.SmallShmArg,
			ShmMinBytes: l.ShmMinBytes, TimeoutMs: l.Timeout.Milliseconds()})
		if err != nil {
			return nil, err
		}
		return map[string]any{"pid": info.Pid, "instance": info.Instance, "start_ms": info.StartMs}, nil
	})
	if err != nil {
		return BrowserState{}, err
	}
	return browserState(b, info), nil
}

// StopBrowser stops the sandbox's browser (and its restarts), on the
// record (browser.stop).
func (m *Manager) StopBrowser(ctx context.Context, sc Scope, id string) (BrowserState, error) {
	b, g, err := m.browserGuest(sc, id, rights.Exec)
	if err != nil {
		return BrowserState{}, err
	}
	var info guestapi.BrowserInfo
	err = m.act(ctx, sc, id, "browser.stop", nil, func() (map[string]any, error) {
		var err error
		info, err = g.StopBrowser(ctx)
		return nil, err
	})
	if err != nil {
		return BrowserState{}, err
	}
	return browserState(b, info), nil
}

// DialBrowser opens a connection to the DevTools port of the sandbox's
// browser instance (0: whichever runs), relayed by its guest, for a
// caller acting with need: HTTP and WebSockets to Chromium go over it.
// The browser service's own connections serve actions that are on the
// record themselves; a caller's own DevTools connection is recorded by
// Act around it.
func (m *Manager) DialBrowser(ctx context.Context, sc Scope, id string, need rights.Right, instance int) (net.Conn, error) {
	_, g, err := m.browserGuest(sc, id, need)
	if err != nil {
		return nil, err
	}
	return g.DialBrowser(ctx, instance)
}

// Act runs fn on the record for a caller acting on sandbox id with need:
// the intent of kind before (an intent that cannot be recorded aborts),
// its result with fn's data after. It is how a service built over the
// manager (the browser's) audits the actions it composes.
func (m *Manager) Act(ctx context.Context, sc Scope, id string, need rights.Right, kind string, intent map[string]any,
	fn func() (map[string]any, error)) error {
	if err := sc.Need(need); err != nil {
		return err
	}
	if _, err := m.find(sc, id); err != nil {
		return err // no record for a sandbox the caller cannot see
	}
	return m.act(ctx, sc, id, kind, intent, fn)
}

// BrowserStarter is told of every sandbox created with a browser
// (spec.Browser), after Create succeeded; it starts the browser in the
// background and must not block (the browser service).
type BrowserStarter interface {
	SandboxCreated(sc Scope, sb Sandbox)
}

// browserSlot holds the registered starter.
type browserSlot struct{ p atomic.Pointer[browserBox] }

type browserBox struct{ b BrowserStarter }

// SetBrowser registers the browser service to start the browsers of
// sandboxes created with one. It is the manager's only link to the
// service; surfaces are given the service itself.
func (m *Manager) SetBrowser(b BrowserStarter) { m.browser.p.Store(&browserBox{b: b}) }

// browserCreated tells the service of a new sandbox that asked for a
// browser.
func (m *Manager) browserCreated(sc Scope, sb Sandbox, err error) {
	if err != nil || !sb.Spec.Browser {
		return
	}
	if bb := m.browser.p.Load(); bb != nil {
		bb.b.SandboxCreated(sc, sb)
	}
}
