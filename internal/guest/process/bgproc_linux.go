//go:build linux

package process

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// pump copies one output source into its ring; it never blocks on readers,
// so a slow or absent client cannot stall the process.
func (bp *bgProc) pump(s *outStream, src *os.File, done *sync.WaitGroup) {
	defer done.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			bp.mu.Lock()
			s.ring.write(buf[:n])
			bp.notifyLocked()
			bp.mu.Unlock()
		}
		if err != nil {
			// EOF; EIO from a terminal whose last user closed it; or the
			// source closed on eviction.
			return
		}
	}
}

// supervise records the exit, then waits for the output to drain.
func (bp *bgProc) supervise(pumps *sync.WaitGroup) {
	ws := <-bp.p.exit
	bp.mu.Lock()
	bp.exited = true
	bp.ws = ws
	bp.ended = time.Now()
	bp.oom = ws.Signaled() && ws.Signal() == syscall.SIGKILL && !bp.killed && bp.oomBefore >= 0 && bp.oomKills() > bp.oomBefore
	bp.p.closePidFD() // under mu: no SignalExact can run
	if bp.timer != nil {
		bp.timer.Stop()
	}
	bp.notifyLocked()
	bp.mu.Unlock()
	// Children that outlive the process may hold its output open: followers
	// get what arrived within the grace period, later output stays readable.
	waitTimeout(pumps, guestapi.DefaultWaitDelay)
	bp.mu.Lock()
	bp.drained = true
	close(bp.final)
	bp.notifyLocked()
	bp.mu.Unlock()
	pumps.Wait()
	bp.release()
}

// release closes bp's descriptors and removes its cgroup sub-group if it is
// empty. Idempotent.
func (bp *bgProc) release() {
	bp.mu.Lock()
	if bp.released || bp.starting {
		bp.mu.Unlock()
		return
	}
	bp.released = true
	in, srcs := bp.stdin, bp.sources
	bp.stdin = nil
	bp.mu.Unlock()
	if in != nil && in != bp.master {
		in.Close()
	}
	for _, f := range srcs {
		f.Close()
	}
	if bp.p != nil {
		bp.p.Cleanup()
	}
}

// notifyLocked wakes readers waiting for output or state changes.
func (bp *bgProc) notifyLocked() {
	if bp.watched {
		close(bp.changed)
		bp.changed = make(chan struct{})
		bp.watched = false
	}
}

// waitChLocked returns a channel closed at the next change.
func (bp *bgProc) waitChLocked() <-chan struct{} {
	bp.watched = true
	return bp.changed
}

func (bp *bgProc) info() guestapi.ProcessInfo {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	in := guestapi.ProcessInfo{ID: bp.id, Tag: bp.tag, Argv: bp.argv, Env: bp.env, Cwd: bp.cwd, User: bp.user,
		Stdin: bp.stdin != nil, State: guestapi.ProcRunning, StartedAt: bp.started, Streams: map[string]guestapi.StreamInfo{}}
	if bp.p != nil {
		in.Pid = bp.p.Pid
	}
	if bp.size != nil {
		sz := *bp.size
		in.PTY = &sz
	}
	for _, s := range bp.streams {
		in.Streams[s.name] = guestapi.StreamInfo{Written: s.ring.end, Dropped: s.ring.start, Buffer: int64(s.ring.max)}
	}
	if bp.exited {
		in.State = guestapi.ProcExited
		in.Stdin = false
		code := exitCode(bp.ws)
		in.ExitCode = &code
		in.Signal = ExitSignal(bp.ws)
		ended := bp.ended
		in.EndedAt = &ended
		in.OOMKilled = bp.oom
	}
	if !bp.deadline.IsZero() && (!bp.exited || bp.timedOut) {
		d := bp.deadline
		in.Deadline = &d
	}
	in.TimedOut = bp.timedOut
	return in
}

// validTimeout checks a deadline's duration (0: none).
func validTimeout(ms int64) error {
	if ms < 0 || ms > guestapi.MaxProcessTimeout.Milliseconds() {
		return errs.Invalid("timeout_ms must be 0..%d", guestapi.MaxProcessTimeout.Milliseconds())
	}
	return nil
}

// setDeadline (re)arms the process's deadline d from now (0: none). When
// it passes, the guest kills the process's whole tree: the deadline is the
// sandbox's, not a client's, so it holds whoever is connected — or
// whether any server runs at all.
func (bp *bgProc) setDeadline(d time.Duration) error {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.exited {
		return errs.New(errs.CodeConflict, "process %s has exited", bp.id)
	}
	if bp.timer != nil {
		bp.timer.Stop()
		bp.timer = nil
	}
	bp.deadline = time.Time{}
	if d > 0 {
		bp.deadline = time.Now().Add(d)
		bp.timer = time.AfterFunc(d, bp.expire)
	}
	return nil
}

// expire kills the process if its deadline (not an earlier one that was
// replaced meanwhile) has passed.
func (bp *bgProc) expire() {
	bp.mu.Lock()
	if bp.exited || bp.deadline.IsZero() || time.Now().Before(bp.deadline) {
		bp.mu.Unlock()
		return
	}
	bp.timedOut, bp.killed = true, true
	bp.mu.Unlock()
	bp.p.KillTree()
}

// signal sends sig to the process, or to every process of its tree (its
// cgroup sub-group, wherever they moved; also after the main process
// exited, to reach what it left behind).
func (bp *bgProc) signal(sig syscall.Signal, tree bool) (int, error) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if !tree {
		if bp.exited {
			return 0, errs.New(errs.CodeConflict, "process %s has exited", bp.id)
		}
		if err := bp.p.SignalExact(sig); err != nil {
			return 0, errs.Wrap(errs.CodeInternal, err, "cannot signal process %s", bp.id)
		}
		return 1, nil
	}
	if bp.p.sub != nil {
		pids, err := bp.p.sub.Procs()
		if err == nil {
			n := 0
			for _, pid := range pids {
				if unix.Kill(pid, sig) == nil {
					n++
				}
			}
			if n == 0 && bp.exited {
				return 0, errs.New(errs.CodeConflict, "process %s has exited and left nothing running", bp.id)
			}
			return n, nil
		}
	}
	if bp.exited {
		// Without a sub-group the exited process's group may be a
		// recycled number: never signal it.
		return 0, errs.New(errs.CodeConflict, "process %s has exited", bp.id)
	}
	if err := unix.Kill(-bp.p.Pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		return 0, errs.Wrap(errs.CodeInternal, err, "cannot signal process group %d", bp.p.Pid)
	}
	return 1, nil
}

// kill kills the whole tree and waits (bounded) for the exit and the end
// of its output.
func (bp *bgProc) kill() {
	bp.mu.Lock()
	exited := bp.exited
	if !exited {
		bp.killed = true
	}
	bp.mu.Unlock()
	if !exited {
		bp.p.KillTree()
	} else if bp.p.sub != nil {
		// What the exited process left behind.
		_, _ = bp.p.sub.Kill()
	}
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-bp.final:
	case <-t.C:
	}
}

// writeStdin copies r to the process's input until r ends or stop fires.
func (bp *bgProc) writeStdin(stop <-chan struct{}, r io.Reader) (int64, error) {
	bp.inMu.Lock()
	defer bp.inMu.Unlock()
	bp.mu.Lock()
	f := bp.stdin
	bp.mu.Unlock()
	if f == nil {
		if !bp.hasStdin {
			return 0, errs.New(errs.CodeConflict, "process %s was started without stdin (start it with \"stdin\": true)", bp.id)
		}
		return 0, errs.New(errs.CodeConflict, "the input of process %s is closed", bp.id)
	}
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-stop:
			// Unblocks a write into a pipe nobody reads.
			_ = f.SetWriteDeadline(time.Unix(1, 0))
		case <-done:
		}
	}()
	src := &readErr{r: r}
	n, err := io.Copy(f, src)
	// The watcher must be gone before the deadline is cleared, or a late
	// stop would leave it set for the next writer.
	close(done)
	<-watched
	_ = f.SetWriteDeadline(time.Time{})
	switch {
	case err == nil:
		return n, nil
	case src.err != nil:
		return n, errs.Wrap(errs.CodeInvalid, err, "reading the input failed after %d bytes", n)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, errs.Wrap(errs.CodeTimeout, err, "the process did not read its input")
	case errors.Is(err, syscall.EPIPE), errors.Is(err, os.ErrClosed), errors.Is(err, syscall.EIO):
		return n, errs.Wrap(errs.CodeConflict, err, "the input of process %s is closed", bp.id)
	}
	return n, errs.Wrap(errs.CodeInternal, err, "write to process %s", bp.id)
}

// readErr remembers an error of the source, to tell it from write errors.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// closeStdin closes the input pipe; a terminal gets its EOF character
// (^D), which ends input for a program reading in canonical mode.
func (bp *bgProc) closeStdin() error {
	if bp.master != nil {
		bp.inMu.Lock()
		defer bp.inMu.Unlock()
		bp.mu.Lock()
		open := bp.stdin != nil
		bp.mu.Unlock()
		if !open {
			return errs.New(errs.CodeConflict, "the terminal of process %s is closed", bp.id)
		}
		if _, err := bp.master.Write([]byte{4}); err != nil {
			return errs.Wrap(errs.CodeConflict, err, "the terminal of process %s is closed", bp.id)
		}
		return nil
	}
	// Not under inMu: closing unblocks a writer stuck on a full pipe.
	bp.mu.Lock()
	f := bp.stdin
	bp.stdin = nil
	bp.mu.Unlock()
	if f == nil && !bp.hasStdin {
		return errs.New(errs.CodeConflict, "process %s was started without stdin", bp.id)
	}
	if f != nil {
		f.Close()
	}
	return nil
}

func (bp *bgProc) resize(sz guestapi.PTYSize) error {
	if err := sz.Valid(); err != nil {
		return err
	}
	if bp.master == nil {
		return errs.Invalid("process %s has no terminal", bp.id)
	}
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.released {
		return errs.New(errs.CodeConflict, "the terminal of process %s is closed", bp.id)
	}
	if err := setWinsize(bp.master, sz); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "resize the terminal")
	}
	bp.size = &sz
	return nil
}

// wait blocks until the process has exited and its output is drained (so
// that a read afterwards sees all of it), d passes or stop fires.
func (bp *bgProc) wait(stop <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-bp.final:
	case <-t.C:
	case <-stop:
	}
}
