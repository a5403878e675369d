//go:build linux

package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/process"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

const (
	browserLogBytes   = 32 << 10 // output kept for error reports
	browserTunnels    = 64       // DevTools connections at once
	crashWindow       = time.Minute
	crashLimit        = 5 // crashes within crashWindow before giving up
	browserStopWait   = 5 * time.Second
	defaultStartWait  = 30 * time.Second
	devToolsPollEvery = 5 * time.Millisecond
	tunnelDialTimeout = 5 * time.Second
)

// Supervisor supervises the browser. Lock order: mu, then an instance's
// logMu.
type Supervisor struct {
	svc     *process.Service
	tunnels rpc.Slots

	mu       sync.Mutex
	req      *guestapi.BrowserStartRequest
	want     bool // keep it running: started and not stopped
	cur      *browserInst
	launches int
	restarts int
	crashes  []time.Time
	lastExit string
	oomKills int
	failErr  string
	failLog  string
	relaunch *time.Timer
	changed  chan struct{} // closed at every state change
}

// browserInst is one launch of the browser.
type browserInst struct {
	n        int
	p        *process.Proc
	started  time.Time
	ready    bool
	port     int
	wsPath   string
	startMs  float64
	shmSmall bool
	stopping bool // killed on purpose: its exit is no crash
	oomAt    int64
	exited   chan struct{}

	logMu sync.Mutex
	log   *process.Ring
}

// maxBrowserHead bounds a start request (arguments and preferences).
const maxBrowserHead = 1 << 20

// New returns the supervisor of a browser spawned by svc.
func New(svc *process.Service) *Supervisor {
	return &Supervisor{svc: svc, tunnels: rpc.NewSlots(browserTunnels), changed: make(chan struct{})}
}

// Register serves the browser routes on m.
func (b *Supervisor) Register(m *rpc.Mux) {
	m.Handle(guestapi.RouteBrowserStart, rpc.Unary(maxBrowserHead, b.handleStart))
	m.Handle(guestapi.RouteBrowserStatus, rpc.Unary(guestapi.MaxHead, b.handleInfo))
	m.Handle(guestapi.RouteBrowserStop, rpc.Unary(guestapi.MaxHead, b.handleStop))
	m.Handle(guestapi.RouteBrowserDevTools, b.handleDevTools)
}

// notifyLocked wakes everyone waiting for a state change.
func (b *Supervisor) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *Supervisor) infoLocked() guestapi.BrowserInfo {
	in := guestapi.BrowserInfo{State: guestapi.BrowserStopped, Instance: b.launches, Restarts: b.restarts,
		LastExit: b.lastExit, OOMKills: b.oomKills}
	switch {
	case b.cur != nil && b.cur.ready:
		in.State, in.Pid, in.Port, in.WSPath = guestapi.BrowserRunning, b.cur.p.Pid, b.cur.port, b.cur.wsPath
		in.StartedAt, in.StartMs, in.ShmSmall = b.cur.started, b.cur.startMs, b.cur.shmSmall
	case b.cur != nil:
		in.State, in.Pid, in.StartedAt = guestapi.BrowserStarting, b.cur.p.Pid, b.cur.started
	case b.failErr != "":
		in.State, in.Error, in.LogTail = guestapi.BrowserFailed, b.failErr, b.failLog
	case b.want:
		in.State = guestapi.BrowserStarting // between a crash and its relaunch
	}
	return in
}

// browserUser is the user the browser runs as: "user" unless asked.
func browserUser(name string) string {
	if name == "" {
		return guestapi.UserUser
	}
	return name
}

func validStart(req *guestapi.BrowserStartRequest) error {
	clean := func(p string) bool { return path.IsAbs(p) && path.Clean(p) == p && p != "/" && len(p) < 4096 }
	switch {
	case !clean(req.Path):
		return errs.Invalid("browser path must be a clean absolute path")
	case !clean(req.ProfileDir):
		return errs.Invalid("browser profile_dir must be a clean absolute path")
	case req.DownloadDir != "" && !clean(req.DownloadDir):
		return errs.Invalid("browser download_dir must be a clean absolute path")
	case len(req.Args) > guestapi.MaxBrowserArgs:
		return errs.Invalid("at most %d browser arguments", guestapi.MaxBrowserArgs)
	case len(req.Preferences) > guestapi.MaxBrowserPrefBytes || (req.Preferences != "" && !json.Valid([]byte(req.Preferences))):
		return errs.Invalid("browser preferences must be JSON under %d bytes", guestapi.MaxBrowserPrefBytes)
	case req.TimeoutMs < 0 || time.Duration(req.TimeoutMs)*time.Millisecond > guestapi.MaxBrowserStart:
		return errs.Invalid("browser start timeout must be 0..%s", guestapi.MaxBrowserStart)
	}
	n := 0
	for _, a := range append(append([]string{}, req.Args...), req.SmallShmArg) {
		n += len(a)
		if strings.ContainsRune(a, 0) {
			return errs.Invalid("browser arguments must not contain NUL bytes")
		}
	}
	if n > guestapi.MaxBrowserArgBytes {
		return errs.Invalid("browser arguments exceed %d bytes", guestapi.MaxBrowserArgBytes)
	}
	for k, v := range req.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return errs.Invalid("invalid browser environment variable %q", rpc.Clip(k))
		}
	}
	if _, err := user.Lookup(browserUser(req.User)); err != nil {
		return err
	}
	return nil
}

// start makes the browser run with req and waits until its DevTools
// listen, it fails, or ctx ends.
func (b *Supervisor) start(ctx context.Context, req guestapi.BrowserStartRequest) (guestapi.BrowserInfo, error) {
	if err := validStart(&req); err != nil {
		return guestapi.BrowserInfo{}, err
	}
	wait := defaultStartWait
	if req.TimeoutMs > 0 {
		wait = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	b.mu.Lock()
	if b.cur != nil && b.req != nil && !reflect.DeepEqual(*b.req, req) {
		// Other arguments: this instance is not what is asked for.
		inst := b.cur
		b.want = false
		b.killLocked(inst)
		b.mu.Unlock()
		select {
		case <-inst.exited:
		case <-time.After(browserStopWait):
		}
		b.mu.Lock()
	}
	b.req = &req
	pending := b.want && b.relaunch != nil // a crash's relaunch is due: let it come
	b.want = true
	if b.cur == nil && !pending {
		// Stopped, or failed: a start asks for a fresh try.
		b.failErr, b.failLog, b.crashes = "", "", nil
		if err := b.launchLocked(); err != nil {
			b.want = false
			b.mu.Unlock()
			return guestapi.BrowserInfo{}, err
		}
	}
	for {
		info := b.infoLocked()
		ch := b.changed
		b.mu.Unlock()
		switch info.State {
		case guestapi.BrowserRunning:
			return info, nil
		case guestapi.BrowserFailed:
			return info, errs.New(errs.CodeUnavailable, "the browser failed: %s%s", info.Error, tailNote(info.LogTail))
		case guestapi.BrowserStopped:
			return info, errs.New(errs.CodeConflict, "the browser was stopped while it started")
		}
		select {
		case <-ch:
		case <-deadline.C:
			return info, errs.New(errs.CodeTimeout, "the browser did not open DevTools within %s", wait)
		case <-ctx.Done():
			return info, ctx.Err()
		}
		b.mu.Lock()
	}
}

func tailNote(log string) string {
	if log == "" {
		return ""
	}
	return "; its last output: " + log
}

// launchLocked starts an instance with b.req.
func (b *Supervisor) launchLocked() error {
	req := *b.req
	id, err := user.Lookup(browserUser(req.User))
	if err != nil {
		return err
	}
	if err := prepareProfile(req, id); err != nil {
		return err
	}
	args := append([]string{req.Path}, req.Args...)
	shmSmall := false
	if req.SmallShmArg != "" && req.ShmMinBytes > 0 {
		var st unix.Statfs_t
		if unix.Statfs("/dev/shm", &st) != nil || int64(st.Blocks)*st.Bsize < req.ShmMinBytes {
			args = append(args, req.SmallShmArg)
			shmSmall = true
		}
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "open /dev/null")
	}
	defer devnull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "pipe")
	}
	env, _ := b.svc.Env(id, req.ProfileDir, req.Env, false)
	inst := &browserInst{n: b.launches + 1, shmSmall: shmSmall, exited: make(chan struct{}), log: process.NewRing(browserLogBytes),
		oomAt: b.svc.OOMKills()}
	p, err := b.svc.Spawn(process.Spec{Path: req.Path, Argv: args, Env: env, Dir: req.ProfileDir,
		Files: []*os.File{devnull, w, w}, UID: id.UID, GID: id.GID, PidFD: true})
	w.Close()
	if err != nil {
		r.Close()
		b.svc.Logf("browser: start %s: %v", req.Path, err)
		return process.StartErr(req.Path, err)
	}
	inst.p, inst.started = p, time.Now()
	b.launches++
	b.cur = inst
	b.notifyLocked()
	b.svc.Logf("browser: instance %d started, pid %d", inst.n, p.Pid)
	go inst.pump(r)
	go b.awaitDevTools(inst, filepath.Join(req.ProfileDir, "DevToolsActivePort"))
	go b.supervise(inst)
	return nil
}

// prepareProfile creates the profile and download directories (owned by
// the browser's user), writes the first preferences, and removes what a
// killed instance left that would stop the next one: its DevTools port
// file (stale, it would point at a dead port) and the profile lock
// (a recycled pid in it makes Chromium believe the profile is in use).
func prepareProfile(req guestapi.BrowserStartRequest, id user.ID) error {
	for _, d := range []struct {
		p    string
		mode os.FileMode
	}{{req.ProfileDir, 0o700}, {req.DownloadDir, 0o755}} {
		if d.p == "" {
			continue
		}
		if err := mkdirOwned(d.p, d.mode, id); err != nil {
			return errs.Wrap(errs.CodeInternal, err, "cannot create %s", d.p)
		}
	}
	for _, f := range []string{"DevToolsActivePort", "SingletonLock", "SingletonSocket", "SingletonCookie"} {
		if err := os.Remove(filepath.Join(req.ProfileDir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return errs.Wrap(errs.CodeInternal, err, "cannot clear the browser profile")
		}
	}
	if req.Preferences == "" {
		return nil
	}
	def := filepath.Join(req.ProfileDir, "Default")
	if err := mkdirOwned(def, 0o700, id); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot create %s", def)
	}
	prefs := filepath.Join(def, "Preferences")
	f, err := os.OpenFile(prefs, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil // the profile's own, from an earlier instance
	}
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot write the browser preferences")
	}
	_, werr := f.WriteString(req.Preferences)
	_ = f.Chown(int(id.UID), int(id.GID))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return errs.Wrap(errs.CodeInternal, werr, "cannot write the browser preferences")
	}
	return nil
}

// mkdirOwned creates dir (and missing parents) for id. Existing
// directories are left as they are; a symlink in their place is refused
// (a workload could point the profile at a file it wants the agent to
// chown — the classic symlink race of privileged helpers).
func mkdirOwned(dir string, mode os.FileMode, id user.ID) error {
	st, err := os.Lstat(dir)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%s exists and is not a directory", dir)
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := mkdirOwned(filepath.Dir(dir), 0o755, id); err != nil {
		return err
	}
	if err := os.Mkdir(dir, mode); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchown(fd, int(id.UID), int(id.GID))
}

// pump keeps the browser's output (its last bytes, for error reports).
func (inst *browserInst) pump(r *os.File) {
	defer r.Close()
	buf := make([]byte, 16<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			inst.logMu.Lock()
			inst.log.Write(buf[:n])
			inst.logMu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// tail returns the last lines of the browser's output.
func (inst *browserInst) tail(max int) string {
	inst.logMu.Lock()
	defer inst.logMu.Unlock()
	n := inst.log.Next() - inst.log.Oldest()
	if n > int64(max) {
		n = int64(max)
	}
	buf := make([]byte, n)
	inst.log.ReadAt(inst.log.Next()-n, buf)
	s := strings.ToValidUTF8(string(buf), "?")
	if i := strings.IndexByte(s, '\n'); i >= 0 && n == int64(max) {
		s = s[i+1:] // a whole first line
	}
	return strings.TrimSpace(s)
}

// awaitDevTools waits for the DevTools port file of inst.
func (b *Supervisor) awaitDevTools(inst *browserInst, portFile string) {
	t := time.NewTicker(devToolsPollEvery)
	defer t.Stop()
	for {
		select {
		case <-inst.exited:
			return
		case <-t.C:
		}
		data, err := os.ReadFile(portFile)
		if err != nil {
			continue
		}
		port, wsPath, err := guestapi.ParseDevToolsActivePort(data)
		if err != nil {
			continue // written in two steps; or not Chromium's
		}
		b.mu.Lock()
		if b.cur == inst && !inst.ready {
			inst.ready, inst.port, inst.wsPath = true, port, wsPath
			inst.startMs = float64(time.Since(inst.started).Microseconds()) / 1000
			b.notifyLocked()
			b.svc.Logf("browser: instance %d listening on port %d after %.1f ms", inst.n, port, inst.startMs)
		}
		b.mu.Unlock()
		return
	}
}

// supervise waits for inst to exit, kills what it left (renderers, the
// zygote) and restarts it unless it was stopped or crashes in a loop.
func (b *Supervisor) supervise(inst *browserInst) {
	ws := <-inst.p.Exit()
	inst.p.KillTree()
	inst.p.Cleanup()
	close(inst.exited)
	how := exitDescription(ws)
	oom := ws.Signaled() && ws.Signal() == syscall.SIGKILL && inst.oomAt >= 0 && b.svc.OOMKills() > inst.oomAt
	if oom {
		how += " (out of memory: the sandbox's memory limit)"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur == inst {
		b.cur = nil
	}
	b.lastExit = how
	if oom {
		b.oomKills++
	}
	b.svc.Logf("browser: instance %d exited: %s", inst.n, how)
	if inst.stopping || !b.want {
		b.notifyLocked()
		return
	}
	now := time.Now()
	kept := b.crashes[:0]
	for _, c := range b.crashes {
		if now.Sub(c) < crashWindow {
			kept = append(kept, c)
		}
	}
	b.crashes = append(kept, now)
	if !inst.ready || len(b.crashes) >= crashLimit {
		b.want = false
		if inst.ready {
			b.failErr = fmt.Sprintf("it crashed %d times within %s, last: %s", len(b.crashes), crashWindow, how)
		} else {
			b.failErr = "it exited before DevTools listened (" + how + ")"
		}
		b.failLog = inst.tail(2048)
		b.notifyLocked()
		return
	}
	backoff := time.Duration(100<<(len(b.crashes)-1)) * time.Millisecond
	b.notifyLocked()
	b.relaunch = time.AfterFunc(backoff, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.relaunch = nil
		if !b.want || b.cur != nil || b.req == nil {
			return
		}
		b.restarts++
		if err := b.launchLocked(); err != nil {
			b.want = false
			b.failErr = "it could not be restarted: " + errs.Public(err)
			b.notifyLocked()
		}
	})
}

func exitDescription(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + process.ExitSignal(ws)
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}

// killLocked kills inst's whole tree; its supervisor records the exit.
func (b *Supervisor) killLocked(inst *browserInst) {
	inst.stopping = true
	inst.p.KillTree()
}

func (b *Supervisor) stop() guestapi.BrowserInfo {
	b.mu.Lock()
	b.want = false
	if b.relaunch != nil {
		b.relaunch.Stop()
		b.relaunch = nil
	}
	inst := b.cur
	if inst != nil {
		b.killLocked(inst)
	}
	b.failErr, b.failLog = "", ""
	b.notifyLocked()
	b.mu.Unlock()
	if inst != nil {
		select {
		case <-inst.exited:
		case <-time.After(browserStopWait):
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.infoLocked()
}

// Handlers.

func (b *Supervisor) handleStart(r *http.Request, req *guestapi.BrowserStartRequest) (guestapi.BrowserInfo, error) {
	return b.start(r.Context(), *req)
}

func (b *Supervisor) handleInfo(*http.Request, *guestapi.Empty) (guestapi.BrowserInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.infoLocked(), nil
}

func (b *Supervisor) handleStop(*http.Request, *guestapi.Empty) (guestapi.BrowserInfo, error) {
	return b.stop(), nil
}

// handleDevTools relays the connection to the browser's DevTools port,
// once upgraded. An instance in the head refuses another instance than it
// (the host's session belongs to one).
func (b *Supervisor) handleDevTools(w http.ResponseWriter, r *http.Request) {
	if !rpc.Upgradable(r, guestapi.DevToolsProtocol) {
		rpc.WriteError(w, errs.Invalid("DevTools needs Connection: Upgrade and Upgrade: %s", guestapi.DevToolsProtocol))
		return
	}
	var req guestapi.DevToolsRequest
	if err := guestapi.ReadHead(r.Body, guestapi.MaxHead, &req); err != nil {
		rpc.WriteError(w, err)
		return
	}
	if req.Instance < 0 {
		rpc.WriteError(w, errs.Invalid("instance must be a positive number"))
		return
	}
	want := req.Instance
	b.mu.Lock()
	inst := b.cur
	b.mu.Unlock()
	switch {
	case inst == nil || !inst.ready:
		rpc.WriteError(w, errs.New(errs.CodeConflict, "the browser is not running"))
		return
	case want != 0 && inst.n != want:
		rpc.WriteError(w, errs.New(errs.CodeConflict, "the browser restarted (instance %d, not %d)", inst.n, want))
		return
	}
	if !b.tunnels.TryAcquire() {
		rpc.WriteError(w, errs.New(errs.CodeLimit, "%d DevTools connections are open (the limit)", browserTunnels))
		return
	}
	defer b.tunnels.Release()
	up, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(inst.port)), tunnelDialTimeout)
	if err != nil {
		rpc.WriteError(w, errs.Wrap(errs.CodeUnavailable, err, "the browser's DevTools port does not answer"))
		return
	}
	defer up.Close()
	conn, brw, err := rpc.Upgrade(w, guestapi.DevToolsProtocol)
	if err != nil {
		rpc.WriteError(w, err)
		return
	}
	defer conn.Close()
	relay(conn, brw.Reader, up)
}

// relay copies both ways until both directions end; the end of one
// direction is passed on as a half-close.
func relay(down net.Conn, downR io.Reader, up net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	half := func(c net.Conn) {
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	go func() {
		defer wg.Done()
		_, _ = io.Copy(up, downR)
		half(up)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(down, up)
		half(down)
	}()
	wg.Wait()
}
