//go:build linux

package guest

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// identity is a user a workload may run as.
type identity struct {
	Uid, Gid uint32
	Home     string
	Name     string
}

var identities = map[string]identity{
	guestapi.UserRoot: {0, 0, "/root", "root"},
	guestapi.UserUser: {1000, 1000, "/home/user", "user"},
}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// buildEnv layers: defaults, then the sandbox's, then the request's.
func (a *Agent) buildEnv(id identity, cwd string, extra map[string]string, tty bool) (env []string, pathVar string) {
	m := map[string]string{
		"PATH":     defaultPath,
		"HOME":     id.Home,
		"USER":     id.Name,
		"LOGNAME":  id.Name,
		"SHELL":    a.shell,
		"LANG":     "C.UTF-8",
		"PWD":      cwd,
		"HOSTNAME": a.cfg.Hostname,
	}
	if tty {
		m["TERM"] = "xterm-256color"
	}
	for k, v := range a.sandboxEnv() {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	env = make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	return env, m["PATH"]
}

// resolveCwd makes cwd absolute (relative to /workspace) and checks it is a
// directory.
func resolveCwd(cwd string) (string, error) {
	if cwd == "" {
		cwd = "/workspace"
	}
	if !path.IsAbs(cwd) {
		cwd = path.Join("/workspace", cwd)
	}
	cwd = path.Clean(cwd)
	fd, err := openWorkDir(cwd)
	if err != nil {
		return "", errs.Invalid("working directory %q does not exist in the sandbox", cwd)
	}
	unix.Close(fd)
	return cwd, nil
}

// openWorkDir opens directory p for use as a working directory, refusing
// magic links. /proc/self/fd/N names a descriptor of the agent, which may
// be a host directory (its delegated cgroups); a child that chdir'd there
// before execve — when the agent's close-on-exec descriptors are still
// open in it — would work outside its root: the runc escape
// CVE-2024-21626. spawn hands the child this verified descriptor rather
// than the path, so nothing can be swapped in between.
func openWorkDir(p string) (int, error) {
	return openat2(unix.AT_FDCWD, p, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_MAGICLINKS,
	})
}

// lookPath finds name like execvp(3) would, with the command's own PATH.
func lookPath(name, pathVar, cwd string) (string, error) {
	if name == "" {
		return "", errs.Invalid("empty command")
	}
	check := func(p string) error {
		// No magic links here either (see openWorkDir): an executable is a
		// file of the sandbox, never one reached through the agent's
		// descriptors.
		fd, err := openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			return err
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR || st.Mode&0o111 == 0 {
			return fs.ErrPermission
		}
		return nil
	}
	if strings.Contains(name, "/") {
		p := name
		if !path.IsAbs(p) {
			p = path.Join(cwd, p)
		}
		if err := check(p); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return "", errs.New(errs.CodeCommandNotFound, "%q is not an executable file", name)
			}
			return "", errs.New(errs.CodeCommandNotFound, "command %q not found", name)
		}
		return p, nil
	}
	for _, dir := range strings.Split(pathVar, ":") {
		if dir == "" {
			dir = "."
		}
		p := path.Join(dir, name)
		if !path.IsAbs(p) {
			p = path.Join(cwd, p)
		}
		if check(p) == nil {
			return p, nil
		}
	}
	return "", errs.New(errs.CodeCommandNotFound, "command %q not found in PATH", name)
}

// frameWriter serialises frames from several goroutines onto one response.
type frameWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	fl  http.Flusher
	err error
}

func (f *frameWriter) write(typ byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if f.err = guestapi.WriteFrame(f.w, typ, p); f.err == nil {
		if f.err = f.w.Flush(); f.err == nil && f.fl != nil {
			f.fl.Flush()
		}
	}
	return f.err
}

// capped forwards up to max bytes of one stream (0: all) and counts the rest.
type capped struct {
	typ       byte
	out       *frameWriter
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
				_ = c.out.write(c.typ, chunk)
			}
		}
		if err != nil {
			return
		}
	}
}

func (a *Agent) handleExec(w http.ResponseWriter, r *http.Request) {
	if !a.execSlots.TryAcquire() {
		writeError(w, errs.New(errs.CodeLimit, "too many concurrent commands in this sandbox"))
		return
	}
	defer a.execSlots.Release()

	br := bufio.NewReaderSize(r.Body, 32<<10)
	dec := json.NewDecoder(br)
	var req guestapi.ExecRequest
	if err := dec.Decode(&req); err != nil {
		writeError(w, errs.Invalid("malformed exec request"))
		return
	}
	id, ok := identities[orDefault(req.User, guestapi.UserRoot)]
	if !ok {
		writeError(w, errs.Invalid("unknown user %q (use %q or %q)", req.User, guestapi.UserRoot, guestapi.UserUser))
		return
	}
	if len(req.Argv) == 0 {
		writeError(w, errs.Invalid("empty command"))
		return
	}
	cwd, err := resolveCwd(req.Cwd)
	if err != nil {
		writeError(w, err)
		return
	}
	env, pathVar := a.buildEnv(id, cwd, req.Env, false)
	bin, err := lookPath(req.Argv[0], pathVar, cwd)
	if err != nil {
		writeError(w, err)
		return
	}

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		writeError(w, errs.Wrap(errs.CodeInternal, err, "pipe"))
		return
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		writeError(w, errs.Wrap(errs.CodeInternal, err, "pipe"))
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		outR.Close()
		outW.Close()
		writeError(w, errs.Wrap(errs.CodeInternal, err, "pipe"))
		return
	}
	oomBefore := a.oomKills()
	start := time.Now()
	p, err := a.procs.spawn(spawnSpec{
		Path: bin, Argv: req.Argv, Env: env, Dir: cwd,
		Files: []*os.File{stdinR, outW, errW},
		Uid:   id.Uid, Gid: id.Gid,
	})
	stdinR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		stdinW.Close()
		outR.Close()
		errR.Close()
		a.logf("exec %q: %v", req.Argv[0], err)
		writeError(w, startErr(req.Argv[0], err))
		return
	}
	defer a.procs.recycle(p)

	if req.StdinStream {
		_ = http.NewResponseController(w).EnableFullDuplex()
	}
	w.Header().Set("Content-Type", "application/x-paddock-frames")
	w.WriteHeader(http.StatusOK)
	fw := &frameWriter{w: bufio.NewWriterSize(w, 64<<10)}
	fw.fl, _ = w.(http.Flusher)
	started, _ := json.Marshal(map[string]int{"pid": p.Pid})
	_ = fw.write(guestapi.FrameStarted, started)

	// Standard input.
	go func() {
		defer stdinW.Close()
		if req.StdinStream {
			// The decoder may have read past the JSON head: those bytes
			// are the start of stdin.
			_, _ = io.Copy(stdinW, io.MultiReader(dec.Buffered(), br))
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
		Signal:          signalName(ws),
		TimedOut:        timedOut,
		DurationMs:      float64(time.Since(start).Microseconds()) / 1000,
		StdoutBytes:     so.total,
		StderrBytes:     se.total,
		StdoutTruncated: so.truncated,
		StderrTruncated: se.truncated,
		Pid:             p.Pid,
	}
	if ws.Signaled() && ws.Signal() == syscall.SIGKILL && !timedOut && oomBefore >= 0 && a.oomKills() > oomBefore {
		res.OOMKilled = true
	}
	b, _ := json.Marshal(res)
	_ = fw.write(guestapi.FrameExit, b)
}

// startErr words a failed spawn for the caller.
func startErr(name string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, syscall.ENOENT):
		return errs.Wrap(errs.CodeCommandNotFound, err, "cannot start %q: no such file or directory (or its interpreter is missing)", name)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return errs.Wrap(errs.CodeCommandNotFound, err, "cannot start %q: permission denied", name)
	case errors.Is(err, syscall.ENOEXEC):
		return errs.Wrap(errs.CodeCommandNotFound, err, "cannot start %q: not an executable format", name)
	case errors.Is(err, syscall.E2BIG):
		return errs.Wrap(errs.CodeInvalid, err, "cannot start %q: argument list too long", name)
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.ENOMEM):
		return errs.Wrap(errs.CodeLimit, err, "cannot start %q: the sandbox's process or memory limit is reached", name)
	}
	return errs.Wrap(errs.CodeInternal, err, "cannot start %q", name)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
