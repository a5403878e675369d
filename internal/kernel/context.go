package kernel

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// kctx is one context: a language, a directory, an environment, and the
// engine that keeps its state (nil until started or after a death).
type kctx struct {
	id, lang, cwd string
	env           map[string]string
	created       time.Time
	isDefault     bool
	sup           *Supervisor

	// turn holds one token: the cell (or restart) holding it runs; the
	// others wait in arrival order (Go serves a channel's waiting
	// receivers first come, first served).
	turn    chan struct{}
	waiting atomic.Int32

	mu       sync.Mutex
	eng      engine
	state    string
	count    int
	restarts int
	lost     string // why the last kernel ended, until a new one is reported
	closed   bool
	// killedFor says why the supervisor itself killed the engine (restart,
	// delete), for the cell that was running.
	killedFor string
}

func (c *kctx) info() codewire.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state
	if c.eng != nil {
		select {
		case <-c.eng.done():
			st = codewire.StateDead
		default:
		}
	}
	return codewire.Context{
		ID: c.id, Language: c.lang, Cwd: c.cwd, State: st, Default: c.isDefault,
		ExecutionCount: c.count, Restarts: c.restarts,
		CreatedAt: c.created.Format(time.RFC3339), Queued: int(c.waiting.Load()),
	}
}

// acquire waits for the context's turn, refusing when the queue is full.
func (c *kctx) acquire(ctx context.Context) error {
	if n := c.waiting.Add(1); int(n) > c.sup.lim.MaxQueue+1 {
		c.waiting.Add(-1)
		return errs.New(errs.CodeLimit, "context %s already has %d cells waiting", c.id, c.sup.lim.MaxQueue)
	}
	select {
	case <-c.turn:
		c.waiting.Add(-1)
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			c.turn <- struct{}{}
			return errs.NotFound("code context %s was deleted", c.id)
		}
		return nil
	case <-ctx.Done():
		c.waiting.Add(-1)
		return ctx.Err()
	}
}

func (c *kctx) release() { c.turn <- struct{}{} }

// ensure starts the engine if there is none (or it died), with the turn
// held by the caller or not needed (Create, Warm: before anyone else can
// see the context... or racing a cell, which then waits on start).
func (c *kctx) ensure(ctx context.Context) error {
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	_, _, err := c.ensureLocked(ctx)
	return err
}

// ensureLocked starts the engine if needed; the turn is held. It reports
// whether a kernel was replaced and why.
func (c *kctx) ensureLocked(ctx context.Context) (eng engine, lost string, err error) {
	c.mu.Lock()
	eng = c.eng
	if eng != nil {
		select {
		case <-eng.done():
			c.lost = "the kernel ended between cells: " + eng.reason()
			c.eng, eng = nil, nil
			c.restarts++
		default:
		}
	}
	if eng != nil {
		c.mu.Unlock()
		return eng, "", nil
	}
	lost = c.lost
	c.state = codewire.StateStarting
	c.mu.Unlock()

	eng, err = c.sup.start(ctx, c.lang, c.cwd, c.env)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.state = codewire.StateDead
		return nil, "", err
	}
	if c.closed {
		go eng.kill()
		return nil, "", errs.NotFound("code context %s was deleted", c.id)
	}
	c.eng, c.state, c.count, c.lost = eng, codewire.StateIdle, 0, ""
	return eng, lost, nil
}

// run executes one cell: the whole stream, start to end.
func (c *kctx) run(ctx context.Context, req codewire.ExecuteRequest, timeout time.Duration, emit func(codewire.Event) error) error {
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	eng, lost, err := c.ensureLocked(ctx)
	if err != nil {
		return err
	}
	began := time.Now()
	start := &codewire.Start{Context: c.id, Language: c.lang}
	if lost != "" {
		start.Restarted, start.StateLost, start.Reason = true, true, lost
	}
	emitting := true
	send := func(ev codewire.Event) {
		if emitting && emit(ev) != nil {
			emitting = false
		}
	}
	send(codewire.Event{Type: codewire.EventStart, Start: start})

	c.mu.Lock()
	c.state = codewire.StateBusy
	c.mu.Unlock()

	out := newCellOut(c.sup.lim)
	cl := &cell{code: req.Code, lang: c.lang, env: req.Env, out: out}
	res := make(chan cellEnd, 1)
	go func() { res <- eng.execute(cl) }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var grace <-chan time.Time
	status, message := "", ""
	interrupt := func(why, msg string) {
		if status != "" {
			return
		}
		status, message = why, msg
		_ = eng.interrupt()
		grace = time.After(c.sup.cfg.InterruptGrace)
	}
	flush := func() {
		for _, ev := range out.take() {
			send(ev)
		}
	}
	ctxDone := ctx.Done()
	var end cellEnd
	killed := false
wait:
	for {
		select {
		case <-out.notify:
			flush()
			if !emitting {
				interrupt(codewire.StatusCancelled, "the caller went away; the cell was interrupted")
			}
		case end = <-res:
			break wait
		case <-timer.C:
			interrupt(codewire.StatusTimeout, fmt.Sprintf("the cell ran past its timeout of %v and was interrupted; the context keeps its state", timeout))
		case <-ctxDone:
			ctxDone = nil
			interrupt(codewire.StatusCancelled, "the caller went away; the cell was interrupted")
		case <-grace:
			grace = nil
			killed = true
			eng.kill()
		}
	}
	flush()

	e := &codewire.End{Status: end.status, ExecutionCount: end.count, ExitCode: end.exitCode,
		Truncated: out.isTruncated(), DurationMS: float64(time.Since(began).Microseconds()) / 1000}
	c.mu.Lock()
	if end.count > 0 {
		c.count = end.count
	} else if !end.died {
		c.count++
	}
	if e.ExecutionCount == 0 && !end.died {
		e.ExecutionCount = c.count
	}
	switch {
	case end.died || killed:
		reason := eng.reason()
		if c.killedFor != "" {
			reason = c.killedFor
		}
		if killed {
			reason = fmt.Sprintf("it did not stop within %v of the interrupt and was killed", c.sup.cfg.InterruptGrace)
		}
		e.Status, e.StateLost = codewire.StatusDied, true
		e.Message = "the kernel ended during the cell (" + reason + "); its state is lost and the next cell starts a new one"
		if status != "" {
			e.Message = message + "; then " + e.Message
		}
		c.lost = "the kernel ended during an earlier cell: " + reason
		c.eng = nil
		c.restarts++
		c.state = codewire.StateDead
		go eng.kill()
	default:
		if status != "" {
			e.Status, e.Message = status, message
		}
		c.state = codewire.StateIdle
	}
	c.mu.Unlock()
	if e.Status == codewire.StatusDied && !killed {
		send(codewire.Event{Type: codewire.EventError, Error: &codewire.ExecError{
			Name: "KernelDied", Value: e.Message, Traceback: ""}})
	}
	send(codewire.Event{Type: codewire.EventEnd, End: e})
	if !emitting {
		return errs.New(errs.CodeUnavailable, "the caller went away")
	}
	return nil
}

// restart replaces the engine by a new one: the state is lost, as asked.
// A running cell is ended at once (it reports that the context was
// restarted); waiting cells run in the new kernel.
func (c *kctx) restart(ctx context.Context) error {
	c.mu.Lock()
	eng := c.eng
	if eng != nil {
		c.killedFor = "the context was restarted"
	}
	c.mu.Unlock()
	if eng != nil {
		eng.kill()
	}
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	c.mu.Lock()
	// Unless a running cell already recorded the kill, the engine is
	// still here.
	old := c.eng
	c.eng = nil
	if old != nil {
		c.restarts++
	}
	c.lost, c.killedFor = "", ""
	c.mu.Unlock()
	if old != nil {
		old.kill()
	}
	_, _, err := c.ensureLocked(ctx)
	return err
}

// close kills the engine; waiting cells are refused.
func (c *kctx) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	eng := c.eng
	c.killedFor = "the context was deleted"
	c.eng = nil
	c.state = codewire.StateDead
	c.mu.Unlock()
	if eng != nil {
		eng.kill()
	}
}
