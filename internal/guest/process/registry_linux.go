//go:build linux

package process

import (
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// registry keeps the sandbox's background processes: running ones, and
// exited ones for a while (bounded in count, age and buffer memory) so that
// their output and exit status can still be read. A process belongs to the
// sandbox, not to the request that started it: clients come and go.
type registry struct {
	s        *Service
	readers  rpc.Slots // output streams and attachments at once
	mu       sync.Mutex
	seq      int64
	all      []*bgProc // in start order
	reserved int64     // buffer capacity of every kept process
}

// bgProc is one background process. Lock order: registry.mu before
// bgProc.mu; inMu before mu.
type bgProc struct {
	id, tag   string
	argv      []string
	env       map[string]string
	cwd, user string
	started   time.Time
	reserve   int64 // buffer capacity counted in registry.reserved
	hasStdin  bool
	p         *Proc
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
	deadline time.Time     // zero: none
	timer    *time.Timer   // fires at the deadline
	timedOut bool          // the deadline killed it
}

type outStream struct {
	name  string
	frame byte
	ring  *Ring
}

// start validates req, then spawns the process with its pipes or terminal.
func (g *registry) start(req guestapi.ProcessStartRequest) (*bgProc, error) {
	id, err := user.Lookup(req.User)
	if err != nil {
		return nil, err
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
	if err := validTimeout(req.TimeoutMs); err != nil {
		return nil, err
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
		argv = []string{loginShell(id.Name, g.s.cfg.Shell), "-l"}
	}
	cwd, err := resolveCwd(req.Cwd)
	if err != nil {
		return nil, err
	}
	env, pathVar := g.s.Env(id, cwd, req.Env, req.PTY != nil)
	bin, err := lookPath(argv[0], pathVar, cwd)
	if err != nil {
		return nil, err
	}

	bp := &bgProc{tag: req.Tag, argv: argv, env: req.Env, cwd: cwd, user: id.Name, hasStdin: req.Stdin || req.PTY != nil,
		starting: true, changed: make(chan struct{}), final: make(chan struct{}), oomKills: g.s.OOMKills}
	if req.PTY != nil {
		sz := *req.PTY
		bp.size = &sz
		bp.streams = []*outStream{{name: guestapi.StreamPTY, frame: guestapi.FramePTY, ring: NewRing(int(bufSize))}}
	} else {
		bp.streams = []*outStream{
			{name: guestapi.StreamStdout, frame: guestapi.FrameStdout, ring: NewRing(int(bufSize))},
			{name: guestapi.StreamStderr, frame: guestapi.FrameStderr, ring: NewRing(int(bufSize))},
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
	if req.TimeoutMs > 0 {
		_ = bp.setDeadline(time.Duration(req.TimeoutMs) * time.Millisecond)
	}
	return bp, nil
}

// register claims a slot, the tag and buffer budget for bp before it runs,
// so concurrent starts cannot both pass the checks.
func (g *registry) register(bp *bgProc) error {
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

func (g *registry) unregister(bp *bgProc) {
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
func (g *registry) evictLocked(now time.Time, need int64) {
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
func (g *registry) spawn(bp *bgProc, bin string, env []string, id user.ID) error {
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
		master, slave, err := openPTY(id.UID, id.GID, *bp.size)
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
	p, err := g.s.Spawn(Spec{
		Path: bin, Argv: bp.argv, Env: env, Dir: bp.cwd, Files: files,
		UID: id.UID, GID: id.GID,
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
		g.s.Logf("process %q: %v", bp.argv[0], err)
		return StartErr(bp.argv[0], err)
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

// find resolves a reference; for a pid or tag a running process wins over
// exited ones, and the newest over older ones.
func (g *registry) find(s string) (*bgProc, error) {
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

func (g *registry) list() []guestapi.ProcessInfo {
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
