//go:build linux

package process

import (
	"bytes"
	"context"
	"net/http"
	"syscall"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// streamOut writes bp's output from `from` as frames until it has caught up
// (follow unset) or the process has exited and its output drained (follow
// set), then a FrameExit with the process's state. A reader slower than
// the process loses the bytes the ring overwrote, and is told how many.
func (bp *bgProc) streamOut(ctx context.Context, from guestapi.From, follow bool, fw *guestapi.FrameWriter) error {
	offs := make([]int64, len(bp.streams))
	bp.mu.Lock()
	pos := make([]guestapi.Position, len(bp.streams))
	for i, s := range bp.streams {
		off, dropped := from.OffsetFor(s.name, s.ring.start, s.ring.end)
		offs[i] = off
		pos[i] = guestapi.Position{Stream: s.name, Offset: off, Dropped: dropped}
	}
	bp.mu.Unlock()
	for _, p := range pos {
		if err := fw.SendJSON(guestapi.FramePosition, p); err != nil {
			return err
		}
	}
	buf := make([]byte, 64<<10)
	next := 0 // round robin, so a busy stream cannot starve the other
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var (
			typ byte
			n   int
			gap *guestapi.Position
		)
		bp.mu.Lock()
		for k := range bp.streams {
			i := (next + k) % len(bp.streams)
			s := bp.streams[i]
			if offs[i] < s.ring.start {
				gap = &guestapi.Position{Stream: s.name, Offset: s.ring.start, Dropped: s.ring.start - offs[i]}
				offs[i] = s.ring.start
				break
			}
			if n = s.ring.readAt(offs[i], buf); n > 0 {
				typ = s.frame
				offs[i] += int64(n)
				next = i + 1
				break
			}
		}
		if gap == nil && n == 0 {
			// Caught up. Without follow that is the end, unless the
			// process has just exited and its last output is still on
			// the way (drained comes within the grace period).
			if bp.drained || (!follow && !bp.exited) {
				bp.mu.Unlock()
				break
			}
			ch := bp.waitChLocked()
			bp.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		bp.mu.Unlock()
		var err error
		if gap != nil {
			err = fw.SendJSON(guestapi.FramePosition, *gap)
		} else {
			err = fw.Send(typ, buf[:n])
		}
		if err != nil {
			return err
		}
	}
	return fw.SendJSON(guestapi.FrameExit, bp.info())
}

var errLimitReaders = errs.New(errs.CodeLimit, "too many output streams and terminals open on this sandbox's processes (at most %d)", guestapi.MaxProcessReaders)

func (g *registry) handleOutput(r *http.Request, req *guestapi.ProcOutputRequest, a *rpc.Answer) error {
	bp, err := g.find(req.Ref)
	if err != nil {
		return err
	}
	from, err := guestapi.ParseFrom(req.From)
	if err != nil {
		return err
	}
	if !g.readers.TryAcquire() {
		return errLimitReaders
	}
	defer g.readers.Release()
	if err := a.Head(guestapi.Empty{}); err != nil {
		return nil
	}
	_ = bp.streamOut(r.Context(), from, req.Follow, a.F)
	return nil
}

// handleAttach upgrades the connection to carry frames both ways: output
// to the host, input and control messages from it. Detaching (the host
// closing the connection) leaves the process running.
func (g *registry) handleAttach(w http.ResponseWriter, r *http.Request) {
	if !rpc.Upgradable(r, guestapi.AttachProtocol) {
		rpc.WriteError(w, errs.Invalid("attach needs Connection: Upgrade and Upgrade: %s", guestapi.AttachProtocol))
		return
	}
	var req guestapi.ProcOutputRequest
	if err := guestapi.ReadHead(r.Body, guestapi.MaxHead, &req); err != nil {
		rpc.WriteError(w, err)
		return
	}
	bp, err := g.find(req.Ref)
	if err != nil {
		rpc.WriteError(w, err)
		return
	}
	from, err := guestapi.ParseFrom(req.From)
	if err != nil {
		rpc.WriteError(w, err)
		return
	}
	if !g.readers.TryAcquire() {
		rpc.WriteError(w, errLimitReaders)
		return
	}
	defer g.readers.Release()
	conn, brw, err := rpc.Upgrade(w, guestapi.AttachProtocol)
	if err != nil {
		rpc.WriteError(w, err)
		return
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Input: ends when the host detaches, which ends the output too.
		defer cancel()
		fr := guestapi.NewFrameReader(brw.Reader)
		for {
			typ, p, err := fr.Next()
			if err != nil {
				return
			}
			switch typ {
			case guestapi.FrameStdin:
				// Input to a process that closed it is dropped, as a
				// terminal drops keys typed after its program ended.
				_, _ = bp.writeStdin(ctx.Done(), bytes.NewReader(p))
			case guestapi.FrameControl:
				c, err := guestapi.ParseControl(p)
				if err != nil {
					continue
				}
				bp.control(c)
			default:
				return
			}
		}
	}()
	_ = bp.streamOut(ctx, from, true, guestapi.NewFrameWriter(conn, 64<<10, nil))
}

// control applies one attach control message; errors are the caller's to
// ignore (a resize of a terminal that just closed is not worth a reply).
func (bp *bgProc) control(c guestapi.Control) {
	switch c.Type {
	case guestapi.ControlResize:
		_ = bp.resize(guestapi.PTYSize{Rows: c.Rows, Cols: c.Cols})
	case guestapi.ControlEOF:
		_ = bp.closeStdin()
	case guestapi.ControlSignal:
		if n, err := guestapi.ParseSignal(c.Signal); err == nil {
			_, _ = bp.signal(syscall.Signal(n), c.Tree)
		}
	}
}
