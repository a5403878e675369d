package sandbox

import (
	"context"
	"sync/atomic"
)

// The sandbox's browser (docs/browser.md): a Chromium inside the sandbox,
// run by the browser service (internal/browser), which the composition
// root registers with SetBrowser. What belongs to the manager: the limits
// that fit a browser, telling the service of sandboxes created with one,
// and the audit trail of browser actions.

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

// Browser is the browser service as the manager sees it.
type Browser interface {
	// SandboxCreated is told of every sandbox created with a browser
	// (spec.Browser), after Create succeeded; it starts the browser in the
	// background. It must not block.
	SandboxCreated(sc Scope, sb Sandbox)
}

// browserSlot holds the registered service.
type browserSlot struct{ p atomic.Pointer[browserBox] }

type browserBox struct{ b Browser }

// SetBrowser registers the browser service. The REST API and the MCP tools
// find it with BrowserService.
func (m *Manager) SetBrowser(b Browser) { m.browser.p.Store(&browserBox{b: b}) }

// BrowserService is the registered browser service, or nil.
func (m *Manager) BrowserService() Browser {
	if bb := m.browser.p.Load(); bb != nil {
		return bb.b
	}
	return nil
}

// browserCreated tells the service of a new sandbox that asked for a
// browser.
func (m *Manager) browserCreated(sc Scope, sb Sandbox, err error) {
	if err != nil || !sb.Spec.Browser {
		return
	}
	if b := m.BrowserService(); b != nil {
		b.SandboxCreated(sc, sb)
	}
}

// BrowserAction records a browser action on the audit trail (kind
// "browser."+action, intent before, result with fn's data after); an
// intent that cannot be recorded aborts it. The caller has resolved the
// sandbox for sc.
func (m *Manager) BrowserAction(ctx context.Context, sc Scope, id, action string, intent map[string]any, fn func() (map[string]any, error)) error {
	return m.act(ctx, sc, id, "browser."+action, intent, fn)
}
