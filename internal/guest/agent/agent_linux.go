//go:build linux

package agent

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/guest/browser"
	"github.com/paddockhq/paddock/internal/guest/code"
	"github.com/paddockhq/paddock/internal/guest/files"
	"github.com/paddockhq/paddock/internal/guest/process"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/harden"
)

// Inherited descriptors (see guestapi's package doc).
const (
	setupFD  = 3
	listenFD = 4
)

// Agent serves one sandbox from inside it.
type Agent struct {
	cfg     guestapi.Config
	procs   *process.Table
	cg      *cgroup.Delegated
	shell   string
	started time.Time
	logged  atomic.Int64
	phases  []string // setup timings, reported in Ready
	net     guestNet // network changes at runtime (network_linux.go)
}

// Main is the guest's entry point; it returns the process exit code.
func Main() int {
	if isGVisorMode() {
		return mainGVisor() // gvisor_linux.go
	}
	mainAt := time.Now().UnixNano()
	// Keep the main thread for the main goroutine: the cgroup placement of
	// execs parks a thread it cannot move back, and a parked main thread
	// would pin an exec sub-group forever.
	goruntime.LockOSThread()
	// As PID 1 of its namespace, the agent receives only signals it has a
	// handler for. Catch and drop them all, so that `kill -SEGV 1` from a
	// workload cannot take the sandbox down; SIGCHLD is watched by the
	// reaper.
	swallowSignals()
	// Leaked descriptors (CVE-2024-21626 class): nothing the agent was
	// started with reaches a workload — its setup socket and listener
	// included (the process table sweeps again before each spawn).
	if err := harden.CloseOnExecAll(); err != nil {
		return fail(fmt.Errorf("close-on-exec sweep: %w", err))
	}

	cfg, dirs, err := readConfig()
	if err != nil {
		return fail(fmt.Errorf("read config: %w", err))
	}
	configAt := time.Now().UnixNano()
	a, err := start(cfg, dirs)
	if err != nil {
		return fail(err)
	}
	lf := os.NewFile(listenFD, "listener")
	ln, err := net.FileListener(lf)
	lf.Close()
	if err != nil {
		return fail(fmt.Errorf("listener: %w", err))
	}
	ready, _ := json.Marshal(guestapi.Ready{OK: true, Pid: os.Getpid(), LayerFD: dirs.layer,
		Phases: strings.Join(a.phases, " "), MainAt: mainAt, ConfigAt: configAt})
	if _, err := unix.Write(setupFD, ready); err != nil {
		return 1
	}
	unix.Close(setupFD)
	srv := &http.Server{Handler: a.routes(), IdleTimeout: 5 * time.Minute, ErrorLog: nil}
	err = srv.Serve(ln)
	fmt.Fprintf(os.Stderr, "paddock-guest: serve: %v\n", err)
	return 1
}

func start(cfg *guestapi.Config, dirs setupDirs) (*Agent, error) {
	if cfg.Version != guestapi.Version {
		return nil, fmt.Errorf("protocol version %d, want %d", cfg.Version, guestapi.Version)
	}
	t0 := time.Now()
	execDir, memDir, err := setupFS(cfg, dirs)
	unix.Close(dirs.mnt)
	if err != nil {
		unix.Close(dirs.layer)
		return nil, err
	}
	// The layer's descriptor stays open (close-on-exec, in a non-dumpable
	// process: no workload reaches it) for the host: a server started
	// after this one takes a copy (pidfd_getfd) to snapshot the layer,
	// which after pivot_root no path names any more. The host's own
	// descriptor dies with the server that created the sandbox.
	t1 := time.Now()
	applyImage(cfg.Image) // image_linux.go
	a := &Agent{cfg: *cfg, shell: "/bin/sh"}
	if execDir >= 0 || memDir >= 0 {
		a.cg = cgroup.NewDelegated(cgroup.Version(cfg.CgroupVersion), execDir, memDir)
	}
	var cg *cgroup.Delegated
	if execDir >= 0 {
		cg = a.cg
	}
	startProcs := func() (err error) {
		a.procs, err = process.NewTable(cg)
		return err
	}
	last := t1
	mark := func(name string) {
		now := time.Now()
		a.phases = append(a.phases, name+"="+now.Sub(last).Round(time.Microsecond).String())
		last = now
	}
	a.phases = append(a.phases, "fs="+t1.Sub(t0).Round(time.Microsecond).String())
	if err := lockDown(cfg, mark, startProcs, execDir, memDir); err != nil {
		return nil, err
	}
	a.started = time.Now()
	if _, err := os.Stat("/bin/bash"); err == nil {
		a.shell = "/bin/bash"
	}
	return a, nil
}

// logf writes to the guest's log file on the host (stderr), bounded so a
// misbehaving workload cannot fill the host's disk through the agent.
func (a *Agent) logf(format string, args ...any) {
	if a.logged.Add(1) > 10000 {
		return
	}
	fmt.Fprintf(os.Stderr, time.Now().UTC().Format(time.RFC3339)+" "+format+"\n", args...)
}

func (a *Agent) oomKills() int64 {
	if a.cg == nil {
		return -1
	}
	return a.cg.OOMKills()
}

// routes builds every service and serves its routes.
func (a *Agent) routes() *rpc.Mux {
	m := rpc.NewMux()
	m.Handle(guestapi.RouteHealth, rpc.Unary(guestapi.MaxHead, a.health))
	a.networkRoutes(m)
	files.New(a.logf).Register(m)
	procs := process.NewService(a.procs, process.Config{Hostname: a.cfg.Hostname, Shell: a.shell,
		SandboxEnv: a.sandboxEnv, OOMKills: a.oomKills, Logf: a.logf})
	procs.Register(m)
	browser.New(procs).Register(m)
	code.New(procs, a.logf, code.Options{}).Register(m)
	if isGVisorMode() {
		newPortRelay().register(m)
	}
	return m
}

// setupDirs are the descriptors that come with the Config.
type setupDirs struct{ mnt, layer int }

// maxConfig bounds the setup message (a CA bundle is its largest part).
const maxConfig = 16 << 20

func readConfig() (*guestapi.Config, setupDirs, error) {
	// Peek at the length first: a large buffer allocated up front costs
	// milliseconds of page faults on every sandbox start.
	var probe [1]byte
	size, _, err := unix.Recvfrom(setupFD, probe[:], unix.MSG_PEEK|unix.MSG_TRUNC)
	if err != nil {
		return nil, setupDirs{}, err
	}
	if size <= 0 || size > maxConfig {
		return nil, setupDirs{}, fmt.Errorf("setup message of %d bytes", size)
	}
	buf := make([]byte, size)
	oob := make([]byte, unix.CmsgSpace(2*4))
	n, oobn, _, _, err := unix.Recvmsg(setupFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, setupDirs{}, err
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for i := range msgs {
			if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if len(fds) != 2 {
		return nil, setupDirs{}, fmt.Errorf("want 2 setup descriptors, got %d", len(fds))
	}
	var cfg guestapi.Config
	if err := json.Unmarshal(buf[:n], &cfg); err != nil {
		return nil, setupDirs{}, err
	}
	return &cfg, setupDirs{mnt: fds[0], layer: fds[1]}, nil
}

// fail reports a setup error to the host, which shows it in its log.
func fail(err error) int {
	b, _ := json.Marshal(guestapi.Ready{OK: false, Error: err.Error()})
	_, _ = unix.Write(setupFD, b)
	fmt.Fprintf(os.Stderr, "paddock-guest: %v\n", err)
	return 1
}

// swallowSignals catches and drops the signals that would otherwise kill
// the agent when a workload sends them: those the Go runtime turns into an
// exit (HUP, INT, TERM), a crash (QUIT, ILL, TRAP, ABRT, STKFLT, SYS) or a
// panic (BUS, FPE, SEGV sent by kill). Every other signal is either dropped
// by the runtime's handler or left at SIG_DFL, which the kernel never
// delivers to a namespace's init. Not signal.Ignore: an ignored disposition
// survives fork and exec, and every workload would then ignore SIGTERM;
// a caught one is reset to the default in the child. (Catching all 64
// costs ~2 ms per sandbox start; these twelve, ~0.3 ms.)
func swallowSignals() {
	sigs := []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGILL,
		syscall.SIGTRAP, syscall.SIGABRT, syscall.SIGSTKFLT, syscall.SIGSYS, syscall.SIGBUS, syscall.SIGFPE,
		syscall.SIGSEGV}
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, sigs...)
	go func() {
		for range ch {
		}
	}()
}
