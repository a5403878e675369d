//go:build linux

package process

import (
	"net/http"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// Handlers.

// maxStartHead bounds a start request (argv and environment).
const maxStartHead = 4 << 20

func (g *registry) handleStart(_ *http.Request, req *guestapi.ProcessStartRequest) (guestapi.ProcessInfo, error) {
	bp, err := g.start(*req)
	if err != nil {
		return guestapi.ProcessInfo{}, err
	}
	return bp.info(), nil
}

func (g *registry) handleList(*http.Request, *guestapi.Empty) (guestapi.ProcList, error) {
	return guestapi.ProcList{Processes: g.list()}, nil
}

func (g *registry) handleGet(_ *http.Request, req *guestapi.ProcRequest) (guestapi.ProcessInfo, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.ProcessInfo{}, err
	}
	return bp.info(), nil
}

func (g *registry) handleKill(_ *http.Request, req *guestapi.ProcRequest) (guestapi.ProcessInfo, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.ProcessInfo{}, err
	}
	bp.kill()
	return bp.info(), nil
}

func (g *registry) handleStdin(r *http.Request, req *guestapi.ProcRequest) (guestapi.StdinResult, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.StdinResult{}, err
	}
	n, err := bp.writeStdin(r.Context().Done(), r.Body)
	return guestapi.StdinResult{Bytes: n}, err
}

func (g *registry) handleCloseStdin(_ *http.Request, req *guestapi.ProcRequest) (guestapi.Empty, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.Empty{}, err
	}
	return guestapi.Empty{}, bp.closeStdin()
}

func (g *registry) handleSignal(_ *http.Request, req *guestapi.ProcSignalRequest) (guestapi.SignalResult, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.SignalResult{}, err
	}
	sig, err := guestapi.ParseSignal(req.Signal)
	if err != nil {
		return guestapi.SignalResult{}, err
	}
	n, err := bp.signal(syscall.Signal(sig), req.Tree)
	return guestapi.SignalResult{Signalled: n}, err
}

func (g *registry) handleResize(_ *http.Request, req *guestapi.ProcResizeRequest) (guestapi.Empty, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.Empty{}, err
	}
	return guestapi.Empty{}, bp.resize(req.PTYSize)
}

// maxWait bounds one wait; callers loop for longer.
const maxWait = time.Hour

func (g *registry) handleWait(r *http.Request, req *guestapi.ProcWaitRequest) (guestapi.ProcessInfo, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.ProcessInfo{}, err
	}
	if req.TimeoutMs < 0 || req.TimeoutMs > maxWait.Milliseconds() {
		return guestapi.ProcessInfo{}, errs.Invalid("timeout_ms must be 0..%d", maxWait.Milliseconds())
	}
	bp.wait(r.Context().Done(), time.Duration(req.TimeoutMs)*time.Millisecond)
	return bp.info(), nil
}

func (g *registry) handleDeadline(_ *http.Request, req *guestapi.ProcDeadlineRequest) (guestapi.ProcessInfo, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.ProcessInfo{}, err
	}
	if err := validTimeout(req.TimeoutMs); err != nil {
		return guestapi.ProcessInfo{}, err
	}
	if err := bp.setDeadline(time.Duration(req.TimeoutMs) * time.Millisecond); err != nil {
		return guestapi.ProcessInfo{}, err
	}
	return bp.info(), nil
}
