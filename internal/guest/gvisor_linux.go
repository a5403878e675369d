//go:build linux

package guest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/harden"
)

// The agent inside gVisor (see guestapi.GVisorBoot for the channels). runsc
// built the root filesystem, /proc, /dev, the hostname and the loopback
// interface from the OCI spec; gVisor's kernel is the isolation boundary,
// so what the native setup adds on top of namespaces (Landlock, a cgroup
// namespace, the nested-userns limit) is not needed, and gVisor does not
// implement most of it.

// gvisorCgroupDir is where the agent mounts gVisor's own pids controller
// (the host's counts only the sandbox's host threads, not its processes).
const gvisorCgroupDir = guestapi.GVisorDir + "/cg"

// flatExecGroups puts every exec in the workloads' group itself rather than
// in a sub-group of its own (proc_linux.go). gVisor's pids controller is
// not hierarchical — a limit applies to the tasks of its own group only —
// so inside gVisor the sandbox-wide process limit holds only if all
// workloads share one group. Killing an exec then kills its session.
var flatExecGroups = false

// prepareExecThread readies the spawner thread (proc_linux.go).
var prepareExecThread = harden.PrepareExecThread

// gvisorPrepareExecThread is harden.PrepareExecThread without securebits,
// of which gVisor implements only keep-caps (it answers EPERM to the
// rest): the thread's bounding set is emptied and its ambient set cleared,
// so whatever it execs — as uid 0, setuid, or with file capabilities —
// gets no capability (the bounding set caps every set execve computes;
// gVisor applies it as Linux does).
func gvisorPrepareExecThread() error {
	for c := 0; c < 64; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL {
			break // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("read bounding set bit %d: %w", c, err)
		}
		if in == 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("drop capability %d from bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return nil
}

// isGVisorMode reports whether the agent was started by the gVisor runtime.
func isGVisorMode() bool { return len(os.Args) > 1 && os.Args[1] == guestapi.GVisorArg }

// mainGVisor is Main inside gVisor.
func mainGVisor() int {
	goruntime.LockOSThread()
	swallowSignals()
	prepareExecThread = gvisorPrepareExecThread
	openat2 = emulatedOpenat2 // gVisor has no openat2(2)
	flatExecGroups = true
	ctl, err := unix.Open(guestapi.GVisorCtlDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return failGVisor(fmt.Errorf("control directory: %w", err))
	}
	boot, err := guestapi.ReadGVisorBoot(filepath.Join(guestapi.GVisorCtlDir, guestapi.GVisorBootFile))
	if err != nil {
		return failGVisor(fmt.Errorf("read boot file: %w", err))
	}
	a, err := startGVisor(boot)
	if err != nil {
		return failGVisor(err)
	}
	// The agent reaches the host's socket through its descriptor on the
	// control directory: the directory itself is hidden below (the
	// sandbox's code must not dial the host, nor read the boot file).
	ln := newDialListener("/proc/self/fd/"+strconv.Itoa(ctl)+"/"+guestapi.GVisorSocket, boot.Token)
	if err := hideGVisorDir(); err != nil {
		return failGVisor(fmt.Errorf("hide %s: %w", guestapi.GVisorDir, err))
	}
	if err := lockDownGVisor(a); err != nil {
		return failGVisor(err)
	}
	srv := &http.Server{Handler: a.routes(), IdleTimeout: 5 * time.Minute, ErrorLog: nil}
	err = srv.Serve(ln)
	fmt.Fprintf(os.Stderr, "paddock-guest: serve: %v\n", err)
	return 1
}

// failGVisor reports a setup error on stderr, which runsc hands to the
// sandbox's log on the host (the host reads its last line).
func failGVisor(err error) int {
	fmt.Fprintf(os.Stderr, "paddock-guest: setup failed: %v\n", err)
	return 1
}

func startGVisor(boot *guestapi.GVisorBoot) (*Agent, error) {
	cfg := &boot.Config
	a := &Agent{cfg: *cfg, execSlots: make(semaphore, 256), shell: "/bin/sh"}
	t0 := time.Now()
	if err := gvisorRootFS(cfg); err != nil {
		return nil, err
	}
	a.phases = append(a.phases, "fs="+time.Since(t0).Round(time.Microsecond).String())
	execDir, err := gvisorPidsGroup(boot.Pids)
	if err != nil {
		return nil, fmt.Errorf("pids group: %w", err)
	}
	a.cg = cgroup.NewDelegated(cgroup.V1, execDir, -1)
	if a.procs, err = newProcTable(a.cg); err != nil {
		return nil, fmt.Errorf("spawner: %w", err)
	}
	if err := unix.Chdir("/workspace"); err != nil {
		return nil, err
	}
	a.started = time.Now()
	if _, err := os.Stat("/bin/bash"); err == nil {
		a.shell = "/bin/bash"
	}
	return a, nil
}

// gvisorRootFS makes the directories and /etc files every sandbox has (the
// root filesystem is the template with the sandbox's writable layer over
// it, as on native).
func gvisorRootFS(cfg *guestapi.Config) error {
	for _, d := range []struct {
		p    string
		mode os.FileMode
		uid  int
	}{
		{"tmp", 0o1777, 0}, {"workspace", 0o777, 0}, {"root", 0o700, 0}, {"home", 0o755, 0},
		{"home/user", 0o755, 1000}, {"etc", 0o755, 0}, {"var/tmp", 0o1777, 0}, {"run", 0o755, 0},
	} {
		p := "/" + d.p
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := os.MkdirAll(p, d.mode); err != nil {
			return fmt.Errorf("mkdir %s: %w", p, err)
		}
		_ = os.Chmod(p, d.mode)
		_ = os.Chown(p, d.uid, d.uid)
	}
	etc := map[string]string{
		"etc/hostname":    cfg.Hostname + "\n",
		"etc/hosts":       cfg.Hosts,
		"etc/resolv.conf": cfg.ResolvConf,
	}
	for p, content := range cfg.ExtraFiles {
		etc[path.Clean("/" + p)[1:]] = content
	}
	for p, content := range etc {
		full := "/" + p
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", full, err)
		}
		_ = os.Remove(full) // may be a symlink in the template (resolv.conf)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", full, err)
		}
	}
	return nil
}

// gvisorPidsGroup mounts gVisor's pids controller, makes the workloads'
// group with the sandbox's process limit and returns its directory fd (the
// exec sub-groups are made in it, as in a native sandbox's delegated
// group). A fork bomb then meets EAGAIN inside the sandbox instead of
// exhausting the sentry's host threads.
func gvisorPidsGroup(limit int64) (int, error) {
	if err := os.MkdirAll(gvisorCgroupDir, 0o700); err != nil {
		return -1, err
	}
	if err := unix.Mount("paddock", gvisorCgroupDir, "cgroup", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "pids"); err != nil {
		return -1, fmt.Errorf("mount pids controller: %w", err)
	}
	w := filepath.Join(gvisorCgroupDir, "w")
	if err := os.Mkdir(w, 0o755); err != nil && !os.IsExist(err) {
		return -1, err
	}
	if limit > 0 {
		if err := os.WriteFile(filepath.Join(w, "pids.max"), []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
			return -1, fmt.Errorf("pids.max: %w", err)
		}
	}
	return unix.Open(w, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

// hideGVisorDir covers the agent's directory with an empty read-only
// tmpfs: the host's socket, the boot file and the pids controller stay
// reachable through the agent's descriptors only.
func hideGVisorDir() error {
	return unix.Mount("paddock", guestapi.GVisorDir, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
}

// lockDownGVisor is lockDown's part that applies under gVisor: the agent
// becomes non-dumpable (workloads of the same uid cannot read its memory or
// descriptors through /proc), sets no_new_privs, keeps only the
// capabilities it needs, and loads the same seccomp filter as natively
// (inside gVisor it is gVisor's kernel that enforces it: defence in depth
// for gVisor's own syscall implementations, e.g. its io_uring).
func lockDownGVisor(a *Agent) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("set non-dumpable: %w", err)
	}
	if err := harden.SetNoNewPrivs(); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := harden.LimitCaps(keepCaps); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	if err := harden.LoadSeccomp(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// dialListener is the agent's net.Listener inside gVisor: it dials the
// host's socket, presents the token, and hands each connection to the HTTP
// server, keeping spares idle connections open so that the host never
// waits for a dial. When the host is away (a server restart, a restore in
// progress) it keeps retrying.
type dialListener struct {
	addr  string
	hello []byte
	conns chan net.Conn
	need  chan struct{} // one token per spare to dial
	done  chan struct{}
	once  sync.Once
}

const (
	gvisorSpares   = 2
	gvisorRetryMin = 20 * time.Millisecond
	gvisorRetryMax = 500 * time.Millisecond
)

func newDialListener(addr, token string) *dialListener {
	l := &dialListener{addr: addr, hello: guestapi.Hello(token), conns: make(chan net.Conn),
		need: make(chan struct{}, 64), done: make(chan struct{})}
	for range gvisorSpares {
		l.need <- struct{}{}
	}
	go l.run()
	return l
}

func (l *dialListener) run() {
	delay := gvisorRetryMin
	for {
		select {
		case <-l.need:
		case <-l.done:
			return
		}
		for {
			c, err := l.dial()
			if err == nil {
				delay = gvisorRetryMin
				select {
				case l.conns <- c:
				case <-l.done:
					c.Close()
					return
				}
				break
			}
			select {
			case <-time.After(delay):
			case <-l.done:
				return
			}
			delay = min(delay*2, gvisorRetryMax)
		}
	}
}

func (l *dialListener) dial() (net.Conn, error) {
	c, err := net.DialTimeout("unix", l.addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(l.hello); err != nil {
		c.Close()
		return nil, err
	}
	return &spareConn{UnixConn: c.(*net.UnixConn), l: l}, nil
}

// replace asks for one more spare.
func (l *dialListener) replace() {
	select {
	case l.need <- struct{}{}:
	default:
	}
}

func (l *dialListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *dialListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *dialListener) Addr() net.Addr { return &net.UnixAddr{Name: l.addr, Net: "unix"} }

// spareConn is one of the agent's connections to the host. It asks for a
// replacement when the host first uses it (its first read returns) — data
// or not: a connection that ends unused (the host went away) is replaced
// too. While a read waits it checks every probeEvery that the host's end
// still exists: when gVisor saves a checkpoint of a sandbox that keeps
// running, it closes host-backed connections without waking their
// readers; only a probe (a peeking read: EOF once closed) notices, and a
// dead connection left open would make the next checkpoint fail.
type spareConn struct {
	*net.UnixConn
	l    *dialListener
	used atomic.Bool

	mu       sync.Mutex // orders the server's deadlines with the probe's
	deadline time.Time  // the read deadline the server asked for
}

const probeEvery = time.Second

func (c *spareConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	return c.UnixConn.SetReadDeadline(t)
}

func (c *spareConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	return c.UnixConn.SetDeadline(t)
}

func (c *spareConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		want := c.deadline
		tick := time.Now().Add(probeEvery)
		if !want.IsZero() && want.Before(tick) {
			tick = want
		}
		_ = c.UnixConn.SetReadDeadline(tick)
		c.mu.Unlock()
		n, err := c.UnixConn.Read(p)
		var ne net.Error
		timeout := errors.As(err, &ne) && ne.Timeout()
		c.mu.Lock()
		want = c.deadline
		c.mu.Unlock()
		if n > 0 || !timeout || (!want.IsZero() && !time.Now().Before(want)) {
			c.firstUse()
			return n, err
		}
		if !peerOpen(c.UnixConn) {
			c.firstUse()
			return 0, io.EOF
		}
	}
}

func (c *spareConn) firstUse() {
	if !c.used.Swap(true) {
		c.l.replace()
	}
}

// peerOpen reports whether the host's end of a connection is open: a peek
// that finds data (it arrived just after the read timed out) or nothing
// yet means open; end of stream or an error means gone.
func peerOpen(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	_ = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		open = err == unix.EAGAIN || (err == nil && n > 0)
		return true
	})
	return open
}
