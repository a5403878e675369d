//go:build linux

package guest

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// procRegistry keeps the sandbox's background processes: running ones, and
// exited ones for a while (bounded in count, age and buffer memory) so that
// their output and exit status can still be read. A process belongs to the
// sandbox, not to the request that started it: clients come and go.
type procRegistry struct {
	a        *Agent
	readers  semaphore // output streams and attachments at once
	mu       sync.Mutex
	seq      int64
	all      []*bgProc // in start order
	reserved int64     // buffer capacity of every kept process
}

// bgProc is one background process. Lock order: procRegistry.mu before
// bgProc.mu; inMu before mu.
type bgProc struct {
	id, tag   string
	argv      []string
	env       map[string]string
	cwd, user string
	started   time.Time
	reserve   int64 // buffer capacity counted in procRegistry.reserved
	hasStdin  bool
	p         *proc
	master    *os.File // terminal master (input and output), nil without PTY
	oomBefore int64
	oomKills  func() int64

	inMu sync.Mutex // one input writer at a time

	mu       sync.Mutex
	starting bool // registered, not yet spawned
	streams  []*outStream
	changed  chan struct{}
	watched  bool // someone waits on changed
	size     *guestapi.PTYSize
	stdin    *os.File // nil once closed (the master for a terminal)
	sources  []*os.File
	exited   bool
	ws       syscall.WaitStatus
	ended    time.Time
	killed   bool // by the API: a SIGKILL that is not an OOM kill
	oom      bool
	drained  bool // exited, and its output is complete (or given up on)
	released bool
	final    chan struct{} // closed once exited and drained
}

type outStream struct {
	name  string
	frame byte
	ring  *ring
}

func (a *Agent) processRoutes(m *routes) {
	g := &procRegistry{a: a, readers: make(semaphore, guestapi.MaxProcessReaders)}
	m.handle(guestapi.RouteProcStart, unary(maxStartHead, g.handleStart))
	m.handle(guestapi.RouteProcList, unary(guestapi.MaxHead, g.handleList))
	m.handle(guestapi.RouteProcGet, unary(guestapi.MaxHead, g.handleGet))
	m.handle(guestapi.RouteProcKill, unary(guestapi.MaxHead, g.handleKill))
	m.handle(guestapi.RouteProcOutput, streamed(guestapi.MaxHead, g.handleOutput))
	m.handle(guestapi.RouteProcAttach, g.handleAttach)
	m.handle(guestapi.RouteProcStdin, unary(guestapi.MaxHead, g.handleStdin))
	m.handle(guestapi.RouteProcCloseStdin, unary(guestapi.MaxHead, g.handleCloseStdin))
	m.handle(guestapi.RouteProcSignal, unary(guestapi.MaxHead, g.handleSignal))
	m.handle(guestapi.RouteProcResize, unary(guestapi.MaxHead, g.handleResize))
	m.handle(guestapi.RouteProcWait, unary(guestapi.MaxHead, g.handleWait))
}

// start validates req, then spawns the process with its pipes or terminal.
func (g *procRegistry) start(req guestapi.ProcessStartRequest) (*bgProc, error) {
	user := orDefault(req.User, guestapi.UserRoot)
	id, ok := identities[user]
	if !ok {
		return nil, errs.Invalid("unknown user %q (use %q or %q)", req.User, guestapi.UserRoot, guestapi.UserUser)
	}
	if req.Tag != "" {
		if err := guestapi.ValidTag(req.Tag); err != nil {
			return nil, err
		}
	}
	if req.PTY != nil {
		if err := req.PTY.Valid(); err != nil {
			return nil, err
		}
	}
	bufSize := req.BufferBytes
	if bufSize == 0 {
		bufSize = guestapi.DefaultProcessBuffer
	}
	if bufSize < guestapi.MinProcessBuffer || bufSize > guestapi.MaxProcessBuffer {
		return nil, errs.Invalid("buffer_bytes must be %d..%d", guestapi.MinProcessBuffer, guestapi.MaxProcessBuffer)
	}
	argv := req.Argv
	if len(argv) == 0 {
		if req.PTY == nil {
			return nil, errs.Invalid("empty command")
		}
		argv = []string{loginShell(id.Name, g.a.shell), "-l"}
	}
	cwd, err := resolveCwd(req.Cwd)
	if err != nil {
		return nil, err
	}
	env, pathVar := g.a.buildEnv(id, cwd, req.Env, req.PTY != nil)
	bin, err := lookPath(argv[0], pathVar, cwd)
	if err != nil {
		return nil, err
	}

	bp := &bgProc{tag: req.Tag, argv: argv, env: req.Env, cwd: cwd, user: user, hasStdin: req.Stdin || req.PTY != nil,
		starting: true, changed: make(chan struct{}), final: make(chan struct{}), oomKills: g.a.oomKills}
	if req.PTY != nil {
		sz := *req.PTY
		bp.size = &sz
		bp.streams = []*outStream{{name: guestapi.StreamPTY, frame: guestapi.FramePTY, ring: newRing(int(bufSize))}}
	} else {
		bp.streams = []*outStream{
			{name: guestapi.StreamStdout, frame: guestapi.FrameStdout, ring: newRing(int(bufSize))},
			{name: guestapi.StreamStderr, frame: guestapi.FrameStderr, ring: newRing(int(bufSize))},
		}
	}
	bp.reserve = bufSize * int64(len(bp.streams))
	if err := g.register(bp); err != nil {
		return nil, err
	}
	if err := g.spawn(bp, bin, env, id); err != nil {
		g.unregister(bp)
		return nil, err
	}
	return bp, nil
}

// register claims a slot, the tag and buffer budget for bp before it runs,
// so concurrent starts cannot both pass the checks.
func (g *procRegistry) register(bp *bgProc) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.evictLocked(time.Now(), bp.reserve)
	live := 0
	for _, o := range g.all {
		o.mu.Lock()
		running := !o.exited
		o.mu.Unlock()
		if !running {
			continue
		}
		live++
		if bp.tag != "" && o.tag == bp.tag {
			return errs.New(errs.CodeConflict, "a running process already has tag %q", bp.tag)
		}
	}
	if live >= guestapi.MaxLiveProcesses {
		return errs.New(errs.CodeLimit, "this sandbox already runs %d background processes (the limit)", guestapi.MaxLiveProcesses)
	}
	if g.reserved+bp.reserve > guestapi.ProcessBufferBudget {
		return errs.New(errs.CodeLimit, "the output buffers of this sandbox's processes are at their %d MiB budget; use smaller buffer_bytes or kill processes", guestapi.ProcessBufferBudget>>20)
	}
	g.reserved += bp.reserve
	g.seq++
	bp.id = "p" + strconv.FormatInt(g.seq, 10)
	g.all = append(g.all, bp)
	return nil
}

func (g *procRegistry) unregister(bp *bgProc) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, o := range g.all {
		if o == bp {
			g.all = append(g.all[:i], g.all[i+1:]...)
			g.reserved -= bp.reserve
			return
		}
	}
}

// evictLocked forgets exited processes that are too old, beyond the kept
// count, or in the way of need more bytes of buffer budget; oldest first.
func (g *procRegistry) evictLocked(now time.Time, need int64) {
	var exited []*bgProc
	for _, o := range g.all {
		o.mu.Lock()
		if o.exited {
			exited = append(exited, o)
		}
		o.mu.Unlock()
	}
	drop := map[*bgProc]bool{}
	reserved := g.reserved
	for i, o := range exited {
		o.mu.Lock()
		old := now.Sub(o.ended) > guestapi.KeepExitedFor
		o.mu.Unlock()
		if old || len(exited)-i > guestapi.MaxKeptExited || reserved+need > guestapi.ProcessBufferBudget {
			drop[o] = true
			reserved -= o.reserve
		}
	}
	if len(drop) == 0 {
		return
	}
	kept := g.all[:0]
	for _, o := range g.all {
		if drop[o] {
			go o.release() // closes what lingering children still hold
			continue
		}
		kept = append(kept, o)
	}
	for i := len(kept); i < len(g.all); i++ {
		g.all[i] = nil
	}
	g.all = kept
	g.reserved = reserved
}

// spawn starts bp's process and the goroutines that collect its output and
// exit status.
func (g *procRegistry) spawn(bp *bgProc, bin string, env []string, id identity) error {
	var files, sources []*os.File
	var stdin *os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	if bp.size != nil {
		master, slave, err := openPTY(id.Uid, id.Gid, *bp.size)
		if err != nil {
			return errs.Wrap(errs.CodeInternal, err, "cannot open a terminal")
		}
		files = []*os.File{slave, slave, slave}
		sources = []*os.File{master}
		stdin = master
		bp.master = master
	} else {
		var in *os.File
		if bp.hasStdin {
			r, w, err := os.Pipe()
			if err != nil {
				return errs.Wrap(errs.CodeInternal, err, "pipe")
			}
			in, stdin = r, w
		} else {
			f, err := os.Open(os.DevNull)
			if err != nil {
				return errs.Wrap(errs.CodeInternal, err, "open /dev/null")
			}
			in = f
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			closeAll([]*os.File{in, stdin})
			return errs.Wrap(errs.CodeInternal, err, "pipe")
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			closeAll([]*os.File{in, stdin, outR, outW})
			return errs.Wrap(errs.CodeInternal, err, "pipe")
		}
		files = []*os.File{in, outW, errW}
		sources = []*os.File{outR, errR}
	}
	bp.oomBefore = bp.oomKills()
	p, err := g.a.procs.spawn(spawnSpec{
		Path: bin, Argv: bp.argv, Env: env, Dir: bp.cwd, Files: files,
		Uid: id.Uid, Gid: id.Gid,
		Setctty: bp.size != nil, Ctty: 0,
		PidFD: true,
	})
	// The child has its copies; ours would keep the pipes (or the
	// terminal) open after it exits and hide its end of output.
	closeAll(uniq(files))
	if err != nil {
		closeAll(sources)
		if stdin != nil && stdin != bp.master {
			stdin.Close()
		}
		g.a.logf("process %q: %v", bp.argv[0], err)
		return startErr(bp.argv[0], err)
	}
	bp.mu.Lock()
	bp.p = p
	bp.started = time.Now()
	bp.stdin = stdin
	bp.sources = sources
	bp.starting = false
	bp.mu.Unlock()

	var pumps sync.WaitGroup
	pumps.Add(len(sources))
	for i, src := range sources {
		go bp.pump(bp.streams[i], src, &pumps)
	}
	go bp.supervise(&pumps)
	return nil
}

func uniq(fs []*os.File) []*os.File {
	var out []*os.File
	for _, f := range fs {
		dup := false
		for _, o := range out {
			dup = dup || o == f
		}
		if !dup {
			out = append(out, f)
		}
	}
	return out
}

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
		in.Signal = signalName(bp.ws)
		ended := bp.ended
		in.EndedAt = &ended
		in.OOMKilled = bp.oom
	}
	return in
}

// find resolves a reference; for a pid or tag a running process wins over
// exited ones, and the newest over older ones.
func (g *procRegistry) find(s string) (*bgProc, error) {
	ref, err := guestapi.ParseRef(s)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var exited *bgProc
	for i := len(g.all) - 1; i >= 0; i-- {
		o := g.all[i]
		o.mu.Lock()
		starting, isExited := o.starting, o.exited
		pid := 0
		if o.p != nil {
			pid = o.p.Pid
		}
		o.mu.Unlock()
		if starting {
			continue
		}
		var match bool
		switch ref.Kind {
		case guestapi.RefID:
			match = o.id == ref.ID
		case guestapi.RefPid:
			match = pid == ref.Pid
		case guestapi.RefTag:
			match = o.tag == ref.Tag
		}
		if !match {
			continue
		}
		if !isExited || ref.Kind == guestapi.RefID {
			return o, nil
		}
		if exited == nil {
			exited = o
		}
	}
	if exited != nil {
		return exited, nil
	}
	return nil, errs.NotFound("no process %s in this sandbox", ref)
}

func (g *procRegistry) list() []guestapi.ProcessInfo {
	g.mu.Lock()
	g.evictLocked(time.Now(), 0)
	procs := make([]*bgProc, 0, len(g.all))
	for _, o := range g.all {
		o.mu.Lock()
		if !o.starting {
			procs = append(procs, o)
		}
		o.mu.Unlock()
	}
	g.mu.Unlock()
	out := make([]guestapi.ProcessInfo, 0, len(procs))
	for _, o := range procs {
		out = append(out, o.info())
	}
	return out
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

// Handlers.

// maxStartHead bounds a start request (argv and environment).
const maxStartHead = 4 << 20

func (g *procRegistry) handleStart(_ *http.Request, req *guestapi.ProcessStartRequest) (guestapi.ProcessInfo, error) {
	bp, err := g.start(*req)
	if err != nil {
		return guestapi.ProcessInfo{}, err
	}
	return bp.info(), nil
}

func (g *procRegistry) handleList(*http.Request, *guestapi.Empty) (guestapi.ProcList, error) {
	return guestapi.ProcList{Processes: g.list()}, nil
}

func (g *procRegistry) handleGet(_ *http.Request, req *guestapi.ProcRequest) (guestapi.ProcessInfo, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.ProcessInfo{}, err
	}
	return bp.info(), nil
}

func (g *procRegistry) handleKill(_ *http.Request, req *guestapi.ProcRequest) (guestapi.ProcessInfo, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.ProcessInfo{}, err
	}
	bp.kill()
	return bp.info(), nil
}

func (g *procRegistry) handleStdin(r *http.Request, req *guestapi.ProcRequest) (guestapi.StdinResult, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.StdinResult{}, err
	}
	n, err := bp.writeStdin(r.Context().Done(), r.Body)
	return guestapi.StdinResult{Bytes: n}, err
}

func (g *procRegistry) handleCloseStdin(_ *http.Request, req *guestapi.ProcRequest) (guestapi.Empty, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.Empty{}, err
	}
	return guestapi.Empty{}, bp.closeStdin()
}

func (g *procRegistry) handleSignal(_ *http.Request, req *guestapi.ProcSignalRequest) (guestapi.SignalResult, error) {
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

func (g *procRegistry) handleResize(_ *http.Request, req *guestapi.ProcResizeRequest) (guestapi.Empty, error) {
	bp, err := g.find(req.Ref)
	if err != nil {
		return guestapi.Empty{}, err
	}
	return guestapi.Empty{}, bp.resize(req.PTYSize)
}

// maxWait bounds one wait; callers loop for longer.
const maxWait = time.Hour

func (g *procRegistry) handleWait(r *http.Request, req *guestapi.ProcWaitRequest) (guestapi.ProcessInfo, error) {
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
