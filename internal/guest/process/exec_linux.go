//go:build linux

package process

import (
	"io"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// capped forwards up to max bytes of one stream (0: all) and counts the rest.
type capped struct {
	typ       byte
	out       *guestapi.FrameWriter
	max       int64
	total     int64
	truncated bool
}

func (c *capped) pump(r io.Reader, done *sync.WaitGroup) {
	defer done.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if c.max > 0 {
				room := c.max - c.total
				if room < int64(n) {
					c.truncated = true
					if room < 0 {
						room = 0
					}
					chunk = chunk[:room]
				}
			}
			c.total += int64(n)
			if len(chunk) > 0 {
				// A dead client must not stop the drain: keep reading so the
				// command never blocks on a full pipe.
				_ = c.out.Send(c.typ, chunk)
			}
		}
		if err != nil {
			return
		}
	}
}

// maxExecHead bounds an exec request (its stdin may come inline, up to
// the manager's 8 MiB, base64 in JSON).
const maxExecHead = 32 << 20

func (s *Service) exec(r *http.Request, req *guestapi.ExecRequest, ans *rpc.Answer) error {
	if !s.execSlots.TryAcquire() {
		return errs.New(errs.CodeLimit, "too many concurrent commands in this sandbox")
	}
	defer s.execSlots.Release()
	id, err := user.Lookup(req.User)
	if err != nil {
		return err
	}
	if len(req.Argv) == 0 {
		return errs.Invalid("empty command")
	}
	cwd, err := resolveCwd(req.Cwd)
	if err != nil {
		return err
	}
	env, pathVar := s.Env(id, cwd, req.Env, false)
	bin, err := lookPath(req.Argv[0], pathVar, cwd)
	if err != nil {
		return err
	}

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "pipe")
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return errs.Wrap(errs.CodeInternal, err, "pipe")
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		outR.Close()
		outW.Close()
		return errs.Wrap(errs.CodeInternal, err, "pipe")
	}
	oomBefore := s.OOMKills()
	start := time.Now()
	p, err := s.Spawn(Spec{
		Path: bin, Argv: req.Argv, Env: env, Dir: cwd,
		Files: []*os.File{stdinR, outW, errW},
		UID:   id.UID, GID: id.GID,
	})
	stdinR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		stdinW.Close()
		outR.Close()
		errR.Close()
		s.Logf("exec %q: %v", req.Argv[0], err)
		return StartErr(req.Argv[0], err)
	}
	defer s.table.recycle(p)

	if req.StdinStream {
		_ = http.NewResponseController(ans.ResponseWriter()).EnableFullDuplex()
	}
	_ = ans.Head(guestapi.ExecStarted{Pid: p.Pid})
	fw := ans.F

	// Standard input: the rest of the request's body, or the head's.
	go func() {
		defer stdinW.Close()
		if req.StdinStream {
			_, _ = io.Copy(stdinW, r.Body)
		} else if len(req.Stdin) > 0 {
			_, _ = stdinW.Write(req.Stdin)
		}
	}()

	so := &capped{typ: guestapi.FrameStdout, out: fw, max: req.MaxOutput}
	se := &capped{typ: guestapi.FrameStderr, out: fw, max: req.MaxOutput}
	var pumps sync.WaitGroup
	pumps.Add(2)
	go so.pump(outR, &pumps)
	go se.pump(errR, &pumps)

	var timeout <-chan time.Time
	if req.TimeoutMs > 0 {
		t := time.NewTimer(time.Duration(req.TimeoutMs) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	var ws syscall.WaitStatus
	timedOut := false
	select {
	case ws = <-p.exit:
	case <-timeout:
		timedOut = true
		// The main process first (its pidfd is open until Cleanup): killed
		// after a child it waits for, a shell could see that child die and
		// exit 137 on its own, and the caller would read an exit code where
		// the exec was killed (seen under load).
		_ = p.SignalExact(syscall.SIGKILL)
		p.KillTree()
		ws = <-p.exit
	case <-r.Context().Done():
		// The caller went away: an exec does not outlive its request (use
		// a background process for that).
		p.KillTree()
		ws = <-p.exit
	}
	if timedOut {
		// The tree is dead; pipes close at once.
		pumps.Wait()
	} else if !waitTimeout(&pumps, guestapi.DefaultWaitDelay) {
		// Background children still hold the pipes: detach them.
		outR.Close()
		errR.Close()
		pumps.Wait()
	}
	outR.Close()
	errR.Close()

	res := guestapi.ExecResult{
		ExitCode:        exitCode(ws),
		Signal:          ExitSignal(ws),
		TimedOut:        timedOut,
		DurationMs:      float64(time.Since(start).Microseconds()) / 1000,
		StdoutBytes:     so.total,
		StderrBytes:     se.total,
		StdoutTruncated: so.truncated,
		StderrTruncated: se.truncated,
		Pid:             p.Pid,
	}
	if ws.Signaled() && ws.Signal() == syscall.SIGKILL && !timedOut && oomBefore >= 0 && s.OOMKills() > oomBefore {
		res.OOMKilled = true
	}
	_ = ans.End(res)
	return nil
}
